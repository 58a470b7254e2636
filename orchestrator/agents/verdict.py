"""``parse_verdict``: a reviewer's answer -> :class:`Verdict` (``APPROVE``/``REJECT`` + findings).

Liberal in what it reads: a ``VERDICT: APPROVE`` line, ``**Verdict:** reject``, ``Verdict -
approved``, markdown lists or headings of ``BLOCKER``/``WARNING``/``SUGGESTION`` findings
with ``file:line``, or a JSON answer with ``verdict`` and ``findings``.

Strict in whose words count: the stated verdict is the reviewer's *own* last verdict line,
outside code fences and ``>`` quotes (a review quotes code, and code can say anything), or
its top-level JSON answer (the whole answer, bare or as the one fenced block it consists
of). A JSON block quoted inside the prose never states the verdict; its findings still
count. Strict in what it concludes: any BLOCKER, or three or more WARNINGs, anywhere in the
answer, is a REJECT whatever the verdict line says; an answer with no verdict of its own,
or whose last verdict line says both, is a REJECT with a finding that says so. Never an
APPROVE by default.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
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
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ONE_LINE_FENCE = re.compile(r"```(?:json\b)?([^`\n]*)```")


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


@dataclass
class _Answer:
    """An answer split into the reviewer's own lines and the blocks it quotes in fences."""

    own: list[str] = field(default_factory=list)
    fenced: list[str] = field(default_factory=list)


def _split(text: str) -> _Answer:
    """Lines outside fences vs fenced blocks; an unclosed fence runs to the end (as in
    markdown), so a verdict after it is quoted too."""
    answer = _Answer()
    block: list[str] | None = None
    marker = ""
    for line in text.splitlines():
        opening = _FENCE_LINE.match(line)
        if block is None:
            if opening is not None:
                block, marker = [], opening.group(1)
            else:
                answer.own.append(line)
        elif opening is not None and opening.group(1).startswith(marker) and not opening.group(2).strip():
            answer.fenced.append("\n".join(block))
            block = None
        else:
            block.append(line)
    if block is not None:
        answer.fenced.append("\n".join(block))
    return answer


def _unwrapped(text: str) -> str:
    """The inside of an answer that is one fenced block, else the answer."""
    stripped = text.strip()
    one_line = _ONE_LINE_FENCE.fullmatch(stripped)
    if one_line is not None:
        return one_line.group(1).strip()
    answer = _split(stripped)
    if not any(line.strip() for line in answer.own) and len(answer.fenced) == 1 and stripped.endswith(("```", "~~~")):
        return answer.fenced[0]
    return stripped


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        data: Any = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _json_findings(data: dict[str, Any]) -> list[Finding]:
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
    return findings


def _from_json(data: dict[str, Any]) -> tuple[Decision | None, list[Finding]]:
    word = str(data.get("verdict") or data.get("decision") or "")
    stated = _decision(word) if _VERDICT.search(f"verdict {word}") else None
    return stated, _json_findings(data)


def _last_verdict(lines: list[str]) -> tuple[bool, Decision | None]:
    """Whether any line states a verdict, and the decision of the last one (None when
    that line says both, like 'APPROVE or REJECT')."""
    for line in reversed(lines):
        match = _VERDICT.search(line)
        if match is not None:
            words = {_decision(w) for w in _WORD.findall(line[match.start() :])}
            return True, words.pop() if len(words) == 1 else None
    for line in reversed(lines):
        bare = _BARE.match(line)
        if bare is not None:
            return True, _decision(bare.group(1))
    return False, None


def _from_text(text: str) -> tuple[Decision | None, list[Finding], str]:
    """The stated decision, the findings, and why there is no decision (when there is none)."""
    answer = _split(text)
    own = [line for line in answer.own if not line.lstrip().startswith(">")]
    said, stated = _last_verdict(own)
    why = "" if stated else "both APPROVE and REJECT in its last verdict line" if said else _no_verdict(answer)
    findings = [
        f
        for m in _FINDING.finditer(text)
        if _is_finding(text, m) and (f := _finding(m.group(1), m.group(2))) is not None
    ]
    for block in answer.fenced:  # quoted JSON never states the verdict, but its findings count
        data = _json_object(block.strip())
        if data is not None:
            findings += _json_findings(data)
    return stated, findings, why


def _no_verdict(answer: _Answer) -> str:
    quoted = any(_VERDICT.search(block) or _BARE.search(block) for block in answer.fenced)
    return "a verdict only inside a quoted block" if quoted else "no parseable verdict"


def _is_finding(text: str, match: re.Match[str]) -> bool:
    """A finding line: the severity in capitals, or followed by ':', ']', ')' or '**'
    ("Warning words in prose" is not one)."""
    return match.group(1).isupper() or text[match.end(1) : match.end(1) + 3].lstrip("Ss").startswith(
        (":", "]", ")", "*", " -", " \u2014")
    )


def parse_verdict(text: str | None) -> Verdict:
    """The :class:`Verdict` of a reviewer's answer (see the module docstring for the rules).

    Args:
        text: The reviewer's final answer (None or empty: no verdict).

    Returns:
        The verdict; REJECT unless the reviewer clearly approved and no rule overrides it.
    """
    text = _unwrapped((text or "")[:100_000])
    data = _json_object(text)
    if data is not None and ({"verdict", "decision"} & data.keys()):
        stated, findings = _from_json(data)
        why = "" if stated else "no parseable verdict in its JSON answer"
    else:
        stated, findings, why = _from_text(text)
    if stated is None:
        findings = [
            *findings,
            Finding(
                severity="BLOCKER",
                message=f"The review had {why}: answer with your own line 'VERDICT: APPROVE' or "
                "'VERDICT: REJECT', outside code blocks and quotes.",
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
