"""Arguments that fit a JSON schema: what `orchestrator.testing.TestModel` calls tools with.

`schema_arguments(schema, seed)` returns a value the schema accepts: deterministic for a
seed, different across seeds. It follows ``$ref``/``$defs`` (recursion bounded), ``const``
and ``enum``, ``anyOf``/``oneOf`` (a non-null branch first), ``allOf`` (merged), type lists,
objects (required properties, plus optional ones when ``minProperties`` or
``dependentRequired`` ask), arrays (``items``, ``prefixItems``, ``minItems``/``maxItems``,
``uniqueItems``), strings (``format``, ``pattern``, ``minLength``/``maxLength``) and numbers
(``minimum``/``maximum``, exclusive bounds, ``multipleOf``). Each candidate is checked
with a JSON-schema validator (formats included); up to `ATTEMPTS` candidates are tried,
each from a different random stream, and the first valid one is returned. A schema no
attempt satisfies (``not`` over everything, contradictory bounds) gives the last candidate:
the tool's own validation then answers the call, as it would a model's.
"""

from __future__ import annotations

import copy
import math
import random
import re
from collections.abc import Mapping
from typing import Any

from orchestrator._regex_sample import Unsupported, sample

__all__ = ["ATTEMPTS", "schema_arguments", "schema_value"]

