"""An error envelope said to a person at a terminal, not to a model.

Error messages in envelopes are written for the model ("tell the user ...", "do not retry
this call", "call again with ..."): that is right for the model and wrong for the person
running ``tooldeck run``. The envelope's ``details`` carry the facts (which variable is
missing, which URL failed and why, which actions exist); :func:`for_people` turns them into
a sentence naming the thing, the cause and the fix, in the CLI's own terms (``--action``,
``--arg``, ``tooldeck check``). What the model receives is unchanged.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from tools.result import ErrorInfo

__all__ = ["for_people"]

# Sentences addressed to the model, dropped when no better wording is known.
_MODEL_DIRECTED = re.compile(
    r"(?i)^(tell the user|do not retry|don't retry|call (the tool )?again|continue without|use another tool|"
    r"you cannot|try again later or take another approach|take another approach|ask the user)"
)
_SENTENCE = re.compile(r"(?<=[.;])\s+(?=\S)")


def for_people(tool_id: str, error: ErrorInfo) -> str:
    """What to print for a failed ``tooldeck run TOOL_ID``: the cause and the fix."""
    details = error.details if isinstance(error.details, Mapping) else {}
    reason = details.get("reason")
    render = _BY_REASON.get(reason) if isinstance(reason, str) else None
    if render is None:
        render = _BY_TYPE.get(error.type)
    text = render(tool_id, details, error) if render is not None else None
    return text if text else _without_model_directions(error.message)


def _missing_credential(tool_id: str, details: Mapping[str, Any], error: ErrorInfo) -> str | None:
    variable = details.get("env_var")
    if not isinstance(variable, str):
        return None
    return f"{variable} is not set; tooldeck check {_quoted(tool_id)} shows how to set it"


def _unreachable(tool_id: str, details: Mapping[str, Any], error: ErrorInfo) -> str | None:
    url, cause = details.get("url"), details.get("cause")
    if not isinstance(url, str):
        return None
    why = f": {cause}" if isinstance(cause, str) and cause else ""
    return f"could not reach {url}{why}"


def _approval_required(tool_id: str, details: Mapping[str, Any], error: ErrorInfo) -> str | None:
    command = details.get("approve_command")
    risk = details.get("risk")
    level = details.get("freedom")
    about = f" (risk {risk}, freedom level {level})" if isinstance(risk, str) and isinstance(level, str) else ""
    fix = command if isinstance(command, str) else f"tooldeck approve {_quoted(tool_id)}"
    return f"{tool_id} needs your approval before it runs{about}; approve it with: {fix}"


def _denied(tool_id: str, details: Mapping[str, Any], error: ErrorInfo) -> str | None:
    said = details.get("message")
    return f"the call was not approved{': ' + said if isinstance(said, str) and said else ''}; nothing ran"


def _unknown_action(tool_id: str, details: Mapping[str, Any], error: ErrorInfo) -> str | None:
    actions = details.get("actions")
    if not isinstance(actions, list) or not actions:
        return None
    names = ", ".join(str(a) for a in actions)
    got = details.get("got")
    first = shlex.quote(str(actions[0]))
    head = f"{tool_id} has no action {got!r}" if isinstance(got, str) and got else f"{tool_id} has several actions"
    return f"{head}: {names}; choose one with --action, e.g. tooldeck run {_quoted(tool_id)} --action {first}"


def _invalid_arguments(tool_id: str, details: Mapping[str, Any], error: ErrorInfo) -> str | None:
    problems = details.get("errors")
    if not isinstance(problems, list) or not problems:
        return None
    lines = [f"invalid arguments for {tool_id}:"]
    for problem in problems[:20]:
        if isinstance(problem, Mapping):
            lines.append(f"  - {problem.get('field', '?')}: {problem.get('problem', '?')}")
    accepted = details.get("accepted")
    if isinstance(accepted, list) and accepted:
        lines.append(f"  it takes: {', '.join(str(a) for a in accepted)}")
    lines.append("  pass them with --arg key=value (key:=json for numbers and lists) or --params '{...}'")
    return "\n".join(lines)


def _timeout(tool_id: str, details: Mapping[str, Any], error: ErrorInfo) -> str | None:
    return f"{tool_id} did not finish in time; give it longer with --timeout SECONDS, or check what it calls"


_Render = Callable[[str, Mapping[str, Any], ErrorInfo], "str | None"]
_BY_REASON: dict[str, _Render] = {
    "missing_credential": _missing_credential,
    "unreachable": _unreachable,
    "approval_required": _approval_required,
    "denied": _denied,
}
_BY_TYPE: dict[str, _Render] = {
    "unknown_action": _unknown_action,
    "validation_error": _invalid_arguments,
    "timeout": _timeout,
}


def _without_model_directions(message: str) -> str:
    """``message`` without the sentences that instruct the model (kept whole if all do)."""
    sentences = _SENTENCE.split(" ".join(message.split()))
    kept = [s for s in sentences if not _MODEL_DIRECTED.match(s.strip())]
    return " ".join(kept).rstrip(";, ") if kept else message


def _quoted(tool_id: str) -> str:
    return shlex.quote(tool_id)
