"""``parse_verdict``: a reviewer's answer -> :class:`Verdict` (``APPROVE``/``REJECT`` + findings).

Liberal in what it reads: a ``VERDICT: APPROVE`` line, ``**Verdict:** reject``, ``Verdict -
approved``, markdown lists or headings of ``BLOCKER``/``WARNING``/``SUGGESTION`` findings
with ``file:line``, or JSON (bare or in a fenced block) with ``verdict`` and ``findings``.
Strict in what it concludes: any BLOCKER, or three or more WARNINGs, is a REJECT whatever
the text says; an answer with no verdict, or with both, is a REJECT with a finding that
says so. Never an APPROVE by default.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

Severity = Literal["BLOCKER", "WARNING", "SUGGESTION"]
Decision = Literal["APPROVE", "REJECT"]

#: WARNINGs that make a verdict REJECT.
MAX_WARNINGS = 3

_VERDICT = re.compile(
    r"verdict\W{0,6}(?:is\W{0,3})?"
    r"(approved?|accepted?|lgtm|reject(?:ed)?|request(?:ing)?[ _-]changes|changes[ _-]requested)",
    re.IGNORECASE,
)
_BARE = re.compile(r"^\W{0,6}(APPROVED?|REJECT(?:ED)?)\W{0,6}$", re.MULTILINE)
_FINDING = re.compile(
    r"^[\s>*+\-#\d.)\[\]`|]*(BLOCKER|WARNING|SUGGESTION)S?\b[\]*`:)\s-]*(.*)$", re.IGNORECASE | re.MULTILINE
)
_LOCATION = re.compile(r"`?([\w./\\-]+\.[A-Za-z0-9]{1,8})(?::(\d+))?`?(?:\s*(?:,\s*)?line\s+(\d+))?")
_WORD = re.compile(r"\b(approv\w*|accept\w*|lgtm|reject\w*|request\w*[ _-]changes|changes[ _-]requested)", re.I)
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


class Finding(BaseModel):
    """One review finding (frozen)."""

    model_config = {"frozen": True}

    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f" {self.file}:{self.line}" if self.file and self.line else f" {self.file}" if self.file else ""
        return f"{self.severity}{where} — {self.message}"


class Verdict(BaseModel):
    """A parsed review (frozen).

    Attributes:
        decision: ``APPROVE`` or ``REJECT`` after the rules (BLOCKER / 3 WARNINGs).
        stated: What the reviewer wrote (``APPROVE``, ``REJECT``, or None when it said nothing
            parseable or both).
        findings: The findings, in the order written.
        overridden: The rules changed the stated verdict (an APPROVE with a BLOCKER).
    """

    model_config = {"frozen": True}

    decision: Decision
    stated: Decision | None = None
    findings: list[Finding] = Field(default_factory=list)
    overridden: bool = False

    @property
    def approved(self) -> bool:
        """Whether the decision is APPROVE."""
        return self.decision == "APPROVE"

    def count(self, severity: Severity) -> int:
        """How many findings have ``severity``."""
        return sum(1 for f in self.findings if f.severity == severity)


def _decision(word: str) -> Decision:
    return "APPROVE" if word.lower().startswith(("approv", "accept", "lgtm")) else "REJECT"


def _finding(severity: str, rest: str) -> Finding | None:
    rest = rest.strip().strip("*").strip()
    location = _LOCATION.match(rest) or _LOCATION.search(rest[:120])
    file = line = None
    if location is not None:
        file = location.group(1)
        number = location.group(2) or location.group(3)
        line = int(number) if number else None
        if location.start() == 0:
            rest = rest[location.end() :]
    message = rest.strip().lstrip(":-\u2014\u2013).,` ").strip()
    if not message and file is None:
        return None
    return Finding(severity=severity.upper(), message=message or "(no message)", file=file, line=line)  # type: ignore[arg-type]


def _from_json(text: str) -> tuple[Decision | None, list[Finding]] | None:
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    stripped = text.strip()
    if stripped.startswith("{"):
        candidates.insert(0, stripped)
    for candidate in candidates:
        try:
            data: Any = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(data, dict) or not ({"verdict", "decision"} & data.keys()):
            continue
        word = str(data.get("verdict") or data.get("decision") or "")
        stated = _decision(word) if _VERDICT.search(f"verdict {word}") else None
        findings = []
        for item in data.get("findings") or []:
            if isinstance(item, dict) and str(item.get("severity", "")).upper() in ("BLOCKER", "WARNING", "SUGGESTION"):
                line = item.get("line")
                findings.append(
                    Finding(
                        severity=str(item["severity"]).upper(),  # type: ignore[arg-type]
                        message=str(item.get("message") or "(no message)")[:2000],
                        file=str(item["file"]) if item.get("file") else None,
                        line=line if isinstance(line, int) and not isinstance(line, bool) else None,
                    )
                )
        return stated, findings
    return None


def _verdict_words(text: str) -> set[Decision]:
    words: set[Decision] = set()
    for match in _VERDICT.finditer(text):
        end = text.find("\n", match.start())
        line = text[match.start() : end if end >= 0 else len(text)]
        words |= {_decision(w) for w in _WORD.findall(line)}  # "APPROVE or REJECT" is both
    return words


def _is_finding(text: str, match: re.Match[str]) -> bool:
    """A finding line: the severity in capitals, or followed by ':', ']', ')' or '**'
    ("Warning words in prose" is not one)."""
    return match.group(1).isupper() or text[match.end(1) : match.end(1) + 3].lstrip("Ss").startswith(
        (":", "]", ")", "*", " -", " \u2014")
    )


def _from_text(text: str) -> tuple[Decision | None, list[Finding]]:
    words = _verdict_words(text)
    if not words:
        words = {_decision(m.group(1)) for m in _BARE.finditer(text)}
    stated: Decision | None = words.pop() if len(words) == 1 else None
    findings = [
        f
        for m in _FINDING.finditer(text)
        if _is_finding(text, m) and (f := _finding(m.group(1), m.group(2))) is not None
    ]
    return stated, findings


def parse_verdict(text: str | None) -> Verdict:
    """The :class:`Verdict` of a reviewer's answer (see the module docstring for the rules).

    Args:
        text: The reviewer's final answer (None or empty: no verdict).

    Returns:
        The verdict; REJECT unless the reviewer clearly approved and no rule overrides it.
    """
    text = (text or "")[:100_000]
    parsed = _from_json(text)
    stated, findings = parsed if parsed is not None else _from_text(text)
    if stated is None:
        why = "both APPROVE and REJECT" if _VERDICT.search(text) else "no parseable verdict"
        findings = [
            *findings,
            Finding(
                severity="BLOCKER",
                message=f"The review had {why}: answer with a line 'VERDICT: APPROVE' or 'VERDICT: REJECT'.",
            ),
        ]
        return Verdict(decision="REJECT", stated=None, findings=findings)
    blockers = sum(1 for f in findings if f.severity == "BLOCKER")
    warnings = sum(1 for f in findings if f.severity == "WARNING")
    decision: Decision = "REJECT" if blockers or warnings >= MAX_WARNINGS else stated
    if stated == "REJECT" and not any(f.severity != "SUGGESTION" for f in findings):
        findings = [
            *findings,
            Finding(severity="WARNING", message="The reviewer rejected without a BLOCKER or WARNING: " + text[:300]),
        ]
    return Verdict(decision=decision, stated=stated, findings=findings, overridden=decision != stated)
