"""Turning intents into tool calls that fit the tools actually offered.

Each intent has candidate calls, best first (a builtin tool and its older alias names); the
first candidate whose tool is offered and whose arguments fit that tool's JSON schema is
used. Fitting reads the schema: unknown arguments are dropped, enum values are checked,
required properties that admit null (as OpenAI strict schemas declare optional fields) are
sent as null, and a required property we cannot fill rules the candidate out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.offline._intents import Intent
from orchestrator.offline._modules import module_candidates


@dataclass(frozen=True)
class Candidate:
    """A tool call that would serve an intent."""

    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class PlannedCall:
    """A call chosen for an intent."""

    intent: Intent
    tool: str
    arguments: dict[str, Any]


def candidates(intent: Intent) -> list[Candidate]:
    """The calls that would serve ``intent``, best first."""
    slots = intent.slots
    if intent.kind == "context":
        return _context_candidates(slots)
    if intent.kind == "module":
        return [Candidate(tool, arguments) for tool, arguments in module_candidates(slots)]
    if intent.kind == "web_search":
        return [
            Candidate("web", {"action": "search", "query": slots["query"]}),
            Candidate("web_search", {"query": slots["query"]}),
        ]
    if intent.kind == "web_load":
        return [
            Candidate("web", {"action": "load", "url": slots["url"]}),
            Candidate("load_web_page", {"url": slots["url"]}),
        ]
    simple = {
        "math": [("math_solver", dict(slots)), ("calculator", dict(slots))],
        "remember": [("store_knowledge", {"text": slots.get("fact")})],
        "recall": [("search_knowledge", {"query": slots.get("query")})],
        "code": [("execute_code", dict(slots))],
    }
    return [Candidate(tool, arguments) for tool, arguments in simple.get(intent.kind, [])]


def _context_candidates(slots: Mapping[str, Any]) -> list[Candidate]:
    """``user_context`` with its category, or the old alias for that category."""
    categories: list[str] = list(slots["categories"])
    if "briefing" in categories:
        return [
            Candidate("get_daily_briefing", {}),
            Candidate("user_context", {"category": "all", "action": "summary"}),
        ]
    destination = slots.get("destination")
    general: dict[str, Any] = {"category": categories if len(categories) > 1 else categories[0]}
    if destination and "commute" in categories:
        general["destination"] = destination
    old_general: dict[str, Any] = {"categories": categories}
    if destination and "commute" in categories:
        old_general["destination"] = destination
    out = [Candidate("user_context", general), Candidate("get_user_context", old_general)]
    if categories == ["commute"]:
        out.append(Candidate("get_commute_time", {"destination": destination}))
    if categories == ["finance"]:
        out.append(Candidate("query_finance", {"action": "summary"}))
    return out


def offered_schemas(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """Tool name -> parameters schema, from OpenAI tool definitions (malformed ones skipped)."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters")
        out[function["name"]] = dict(parameters) if isinstance(parameters, Mapping) else {}
    return out


def plan(intents: Sequence[Intent], schemas: Mapping[str, Mapping[str, Any]]) -> tuple[list[PlannedCall], list[Intent]]:
    """The calls to make, and the intents no offered tool can serve."""
    calls: list[PlannedCall] = []
    unserved: list[Intent] = []
    for intent in intents:
        if intent.kind == "greeting":
            continue
        for candidate in candidates(intent):
            schema = schemas.get(candidate.tool)
            if schema is None:
                continue
            arguments = fit_arguments(candidate.arguments, schema)
            if arguments is not None:
                calls.append(PlannedCall(intent, candidate.tool, arguments))
                break
        else:
            unserved.append(intent)
    return calls, unserved


def _variants(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    variants = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(variants, list):
        return [v for v in variants if isinstance(v, Mapping)]
    return [schema]


def admits_null(schema: Mapping[str, Any]) -> bool:
    """Whether a property schema accepts null (``type`` with "null", or a null variant)."""
    for variant in _variants(schema):
        kind = variant.get("type")
        if kind == "null" or (isinstance(kind, list) and "null" in kind):
            return True
    return False


def _try(value: Any, variant: Mapping[str, Any]) -> tuple[bool, Any]:
    kind = variant.get("type")
    if isinstance(value, list) and kind not in ("array", None):
        if len(value) != 1:
            return False, None
        value = value[0]
    elif kind == "array" and not isinstance(value, list):
        value = [value]
    enum = variant.get("enum")
    if isinstance(enum, list) and value not in enum:
        return False, None
    items = variant.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        allowed = items.get("enum")
        if isinstance(allowed, list) and any(v not in allowed for v in value):
            return False, None
    return True, value


def _coerce(value: Any, schema: Mapping[str, Any]) -> tuple[bool, Any]:
    """(fits, value) for one property: the variant of the value's own shape first."""
    if value is None:
        return admits_null(schema), None
    variants = [v for v in _variants(schema) if v.get("type") != "null"]
    natural = [v for v in variants if (v.get("type") == "array") == isinstance(value, list)]
    for variant in natural + [v for v in variants if v not in natural]:
        fits, coerced = _try(value, variant)
        if fits:
            return True, coerced
    return False, None


def fit_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``arguments`` shaped to ``schema``, or None when they cannot satisfy it."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return dict(arguments) if schema.get("additionalProperties", True) is not False else {}
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        prop = properties.get(key)
        if not isinstance(prop, Mapping):
            continue
        fits, coerced = _coerce(value, prop)
        if fits:
            out[key] = coerced
        elif key in (schema.get("required") or ()):
            return None
    for key in schema.get("required") or ():
        if key in out:
            continue
        prop = properties.get(key)
        if isinstance(prop, Mapping) and admits_null(prop):
            out[key] = None
        else:
            return None
    return out