ATTEMPTS = 24
_MAX_DEPTH = 6
_FORMATS: dict[str, str] = {
    "date-time": "2026-01-15T09:30:00Z",
    "date": "2026-01-15",
    "time": "09:30:00Z",
    "duration": "P1DT2H",
    "email": "someone@example.org",
    "idn-email": "someone@example.org",
    "hostname": "example.org",
    "idn-hostname": "example.org",
    "ipv4": "192.0.2.10",
    "ipv6": "2001:db8::10",
    "uri": "https://example.org/page",
    "url": "https://example.org/page",
    "iri": "https://example.org/page",
    "uri-reference": "https://example.org/page",
    "iri-reference": "https://example.org/page",
    "uri-template": "https://example.org/{id}",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "json-pointer": "/a/b",
    "relative-json-pointer": "0/a",
    "regex": "^[a-z]+$",
    "byte": "aGVsbG8=",
    "binary": "hello",
    "password": "example-password",
}
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def schema_arguments(schema: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """Arguments for a tool whose parameters are ``schema`` (an object schema).

    A multi-action tool's flat schema (an ``action`` enum, each other parameter described
    "Used by action a, b (optional).") is read as a model reads it: one action is chosen
    (the first, or another for another seed) and given the parameters it uses, its required
    ones included.

    Returns:
        A JSON object the schema accepts (see the module docstring); ``{}`` for a schema
        without properties.
    """
    per_action = _action_schema(schema, seed)
    value = schema_value(per_action if per_action is not None else schema, seed)
    return value if isinstance(value, dict) else {}


_USED_BY = re.compile(r"Used by action (?P<users>[^.]*)\.\s*$")


def _action_schema(schema: Mapping[str, Any], seed: int) -> dict[str, Any] | None:
    """The schema of one action of a multi-action tool's flat schema (None: not one)."""
    properties = schema.get("properties")
    action = properties.get("action") if isinstance(properties, Mapping) else None
    names = action.get("enum") if isinstance(action, Mapping) else None
    if not isinstance(properties, Mapping) or not isinstance(names, list) or not names:
        return None
    chosen = names[seed % len(names)]
    kept: dict[str, Any] = {"action": {"const": chosen}}
    required = ["action"]
    for key, prop in properties.items():
        description = prop.get("description") if isinstance(prop, Mapping) else None
        match = _USED_BY.search(description) if isinstance(description, str) else None
        if key == "action" or match is None:
            continue
        for user in (part.strip() for part in match.group("users").split(",")):
            name, _, flag = user.partition(" ")
            if name == chosen:
                kept[key] = prop
                if flag != "(optional)":
                    required.append(key)
    return {**schema, "properties": kept, "required": required}


def schema_value(schema: Mapping[str, Any], seed: int = 0) -> Any:
    """A value ``schema`` accepts, deterministic for ``seed`` (see the module docstring)."""
    validator = _validator(schema)
    candidate: Any = None
    for attempt in range(ATTEMPTS):
        rng = random.Random(f"{seed}:{attempt}")  # noqa: S311 - test data, not secrets
        candidate = _Generator(schema, rng, boldness=attempt + seed).value(schema, "value", 0)
        if validator is None or validator.is_valid(candidate):
            return candidate
    return candidate


def _validator(schema: Mapping[str, Any]) -> Any:
    import jsonschema

    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        return cls(schema, format_checker=cls.FORMAT_CHECKER)
    except (jsonschema.SchemaError, TypeError):
        return None


class _Generator:
    """One attempt. ``boldness`` 0 (seed 0, first attempt) takes the plainest choices (the
    first enum value, the first branch, ``"<name>-example"``); higher values (other seeds,
    later attempts) take other branches and values, and sometimes optional properties."""

    def __init__(self, root: Mapping[str, Any], rng: random.Random, *, boldness: int) -> None:
        self.root = root
        self.rng = rng
        self.boldness = boldness

    def value(self, schema: Any, name: str, depth: int) -> Any:
        if not isinstance(schema, Mapping):
            return None if schema is False else self.word(name)
        schema = self.resolved(schema, depth)
        if "const" in schema:
            return copy.deepcopy(schema["const"])
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            choices = [v for v in enum if v is not None] or enum
            return copy.deepcopy(choices[self.rng.randrange(len(choices))] if self.boldness else choices[0])
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return self.value(self.branch(schema, key, branches), name, depth + 1)
        kind = self.kind(schema)
        maker = getattr(self, f"make_{kind}", None)
        return maker(schema, name, depth) if maker is not None else self.word(name)

    # ------------------------------------------------------------------ structure

    def resolved(self, schema: Mapping[str, Any], depth: int) -> Mapping[str, Any]:
        ref = schema.get("$ref")
        if isinstance(ref, str) and depth < 40:
            target = self.lookup(ref)
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            return self.resolved(merged, depth + 1)
        parts = schema.get("allOf")
        if isinstance(parts, list) and parts:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in parts:
                if isinstance(part, Mapping):
                    merged = _merge(merged, self.resolved(part, depth + 1))
            return merged
        return schema

    def lookup(self, ref: str) -> Mapping[str, Any]:
        if not ref.startswith("#"):
            return {}
        node: Any = self.root
        for part in ref[1:].lstrip("/").split("/") if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")  # noqa: PLW2901 - JSON pointer unescaping
            node = node.get(part) if isinstance(node, Mapping) else None
        return node if isinstance(node, Mapping) else {}

    def branch(self, schema: Mapping[str, Any], key: str, branches: list[Any]) -> Any:
        """A branch: the non-null ones first, in order (a later attempt tries the next)."""
        non_null = [b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")]
        ordered = non_null + [b for b in branches if b not in non_null]
        chosen = ordered[self.boldness % len(ordered)]
        rest = {k: v for k, v in schema.items() if k not in (key, "discriminator")}
        return _merge(rest, chosen) if isinstance(chosen, Mapping) and rest else chosen

    def kind(self, schema: Mapping[str, Any]) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            options = [t for t in declared if t != "null"] or ["null"]
            return str(options[self.boldness % len(options)])
        if isinstance(declared, str):
            return declared
        if "properties" in schema or "required" in schema or "additionalProperties" in schema:
            return "object"
        if "items" in schema or "prefixItems" in schema:
            return "array"
        if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
            return "number"
        return "string"

    # ------------------------------------------------------------------ kinds

    def make_object(self, schema: Mapping[str, Any], name: str, depth: int) -> dict[str, Any]:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = [r for r in schema.get("required") or () if isinstance(r, str)]
        chosen = list(dict.fromkeys(required))
        optional = [p for p in properties if p not in chosen]
        wanted = _int(schema, "minProperties") or 0
        chosen += optional[: max(0, wanted - len(chosen))]
        if schema.get("additionalProperties") is not False:  # a map: invent the keys still missing
            chosen += [f"{name}-key-{n + 1}" for n in range(max(0, wanted - len(chosen)))]
        if depth < _MAX_DEPTH and self.boldness % 3 == 2:  # some attempts fill optional ones too
            chosen += [p for p in optional if p not in chosen]
        dependent = schema.get("dependentRequired")
        if isinstance(dependent, Mapping):
            for key in list(chosen):
                chosen += [d for d in dependent.get(key) or () if isinstance(d, str) and d not in chosen]
        out: dict[str, Any] = {}
        for key in chosen:
            sub = properties.get(key)
            if sub is None:
                extra = schema.get("additionalProperties")
                sub = extra if isinstance(extra, Mapping) else {"type": "string"}
            out[key] = self.value(sub, key, depth + 1)
        return out

    def make_array(self, schema: Mapping[str, Any], name: str, depth: int) -> list[Any]:
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        items = schema.get("items")
        if isinstance(items, list):  # draft 4-7 tuple form
            prefix, items = items, schema.get("additionalItems")
        low, high = _int(schema, "minItems") or 0, _int(schema, "maxItems")
        count = max(low, len(prefix), 1 if depth < _MAX_DEPTH else low)
        if high is not None:
            count = min(count, high)
        out: list[Any] = []
        for index in range(count):
            sub = prefix[index] if index < len(prefix) else (items if isinstance(items, Mapping) else {})
            out.append(self.distinct(sub, f"{name}-{index + 1}", depth, out, bool(schema.get("uniqueItems"))))
        return out

    def distinct(self, sub: Any, name: str, depth: int, taken: list[Any], unique: bool) -> Any:
        value = self.value(sub, name, depth + 1)
        tries = 0
        while unique and value in taken and tries < 20:
            tries += 1
            value = self.value(sub, f"{name}-{tries}", depth + 1)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value in taken:
                value = value + tries
        return value

    def make_string(self, schema: Mapping[str, Any], name: str, depth: int) -> str:
        low, high = _int(schema, "minLength") or 0, _int(schema, "maxLength")
        pattern = schema.get("pattern")
        fmt = schema.get("format")
        if isinstance(pattern, str):
            text = self.patterned(pattern, low, high)
            if text is not None:
                return text
        text = _FORMATS.get(fmt, "") if isinstance(fmt, str) else ""
        if not text:
            text = _by_name(name) or self.word(name)
        if len(text) < low:
            text = text + "x" * (low - len(text))
        if high is not None and len(text) > high:
            text = text[:high]
        return text

    def patterned(self, pattern: str, low: int, high: int | None) -> str | None:
        try:
            compiled = re.compile(pattern)
        except re.error:
            return None
        for _ in range(8):
            try:
                text = sample(pattern, self.rng)
            except (Unsupported, RecursionError):
                return None
            if compiled.search(text) and len(text) >= low and (high is None or len(text) <= high):
                return text
        return None

    def make_integer(self, schema: Mapping[str, Any], name: str, depth: int) -> int:
        low, high = _bounds(schema, integer=True)
        step = schema.get("multipleOf")
        pick = self.pick(low, high, default=1 + self.rng.randrange(9) if self.boldness else 1)
        value = math.floor(pick)
        if isinstance(step, (int, float)) and step > 0:
            value = int(math.ceil(value / step) * step)
            if high is not None and value > high:
                value = int(math.floor(high / step) * step)
        return value

    def make_number(self, schema: Mapping[str, Any], name: str, depth: int) -> float | int:
        low, high = _bounds(schema, integer=False)
        step = schema.get("multipleOf")
        value = self.pick(low, high, default=1.5 if not self.boldness else round(self.rng.uniform(0, 10), 2))
        if isinstance(step, (int, float)) and step > 0:
            value = math.ceil(value / step) * step
            if high is not None and value > high:
                value = math.floor(high / step) * step
            value = round(value, 10)
        return value

    def pick(self, low: float | None, high: float | None, *, default: float) -> float:
        if low is not None and high is not None:
            return low if self.boldness == 0 else self.rng.uniform(low, high)
        if low is not None:
            return max(low, default) if default >= low else low + abs(default)
        if high is not None:
            return min(high, default)
        return default

    def make_boolean(self, schema: Mapping[str, Any], name: str, depth: int) -> bool:
        return True if self.boldness == 0 else self.rng.random() < 0.5

    def make_null(self, schema: Mapping[str, Any], name: str, depth: int) -> None:
        return None

    def word(self, name: str) -> str:
        base = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-") or "value"
        return f"{base}-{_WORDS[self.rng.randrange(len(_WORDS))]}" if self.boldness else f"{base}-example"


_NAMED = (
    (re.compile(r"(?i)(^|_)(url|uri|link|href|endpoint)s?$"), "https://example.org/"),
    (re.compile(r"(?i)(^|_)e?mail(_address)?$"), "someone@example.org"),
    (re.compile(r"(?i)(^|_)(path|file|filename)$"), "example.txt"),
    (re.compile(r"(?i)(^|_)date$"), "2026-01-15"),
)


def _by_name(name: str) -> str | None:
    """A plausible value for a free-form string, from its property's name (``url``, ``path`` ...)."""
    for pattern, value in _NAMED:
        if pattern.search(name):
            return value
    return None


def _int(schema: Mapping[str, Any], key: str) -> int | None:
    value = schema.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bounds(schema: Mapping[str, Any], *, integer: bool) -> tuple[float | None, float | None]:
    def number(key: str) -> float | None:
        value = schema.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    low, high = number("minimum"), number("maximum")
    exclusive_low, exclusive_high = number("exclusiveMinimum"), number("exclusiveMaximum")
    nudge = 1.0 if integer else 1e-6
    if schema.get("exclusiveMinimum") is True and low is not None:  # draft 4 form
        low += nudge
    if schema.get("exclusiveMaximum") is True and high is not None:
        high -= nudge
    if exclusive_low is not None:
        low = max(low, exclusive_low + nudge) if low is not None else exclusive_low + nudge
    if exclusive_high is not None:
        high = min(high, exclusive_high - nudge) if high is not None else exclusive_high - nudge
    if integer:
        low = math.ceil(low) if low is not None else None
        high = math.floor(high) if high is not None else None
    return low, high


def _merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``allOf`` parts combined: properties and required lists joined, other keys overridden."""
    out = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(out.get(key), Mapping) and isinstance(value, Mapping):
            out[key] = {**out[key], **value}
        elif key == "required" and isinstance(out.get(key), list) and isinstance(value, list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        else:
            out[key] = value
    return out
