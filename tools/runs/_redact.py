"""Secrets out of a record before it is stored: the redaction of traces, applied to every string.

Two layers, as for error messages kept in metrics (``tools.telemetry``): the values the
application knows to be secret (its API keys) are replaced wherever they appear, then
secret-looking shapes (``Bearer ...``, ``api_key=...``, provider token prefixes, long
opaque strings) are masked. What is masked: the content a model, a tool or a person wrote
(question, answer, error, arguments, reasons, findings, the validation report); mapping keys
are kept (they are argument names). Identifiers, paths, hashes and times are ours and kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tools.runs.model import RunRecord
from tools.telemetry._redaction import MASK, redact_text

_MIN_SECRET_CHARS = 4  # shorter "secrets" would mask ordinary words


_CONTENT = ("question", "answer", "error", "model", "validation")
_CALL_CONTENT = ("arguments",)
_APPROVAL_CONTENT = ("arguments", "reason")
_STEP_CONTENT = ("answer", "findings")


def redacted(record: RunRecord, secrets: Iterable[str] = ()) -> RunRecord:
    """``record`` with known ``secrets`` and secret-looking values masked in its content."""
    known = sorted({s for s in secrets if s and len(s) >= _MIN_SECRET_CHARS}, key=len, reverse=True)
    data = record.model_dump(mode="json")
    _mask(data, _CONTENT, known)
    for call in data["tool_calls"]:
        _mask(call, _CALL_CONTENT, known)
    for approval in data["approvals"]:
        _mask(approval, _APPROVAL_CONTENT, known)
    for step in data["steps"]:
        _mask(step, _STEP_CONTENT, known)
        for call in step["tool_calls"]:
            _mask(call, _CALL_CONTENT, known)
    return RunRecord.model_validate(data)


def _mask(data: dict[str, Any], fields: tuple[str, ...], known: list[str]) -> None:
    for name in fields:
        if data.get(name) is not None:
            data[name] = _walk(data[name], known)


def _walk(value: Any, known: list[str]) -> Any:
    if isinstance(value, str):
        return _text(value, known)
    if isinstance(value, dict):
        return {key: _walk(item, known) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, known) for item in value]
    return value


def _text(text: str, known: list[str]) -> str:
    for secret in known:
        if secret in text:
            text = text.replace(secret, MASK)
    return redact_text(text) if _worth_scanning(text) else text


def _worth_scanning(text: str) -> bool:
    """Short plain words cannot hold a secret shape; skip the regex pass for them."""
    return len(text) >= 6
