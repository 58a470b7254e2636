"""The offline model's module requests: "build a module for my runs at http://...".

Reading (:func:`read_module_request`) finds the data source's name, its API URL, a
category guessed from keywords and whether a key is mentioned; planning
(:func:`module_candidates`) turns that into ``module_pipeline(action="build", ...)`` or
the old ``build_module``; answering (:func:`module_sentence`) says what was built and
what comes next. Good enough for a demo: a real model writes the adapter code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_BUILD = re.compile(
    r"^(?:(?:please|can you|could you|now|then|and)\s+)*(?:build|create|make|add|write|set\s+up)\s+"
    r"(?:me\s+)?(?:a\s+|an\s+|the\s+)?(?:new\s+)?(?:data[\s-]?source\s+)?"
    r"(?:module|adapter|data[\s-]?source|integration|connector)\s+"
    r"(?:for|to\s+read|that\s+reads|reading|from|of)\s+(?P<what>.+)$",
    re.IGNORECASE,
)
_URL = re.compile(r"https?://[^\s<>\"']+")
_KEY = re.compile(r"\b(?:api[\s_-]?key|token|password|credentials?)\b", re.IGNORECASE)
_NO_KEY = re.compile(r"\b(?:no|without)\s+(?:api[\s_-]?)?(?:key|token|auth\w*)\b|\bpublic\b", re.IGNORECASE)
_FILLER = re.compile(
    r"\b(?:no|without)\s+(?:api[\s_-]?)?(?:key|token)\b|\bneeds?\s+(?:an?\s+)?(?:api[\s_-]?)?(?:key|token)\b"
    r"|\bapi[\s_-]?key\b|\btoken\b|\bpublic\b"
    r"|\b(?:at|from|on|via|using|with|its|it's|an?|the|api|url|endpoint|json|which|that|is|my|our)\b",
    re.IGNORECASE,
)
_CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "fitness",
        re.compile(r"\b(?:runs?|running|workouts?|strava|gym|fitness|exercise|cycling|rides?|swim\w*)\b", re.I),
    ),
    ("health", re.compile(r"\b(?:sleep|heart|health|weight|blood|medications?|steps)\b", re.I)),
    ("gaming", re.compile(r"\b(?:games?|gaming|steam|xbox|playstation|chess|clash)\b", re.I)),
    ("finance", re.compile(r"\b(?:bank|spending|budget|expenses?|crypto|stocks?|finances?|transactions?)\b", re.I)),
    ("calendar", re.compile(r"\b(?:calendar|events?|meetings?|schedule)\b", re.I)),
    ("weather", re.compile(r"\b(?:weather|forecast|temperature|air\s+quality)\b", re.I)),
    ("commute", re.compile(r"\b(?:commute|traffic|transit|bus|trains?)\b", re.I)),
    ("social", re.compile(r"\b(?:social|friends|posts?|mastodon|reddit|messages?)\b", re.I)),
)
DEFAULT_CATEGORY = "social"


def read_module_request(clause: str) -> dict[str, Any] | None:
    """``{"name", "category", "api_url", "requires_api_key", "auth_type", "description"}``
    when ``clause`` asks to build a module, else None."""
    match = _BUILD.match(clause.strip())
    if not match:
        return None
    what = match.group("what").strip()
    url_match = _URL.search(what)
    api_url = url_match.group(0).rstrip(".,;)") if url_match else ""
    rest = _URL.sub(" ", what)
    name = " ".join(_FILLER.sub(" ", rest).split()).strip(" ,.-")[:60] or "New data source"
    category = next((cat for cat, pattern in _CATEGORIES if pattern.search(rest)), DEFAULT_CATEGORY)
    needs_key = bool(_KEY.search(rest)) and not _NO_KEY.search(rest)
    slots: dict[str, Any] = {
        "name": name[:1].upper() + name[1:],
        "category": category,
        "description": what[:300],
        "api_url": api_url,
        "requires_api_key": needs_key,
        "auth_type": ("bearer" if re.search(r"\btoken\b", rest, re.I) else "api_key") if needs_key else "none",
    }
    return slots


def module_candidates(slots: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(tool, arguments)`` pairs that build the module, best first."""
    return [("module_pipeline", {"action": "build", **slots}), ("build_module", dict(slots))]


def module_sentence(arguments: Mapping[str, Any], data: Any) -> str:
    """What a ``build`` did, and the next steps."""
    if not isinstance(data, Mapping) or "module_id" not in data:
        return f"module_pipeline: {str(data)[:400]}"
    action = arguments.get("action", "build")
    if action != "build":
        return _other_action(str(action), data)
    found = data.get("manifest")
    manifest: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    category = manifest.get("category", arguments.get("category"))
    url = manifest.get("api_url") or "no API URL yet"
    return (
        f"I built the module {data['module_id']!r} ({category}, reading {url}) from the template. "
        f"Next: {data.get('next', 'write its adapter code, then validate and install it.')}"
    )


def _other_action(action: str, data: Mapping[str, Any]) -> str:
    module_id = data.get("module_id")
    if "passed" in data:
        if data["passed"]:
            return f"The module {module_id!r} passed validation. Next: {data.get('next', 'install it.')}"
        findings = [f for f in data.get("findings") or [] if isinstance(f, Mapping)]
        shown = "; ".join(
            f"{f.get('file')}{':' + str(f['line']) if f.get('line') else ''}: {str(f.get('message'))[:160]}"
            for f in findings[:3]
        )
        return f"The module {module_id!r} did not pass validation: {shown or 'no details'}."
    return f"module_pipeline {action} for {module_id!r}: done."
