"""Writing the final answer from tool results, one sentence (or short block) per call."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from orchestrator.offline._modules import module_sentence

_PERSON = {
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "i": "you",
    "me": "you",
    "i'm": "you're",
    "am": "are",
    "our": "your",
    "ours": "yours",
    "we": "you",
    "us": "you",
}
_PERSON_RE = re.compile(r"\b(" + "|".join(re.escape(w) for w in _PERSON) + r")\b", re.I)


def second_person(text: str) -> str:
    """'my dentist is Dr. Lee' -> 'your dentist is Dr. Lee' (what the user told us, said back)."""

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        swapped = _PERSON[word.lower()]
        return swapped.capitalize() if word[0].isupper() and word.lower() != "i" else swapped

    return _PERSON_RE.sub(swap, text)


def clip(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?)" else text + "."


_ATTEMPTS = {
    "store_knowledge": "save that note",
    "search_knowledge": "search your saved notes",
    "execute_code": "run the code",
    "user_context": "get your context",
    "get_user_context": "get your context",
    "get_daily_briefing": "get your daily briefing",
    "get_commute_time": "get your commute time",
    "query_finance": "look at your finances",
}


def describe_attempt(tool: str, arguments: Mapping[str, Any]) -> str:
    """What a call tried to do, for error sentences ("compute 2+2")."""
    if tool in ("math_solver", "calculator"):
        return f"compute {clip(arguments.get('expression', ''), 80)}"
    if tool in ("web", "web_search", "load_web_page"):
        return "load that page" if arguments.get("url") else "search the web"
    return _ATTEMPTS.get(tool, f"get that from the {tool} tool")


def error_sentence(tool: str, arguments: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """An honest sentence about a failed call, with the tool's own message."""
    message = clip(result.get("error") or "no reason given", 400)
    kind = result.get("error_type") or "error"
    return f"I couldn't {describe_attempt(tool, arguments)}: the {tool} tool reported {kind}: " + (_sentence(message))


def _math(arguments: Mapping[str, Any], data: Any) -> str:
    if not isinstance(data, Mapping):
        return f"{arguments.get('expression')} = {clip(json.dumps(data))}"
    expression = data.get("expression") or arguments.get("expression")
    operation = data.get("operation")
    if operation == "solve":
        solutions = data.get("solutions") or []
        if not solutions:
            return f"{expression} has no solution."
        parts = [", ".join(f"{k} = {v}" for k, v in s.items()) for s in solutions[:10]]
        return f"Solving {expression}: " + " or ".join(parts) + "."
    result = str(data.get("result"))
    decimal = data.get("decimal")
    text = f"{expression} = {result}"
    if operation == "differentiate":
        text = f"The derivative of {expression} is {result}"
    elif operation == "integrate":
        text = f"The integral of {expression} is {result}"
    if isinstance(decimal, str) and _numeric_differs(result, decimal):
        text += f" ≈ {decimal}"
    return text + "."


def _numeric_differs(exact: str, decimal: str) -> bool:
    try:
        return float(exact) != float(decimal)
    except ValueError:
        return True


def _stored(arguments: Mapping[str, Any], data: Any) -> str:
    fact = second_person(str(arguments.get("text", "")))
    if isinstance(data, Mapping) and data.get("duplicate"):
        return _sentence(f"I already had that noted: {fact}")
    return _sentence(f"Noted: {fact}")


def _recalled(arguments: Mapping[str, Any], data: Any) -> str:
    results = data.get("results") if isinstance(data, Mapping) else None
    if not results:
        query = str(arguments.get("query", "")).replace(" OR ", ", ")
        return f"I have nothing saved about {query}."
    texts = [second_person(clip(r.get("text", ""), 200)) for r in results[:3] if isinstance(r, dict)]
    return "From your saved notes: " + " | ".join(_sentence(t) for t in texts)


def _web(arguments: Mapping[str, Any], data: Any) -> str:
    if not isinstance(data, Mapping):
        return clip(json.dumps(data), 500)
    if arguments.get("url") or "text" in data:
        title = data.get("title") or data.get("url") or arguments.get("url")
        return f"{title}: {clip(data.get('text', ''), 400)}"
    hits = data.get("results") or []
    if not hits:
        return f"The web search for {arguments.get('query')!r} found nothing."
    lines = [f"Web results for {arguments.get('query')!r}:"]
    for hit in hits[:3]:
        if isinstance(hit, Mapping):
            lines.append(f"- {clip(hit.get('title', ''), 100)} ({hit.get('url', '')})")
    return "\n".join(lines)


def _code(arguments: Mapping[str, Any], data: Any) -> str:
    if not isinstance(data, Mapping):
        return clip(json.dumps(data), 500)
    stdout = str(data.get("stdout", "")).rstrip()
    code = data.get("exit_code")
    if code == 0:
        return f"The program printed:\n{stdout[:1500]}" if stdout else "The program ran with no output."
    stderr = str(data.get("stderr", "")).rstrip()[-600:]
    note = f" ({data['note']})" if data.get("note") else ""
    return f"The program failed with exit code {code}{note}:\n{stderr or stdout[:600]}"


def _context(arguments: Mapping[str, Any], data: Any) -> str:
    if not isinstance(data, Mapping) or not isinstance(data.get("categories"), Mapping):
        return _generic("user_context", arguments, data)
    lines: list[str] = []
    for name, entry in data["categories"].items():
        if not isinstance(entry, Mapping):
            continue
        status = entry.get("status")
        if status in ("ok", "partial"):
            details = {k: v for k, v in entry.items() if k not in ("status", "reason")}
            text = json.dumps(details, ensure_ascii=False, separators=(", ", ": "))
            lines.append(f"- {name}: {clip(text, 400)}")
        else:
            reason = entry.get("reason") or "no reason given"
            lines.append(f"- {name}: {status or 'unavailable'} ({clip(reason, 200)})")
    alerts = data.get("alerts")
    if isinstance(alerts, list) and alerts:
        lines.append("Alerts: " + "; ".join(clip(a, 150) for a in alerts[:5]))
    return "Your context:\n" + "\n".join(lines) if lines else "Your context is empty."


def _generic(tool: str, arguments: Mapping[str, Any], data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"{tool}: {clip(text, 600)}"


_WRITERS: dict[str, Callable[[Mapping[str, Any], Any], str]] = {
    "math_solver": _math,
    "calculator": _math,
    "store_knowledge": _stored,
    "search_knowledge": _recalled,
    "web": _web,
    "web_search": _web,
    "load_web_page": _web,
    "execute_code": _code,
    "user_context": _context,
    "get_user_context": _context,
    "get_daily_briefing": _context,
    "get_commute_time": _context,
    "module_pipeline": module_sentence,
    "build_module": module_sentence,
}


def result_sentence(tool: str, arguments: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """The answer text for one finished call (success or error)."""
    if result.get("status") != "success":
        return error_sentence(tool, arguments, result)
    writer = _WRITERS.get(tool)
    if writer is None:
        return _generic(tool, arguments, result.get("data"))
    return writer(arguments, result.get("data"))
