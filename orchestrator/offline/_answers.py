"""Writing the final answer from tool results, one sentence (or short block) per call."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from orchestrator.offline._context_answers import context_answer, finance_query_answer
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


_SYMPY_WORDS = [
    (re.compile(r"\s*\*\*\s*"), "^"),
    (re.compile(r"\bzoo\b"), "undefined"),
    (re.compile(r"\bnan\b"), "undefined"),
    (re.compile(r"(?<![\w.])oo\b"), "∞"),
    (re.compile(r"\bpi\b"), "π"),
    (re.compile(r"\bE\b"), "e"),
    (re.compile(r"(\d)\*I\b"), r"\1i"),
    (re.compile(r"\*I\b"), "·i"),
    (re.compile(r"\bI\b"), "i"),
    (re.compile(r"sqrt\((\d+)\)"), r"√\1"),
    (re.compile(r"(\d)\*(?=[a-zA-Zπ√(])"), r"\1"),
]
_FLOAT = re.compile(r"(?<![\w.])\d+\.\d+(?:e[-+]?\d+)?(?![\w.])")
_UNDEFINED = {"zoo", "nan", "-zoo"}
_TIMES = "\u00d7"  # the multiplication sign


def plain_number(value: float, digits: int = 10) -> str:
    """A float as people write it: 0.30000000000000004 -> "0.3", 1.5e20 -> "1.5 x 10^20"
    (with the multiplication sign)."""
    text = f"{value:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa} {_TIMES} 10^{int(exponent)}"
    return text


def plain_math(text: str) -> str:
    """sympy's text made readable: floats without trailing zeros, ``**`` as ``^``, ``I`` as
    ``i``, ``zoo``/``nan`` as "undefined", ``oo`` as ∞, ``pi`` as π."""
    text = _FLOAT.sub(lambda m: plain_number(float(m.group(0))), str(text))
    for pattern, replacement in _SYMPY_WORDS:
        text = pattern.sub(replacement, text)
    return text


def _math(arguments: Mapping[str, Any], data: Any) -> str:
    if not isinstance(data, Mapping):
        return f"{arguments.get('expression')} = {clip(json.dumps(data))}"
    expression = plain_math(str(data.get("expression") or arguments.get("expression")))
    operation = data.get("operation")
    if operation == "solve":
        solutions = data.get("solutions") or []
        if not solutions:
            return f"{expression} has no solution."
        parts = [", ".join(f"{k} = {plain_math(v)}" for k, v in s.items()) for s in solutions[:10]]
        return f"Solving {expression}: " + " or ".join(parts) + "."
    raw = str(data.get("result"))
    if raw in _UNDEFINED:
        note = str(data.get("note") or "").lower()
        why = "division by zero" if "division by zero" in note else "it has no finite value"
        return f"{expression} is undefined ({why})."
    numeric = data.get("numeric")
    if not isinstance(numeric, int | float):
        numeric = _float_or_none(data.get("decimal"))
    result = plain_math(raw)
    if _FLOAT.fullmatch(raw) and isinstance(numeric, int | float):
        result = plain_number(numeric)  # an inexact result: its plain decimal value
    text = f"{expression} = {result}"
    if operation == "differentiate":
        text = f"The derivative of {expression} is {result}"
    elif operation == "integrate":
        text = f"The integral of {expression} is {result} (plus a constant)"
    elif operation == "simplify":
        text = f"{expression} simplifies to {result}"
    if isinstance(numeric, int | float) and not _FLOAT.fullmatch(raw) and _worth_decimal(raw, numeric):
        text += f" ≈ {plain_number(numeric)}"
    return text + "."


def _float_or_none(text: Any) -> float | None:
    try:
        return float(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _worth_decimal(exact: str, numeric: float) -> bool:
    """Whether an exact result (2/3, sqrt(2)) reads better with its decimal value too."""
    try:
        return float(exact) != numeric
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


def _context(arguments: Mapping[str, Any], data: Any, question: str = "") -> str:
    if isinstance(data, Mapping) and data.get("category") == "finance" and "result" in data:
        return finance_query_answer(data)
    if not isinstance(data, Mapping) or not isinstance(data.get("categories"), Mapping):
        return _generic("user_context", arguments, data)
    return context_answer(data, question)


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
    "query_finance": _context,
    "module_pipeline": module_sentence,
    "build_module": module_sentence,
}
_WITH_QUESTION = frozenset({"user_context", "get_user_context", "get_daily_briefing", "get_commute_time"})


def result_sentence(tool: str, arguments: Mapping[str, Any], result: Mapping[str, Any], question: str = "") -> str:
    """The answer text for one finished call (success or error).

    ``question`` is the user's message: context answers pick what it asks about (the
    dentist appointment, tomorrow's events) from it.
    """
    if result.get("status") != "success":
        return error_sentence(tool, arguments, result)
    writer = _WRITERS.get(tool)
    if writer is None:
        return _generic(tool, arguments, result.get("data"))
    if tool in _WITH_QUESTION:
        return _context(arguments, result.get("data"), question)
    return writer(arguments, result.get("data"))
