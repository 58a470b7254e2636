"""Reading a user message into intents with deterministic patterns (no model, no network).

A message is split into sentences (abbreviations such as "Dr." do not end one); each
sentence is matched against the patterns below in order, first match wins. "Run this
python: ..." takes the rest of the message as code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from orchestrator.offline._modules import read_module_request

IntentKind = Literal["math", "remember", "recall", "context", "web_search", "web_load", "code", "greeting", "module"]

MAX_MESSAGE_CHARS = 20_000

_ABBREVIATIONS = frozenset(
    """dr mr mrs ms prof st jr sr vs etc e.g i.e no mt ave apt inc ltd co a.m p.m""".split()  # noqa: SIM905
)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s+|$)")

_CODE = re.compile(
    r"\b(?:run|execute|exec)\s+(?:this|the following|some|my)?\s*"
    r"(?P<lang>python3?|bash|sh|shell|node|javascript|js)?\s*(?:code|script|program|snippet)?"
    r"\s*(?:in\s+(?P<lang2>python3?|bash|sh|node))?\s*:\s*(?P<code>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_FENCE = re.compile(r"^```[a-zA-Z0-9_+-]*\n?(?P<body>.*?)\n?```\s*$", re.DOTALL)
_REMEMBER = re.compile(
    r"^(?:please\s+|also\s+|and\s+)*(?:remember|note|don't forget|do not forget|keep in mind"
    r"|save|store|memori[sz]e)(?:\s+that|\s*:)?\s+(?P<fact>.+)$",
    re.IGNORECASE,
)
_LOAD = re.compile(
    r"\b(?:open|load|read|fetch|get|summari[sz]e|visit)\b.*?(?P<url>https?://[^\s<>\"']+)",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    r"\b(?:search|look\s+up|google|find)\s+(?:the\s+web|the\s+internet|online|the\s+net)"
    r"\s*(?:for|about)?\s+(?P<query>.+)$"
    r"|\b(?:search|look\s+up)\s+(?:for\s+)?(?P<query2>.+?)\s+(?:online|on\s+the\s+web)$"
    r"|\bweb\s+search\s*(?:for|about|:)?\s+(?P<query3>.+)$",
    re.IGNORECASE,
)
_RECALL = re.compile(
    r"^(?:(?:and|also|so)\s+)?(?:what|who|when|where|which)(?:'s|\s+is|\s+are|\s+was|\s+were)"
    r"\s+(?:my|our)\s+(?P<subject>.+)$"
    r"|^(?:do\s+you\s+)?(?:recall|remember)\s+(?:what\s+|who\s+|when\s+|where\s+)?(?P<subject2>.+)$"
    r"|^what\s+do\s+you\s+know\s+about\s+(?P<subject3>.+)$"
    r"|^(?:search|check)\s+(?:my\s+)?(?:notes|knowledge|memory)\s+(?:for|about)\s+(?P<subject4>.+)$",
    re.IGNORECASE,
)
_GREETING = re.compile(
    r"^(?:hi|hello|hey|good\s+(?:morning|afternoon|evening)|thanks|thank\s+you|help"
    r"|what\s+can\s+you\s+do)\b[\s!.,]*(?:there)?[\s!.]*$",
    re.IGNORECASE,
)

_CONTEXT_WORDS: dict[str, re.Pattern[str]] = {
    "briefing": re.compile(r"\b(?:briefing|brief me|morning summary|daily summary)\b", re.I),
    "calendar": re.compile(r"\b(?:calendar|schedule|agenda|meetings?|appointments?|events?|busy|free\s+time)\b", re.I),
    "weather": re.compile(
        r"\b(?:weather|forecast|temperature|rain(?:ing|y)?|snow(?:ing)?|umbrella|sunny|wind)\b",
        re.I,
    ),
    "commute": re.compile(
        r"\b(?:commute|traffic|drive|how\s+long\s+(?:does\s+it\s+take|to\s+get)|get\s+to|travel\s+time)\b",
        re.I,
    ),
    "finance": re.compile(
        r"\b(?:spend(?:ing)?|spent|finances?|financial|budget|balance|transactions?|expenses?"
        r"|money|income|bills?|savings)\b",
        re.I,
    ),
}
_DESTINATION = re.compile(
    r"\b(?:to|get\s+to|commute\s+to|drive\s+to)\s+(?:the\s+)?(?P<place>[A-Za-z0-9][\w\s.'-]*?)\s*$",
    re.I,
)
_STOPWORDS = frozenset(
    """a an the my our your is are was were what who when where which do does did you i me
    to of for about in on at and or please tell remember recall know name s it that this be
    any anything have has had""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Intent:
    """One thing the user asked for.

    Attributes:
        kind: What kind of request.
        text: The sentence it came from.
        slots: What the request needs (expression, fact, query, url, code, categories...).
    """

    kind: IntentKind
    text: str
    slots: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """A whole message read: the intents found and the sentences that matched nothing."""

    intents: list[Intent]
    unmatched: list[str]


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; "Dr. Lee", "e.g. this" and "3.5" stay whole."""
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        words = text[start : match.start()].split()
        last = words[-1].lower().rstrip(".") if words else ""
        if match.group() == "." and (last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())):
            continue
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = end
    rest = text[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences


def read_message(text: str) -> Reading:
    """Find the intents of a user message.

    Hostile or oversized input: only the first `MAX_MESSAGE_CHARS` characters are read;
    every pattern is linear-time on its sentence (no nested quantifiers), so no input makes
    reading slow. Nothing is ever evaluated.
    """
    text = text[:MAX_MESSAGE_CHARS].strip()
    intents: list[Intent] = []
    unmatched: list[str] = []
    code = _CODE.search(text)
    before = text[: code.start()] if code else text
    for sentence in split_sentences(before):
        intent = read_sentence(sentence)
        if intent is None:
            unmatched.append(sentence)
        else:
            intents.append(intent)
    if code:
        body = code.group("code").strip()
        fence = _FENCE.match(body)
        if fence:
            body = fence.group("body")
        language = (code.group("lang") or code.group("lang2") or "python").lower()
        language = {"python3": "python", "shell": "bash", "javascript": "node", "js": "node"}.get(language, language)
        intents.append(Intent("code", code.group(0), {"code": body, "language": language}))
    return Reading(intents, unmatched)


def _greeting(clause: str, sentence: str) -> Intent | None:
    return Intent("greeting", sentence) if _GREETING.match(clause) else None


def _remember(clause: str, sentence: str) -> Intent | None:
    if sentence.rstrip().endswith("?"):  # "remember my dentist?" asks, it does not tell
        return None
    match = _REMEMBER.match(clause)
    return Intent("remember", sentence, {"fact": match.group("fact").strip()}) if match else None


def _web_load(clause: str, sentence: str) -> Intent | None:
    match = _LOAD.search(clause)
    if not match:
        return None
    return Intent("web_load", sentence, {"url": match.group("url").rstrip(".,;)")})


def _web_search(clause: str, sentence: str) -> Intent | None:
    match = _SEARCH.search(clause)
    if not match:
        return None
    query = next(g for g in match.group("query", "query2", "query3") if g)
    return Intent("web_search", sentence, {"query": query.strip()})


def _context(clause: str, sentence: str) -> Intent | None:
    slots = _read_context(clause)
    return Intent("context", sentence, slots) if slots is not None else None


def _math(clause: str, sentence: str) -> Intent | None:
    slots = read_math(clause)
    return Intent("math", sentence, slots) if slots is not None else None


def _recall(clause: str, sentence: str) -> Intent | None:
    match = _RECALL.match(clause)
    if not match:
        return None
    subject = next(g for g in match.group("subject", "subject2", "subject3", "subject4") if g)
    query = recall_query(subject)
    return Intent("recall", sentence, {"query": query, "subject": subject.strip()}) if query else None


def _module(clause: str, sentence: str) -> Intent | None:
    slots = read_module_request(clause)
    return Intent("module", sentence, slots) if slots is not None else None


_MATCHERS = (_greeting, _module, _remember, _web_load, _web_search, _context, _math, _recall)


def read_sentence(sentence: str) -> Intent | None:
    """The intent of one sentence (the first pattern that matches), or None."""
    clause = sentence.strip().rstrip("?!. ").strip()
    if not clause:
        return None
    for matcher in _MATCHERS:
        intent = matcher(clause, sentence)
        if intent is not None:
            return intent
    return None


def _read_context(clause: str) -> dict[str, Any] | None:
    categories = [name for name, pattern in _CONTEXT_WORDS.items() if pattern.search(clause)]
    if not categories:
        return None
    slots: dict[str, Any] = {"categories": categories}
    if "commute" in categories:
        match = _DESTINATION.search(clause)
        if match:
            slots["destination"] = match.group("place").strip()
    if "finance" in categories:
        slots["query"] = clause
    return slots


def recall_query(subject: str) -> str:
    """Search words for a recall question: content words joined with OR (any may match)."""
    words = [w for w in re.findall(r"[\w'-]+", subject.lower()) if w not in _STOPWORDS]
    words = [w[:-2] if w.endswith("'s") else w for w in words]
    unique = list(dict.fromkeys(w for w in words if len(w) > 1))[:6]
    return " OR ".join(unique)


# ---------------------------------------------------------------------------- math

_MATH_FUNCTIONS = frozenset(
    """sin cos tan asin acos atan sinh cosh tanh exp log ln sqrt cbrt root abs factorial
    binomial gamma floor ceiling min max gcd lcm re im pi e i oo""".split()  # noqa: SIM905
)
_MATH_LEAD = re.compile(
    r"^(?:(?:hey|ok|okay|so|please|and|also|now|then)[,\s]+)*"
    r"(?:what(?:'s|\s+is|\s+are|\s+does)|how\s+much\s+is|calculate|compute|evaluate|work\s+out"
    r"|tell\s+me|find|give\s+me|can\s+you\s+(?:calculate|compute|solve|tell\s+me))?\s*"
    r"(?P<verb>solve|simplify|differentiate|derive|integrate)?\s*"
    r"(?:the\s+)?(?:(?P<what>value|result|answer|derivative|integral|solution)\s+(?:of|to|for)\s+)?",
    re.IGNORECASE,
)
_WORD_OPS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<=\d),(?=\d{3}\b)"), ""),
    (re.compile(r"\bsquare\s+root\s+of\s+([\d.]+)", re.I), r"sqrt(\1)"),
    (re.compile(r"([\d.]+)\s*(?:%|percent)\s+of\s+([\d.]+)", re.I), r"(\1/100*\2)"),
    (re.compile(r"\bmultiplied\s+by\b|\btimes\b|\u00d7", re.I), "*"),
    (re.compile(r"(?<=\d)\s*x\s*(?=\d)"), "*"),
    (re.compile(r"\bdivided\s+by\b|\bover\b|\u00f7", re.I), "/"),
    (re.compile(r"\bplus\b", re.I), "+"),
    (re.compile(r"\bminus\b|\u2212", re.I), "-"),
    (re.compile(r"\bto\s+the\s+power\s+of\b", re.I), "^"),
    (re.compile(r"\bsquared\b", re.I), "^2"),
    (re.compile(r"\bcubed\b", re.I), "^3"),
    (re.compile(r"\b(?:modulo|mod)\b", re.I), "%"),
]
_EQUALS_WORDS = re.compile(r"\s+(?:equals|is\s+equal\s+to)\s+", re.I)
_FOR_VARIABLE = re.compile(r"\s+(?:for|with\s+respect\s+to|wrt|d)\s+([a-z])$", re.I)
_BINARY_OP = re.compile(r"[\d)a-z]\s*(?:\*\*|[-+*/^%])\s*[-+]?[\d(a-z.]|[a-z]+\(|\d\s*!")


def read_math(clause: str) -> dict[str, Any] | None:
    """An ``{"expression", "operation", "variable"?}`` dict when the clause is math."""
    lead = _MATH_LEAD.match(clause)
    verb = (lead.group("verb") or "").lower() if lead else ""
    what = (lead.group("what") or "").lower() if lead else ""
    expression = clause[lead.end() :] if lead else clause
    for pattern, replacement in _WORD_OPS:
        expression = pattern.sub(replacement, expression)
    expression = _EQUALS_WORDS.sub(" = ", expression)
    variable = None
    match = _FOR_VARIABLE.search(expression)
    if match:
        variable, expression = match.group(1), expression[: match.start()]
    expression = expression.strip().rstrip("=").strip()
    if not expression or len(expression) > 2000:
        return None
    if not re.fullmatch(r"[\w\s+\-*/^().,%=!]+", expression):
        return None
    words = re.findall(r"[a-zA-Z_]+", expression)
    if any(len(w) > 1 and w.lower() not in _MATH_FUNCTIONS for w in words):
        return None
    operation = {
        "solve": "solve",
        "simplify": "simplify",
        "differentiate": "differentiate",
        "derive": "differentiate",
        "integrate": "integrate",
    }.get(verb, "")
    operation = operation or {"derivative": "differentiate", "integral": "integrate"}.get(what, "")
    if not operation:
        operation = "solve" if "=" in expression else "evaluate"
    if operation == "evaluate" and not (re.search(r"\d", expression) and _BINARY_OP.search(expression)):
        return None
    if operation != "evaluate" and not re.search(r"[\da-z]", expression):
        return None
    expression = re.sub(r"(?<=\d)(?=[a-z(])", "*", expression)  # 2x -> 2*x, 3(x+1) -> 3*(x+1)
    expression = re.sub(r"\)\s*\(", ")*(", expression)
    slots: dict[str, Any] = {"expression": expression, "operation": operation}
    if variable:
        slots["variable"] = variable
    return slots
