"""The rulebook of OpenAI strict mode: keyword tables, null admission, limits.

Pure helpers for :mod:`tools._strict`. Nothing here does I/O or keeps state between calls.
The rules come from ``../shared/STRICT.md`` (OpenAI's Structured Outputs documentation and
the ``openai`` SDK's strict transform).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from itertools import chain, islice
from typing import Any

#: ``dict`` first: most nodes are dicts and the ABC check is slow on the hot path.
_MAP = (dict, Mapping)

#: JSON Schema's type names. Anything else in ``type`` (``"float"``, ``"dict"``) is invalid.
JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})

#: Scalar types that may be made nullable with ``type: [T, "null"]``.
SCALAR_TYPES = frozenset({"string", "number", "integer", "boolean"})

#: ``format`` values strict mode accepts on strings; other formats are dropped.
ALLOWED_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})

#: Numeric constraint keywords strict mode accepts on number and integer nodes.
NUMBER_KEYWORDS = ("multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")

#: Array constraint keywords strict mode accepts.
ARRAY_KEYWORDS = ("minItems", "maxItems")

#: Keywords that change what may be sent and that strict mode cannot express, with why.
UNSUPPORTED_KEYWORDS: Mapping[str, str] = {
    "patternProperties": "patternProperties (keys matching a pattern) cannot be expressed in "
    "strict mode; declare the keys as properties",
    "prefixItems": "a tuple (prefixItems) cannot be expressed in strict mode; use a list of "
    "one item type or an object with named fields",
    "if": "if/then/else cannot be expressed in strict mode",
    "then": "if/then/else cannot be expressed in strict mode",
    "else": "if/then/else cannot be expressed in strict mode",
    "dependentSchemas": "dependentSchemas cannot be expressed in strict mode",
    "unevaluatedProperties": "unevaluatedProperties cannot be expressed in strict mode",
    "unevaluatedItems": "unevaluatedItems cannot be expressed in strict mode",
    "$dynamicRef": "$dynamicRef cannot be resolved for strict mode; use $defs and $ref",
    "$recursiveRef": "$recursiveRef cannot be resolved for strict mode; use $defs and $ref",
}

#: Keywords that carry structure: a ``$ref`` beside one of these must be inlined or merged.
#: Everything not listed (``title``, ``default``, ``examples``, ``minLength`` ...) is dropped.
MEANINGFUL_KEYWORDS = frozenset(
    {
        "type",
        "description",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "pattern",
        "format",
        *NUMBER_KEYWORDS,
        *ARRAY_KEYWORDS,
        *UNSUPPORTED_KEYWORDS,
    }
)

#: Limits of STRICT.md rule 9 (hard) and the older limits some deployments state (warn).
MAX_PROPERTIES = 5_000
MAX_NESTING = 10
MAX_STRING_TOTAL = 120_000
MAX_ENUM_VALUES = 1_000
LARGE_STRING_ENUM = 250
MAX_LARGE_ENUM_CHARS = 15_000
LEGACY_MAX_PROPERTIES = 100
LEGACY_MAX_NESTING = 5

#: Schema nesting past which null admission is not examined further.
MAX_NULL_DEPTH = 64

#: Argument values nested deeper are left as they are by :func:`strip_nulls`.
MAX_VALUE_DEPTH = 200
#: Cap on the alternatives a union expands to while stripping nulls.
MAX_ALTERNATIVES = 64
#: Cap on the schema nodes one alternative of a union holds while stripping nulls.
MAX_CONJUNCTION = 64

#: Longest JSON text of a default that is quoted in a description.
MAX_DEFAULT_TEXT = 200


def declared_types(node: Mapping[str, Any]) -> list[str] | None:
    """The ``type`` of a node as a list, or None when it has none or it is malformed."""
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        return list(dict.fromkeys(kind))
    return None


def _is_integer(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


_TYPE_CHECKS: Mapping[str, Any] = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list | tuple),
    "object": lambda v: isinstance(v, _MAP),
}


def value_matches_type(value: Any, kind: str) -> bool:
    """Whether a JSON value is an instance of JSON Schema type ``kind`` (False if unknown)."""
    check = _TYPE_CHECKS.get(kind)
    return bool(check(value)) if check is not None else False


def describe_default(description: str | None, default: Any) -> str:
    """``description`` with "Defaults to X." appended (the value JSON-encoded).

    A string default is quoted with single quotes (``Defaults to 'metric'.``); a default
    whose JSON text is longer than :data:`MAX_DEFAULT_TEXT` characters or that is not
    JSON-serialisable is mentioned without its value.
    """
    if isinstance(default, str):
        inner = json.dumps(default, ensure_ascii=False)[1:-1].replace("'", "\\'")
        text = f"'{inner}'"
    else:
        try:
            text = json.dumps(default, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            text = ""
    sentence = (
        f"Defaults to {text}."
        if text and len(text) <= MAX_DEFAULT_TEXT
        else "Has a default value, used when null is sent."
    )
    base = (description or "").rstrip()
    if not base:
        return sentence
    if base[-1] not in ".!?":
        base += "."
    return f"{base} {sentence}"


class RefResolver:
    """Looks up local ``$ref`` targets: ``#``, ``#/$defs/X``, ``#/definitions/X``, pointers.

    Args:
        root: The whole schema (for ``#`` and JSON pointers), or None.
        defs: A name -> schema mapping used for ``#/$defs/X`` and ``#/definitions/X``
            before looking into ``root``; None to use the root's own ``$defs``.
    """

    def __init__(self, root: Mapping[str, Any] | None, defs: Mapping[str, Any] | None) -> None:
        self._root = root
        self._defs = defs

    def lookup(self, ref: Any) -> Any:
        """The target of ``ref``, or None when it is not a resolvable local reference."""
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        if ref == "#":
            return self._root
        parts = [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")]
        if len(parts) == 2 and parts[0] in ("$defs", "definitions") and self._defs is not None:
            target = self._defs.get(parts[1])
            if target is not None:
                return target
        node: Any = self._root
        for part in parts:
            if isinstance(node, _MAP):
                node = node.get(part)
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node


def admits_null(
    node: Any,
    refs: RefResolver,
    seen: frozenset[str] = frozenset(),
    depth: int = 0,
    memo: dict[tuple[int, frozenset[str]], bool] | None = None,
) -> bool:
    """Whether ``null`` may be valid under ``node`` (see :func:`tools._strict.schema_admits_null`).

    Unresolvable or cyclic references, malformed nodes and nodes nested past
    :data:`MAX_NULL_DEPTH` count as admitting null: the answer errs on the side of keeping
    a null the model sent. ``memo`` (by node identity) keeps repeated sub-schemas from
    being examined again.
    """
    if node is False:
        return False
    if not isinstance(node, _MAP) or depth > MAX_NULL_DEPTH:
        return True
    if memo is None:
        memo = {}
    key = (id(node), seen)
    if key not in memo:
        memo[key] = _own_admits_null(node) and _parts_admit_null(node, refs, seen, depth, memo)
    return memo[key]


def _own_admits_null(node: Mapping[str, Any]) -> bool:
    kinds = node.get("type")
    if (isinstance(kinds, str) and kinds != "null") or (isinstance(kinds, list) and "null" not in kinds):
        return False
    enum = node.get("enum")
    if isinstance(enum, list) and None not in enum:
        return False
    return "const" not in node or node["const"] is None


def _parts_admit_null(
    node: Mapping[str, Any],
    refs: RefResolver,
    seen: frozenset[str],
    depth: int,
    memo: dict[tuple[int, frozenset[str]], bool],
) -> bool:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        target = refs.lookup(ref)
        if target is not None and not admits_null(target, refs, seen | {ref}, depth + 1, memo):
            return False
    all_of = node.get("allOf")
    if isinstance(all_of, list) and not all(admits_null(e, refs, seen, depth + 1, memo) for e in all_of):
        return False
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and not any(admits_null(b, refs, seen, depth + 1, memo) for b in branches):
            return False
    return True


class _Measure:
    """One walk over a strict schema: counts for STRICT.md rule 9 and object nesting depth."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.properties = 0
        self.chars = 0
        self.enum_values = 0
        self.problems: list[tuple[str, str]] = []
        self._depths: dict[str, int] = {}

    def def_depth(self, name: str) -> int:
        """Nesting depth of a definition, measured (and counted) once; a cycle adds 0."""
        if name not in self._depths:
            self._depths[name] = 0
            self.chars += len(name)
            self._depths[name] = self.walk(self.defs.get(name), f"$defs.{name}")
        return self._depths[name]

    def walk(self, node: Any, path: str) -> int:
        """Count ``node``'s subtree; return its levels of object nesting (an object is 1).

        ``node`` is the converter's own output: dicts and lists of known shapes.
        """
        if type(node) is not dict:
            return 0
        ref = node.get("$ref")
        if ref is not None:
            if str(ref).startswith("#/$defs/"):
                name = ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
                return self.def_depth(name)
            return 0
        inner = 0
        props = node.get("properties")
        if props is not None:
            self.properties += len(props)
            for name, sub in props.items():
                self.chars += len(name)
                inner = max(inner, self.walk(sub, f"{path}.{name}" if path else name))
        items = node.get("items")
        if items is not None:
            inner = max(inner, self.walk(items, f"{path}[]"))
        for branch in node.get("anyOf", ()):
            inner = max(inner, self.walk(branch, path))
        enum = node.get("enum")
        if enum is not None:
            self._enum(enum, path)
        const = node.get("const")
        if type(const) is str:
            self.chars += len(const)
        return inner + (props is not None)

    def _enum(self, values: list[Any], path: str) -> None:
        self.enum_values += len(values)
        strings = [v for v in values if isinstance(v, str)]
        size = sum(len(v) for v in strings)
        self.chars += size
        if len(strings) > LARGE_STRING_ENUM and size > MAX_LARGE_ENUM_CHARS:
            self.problems.append(
                (
                    path,
                    f"an enum of {len(strings)} strings totalling {size} characters; strict mode "
                    f"allows {MAX_LARGE_ENUM_CHARS} characters when an enum has more than "
                    f"{LARGE_STRING_ENUM} values",
                )
            )


def check_limits(schema: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """Check a strict schema against STRICT.md rule 9.

    Returns:
        ``(problems, warnings)``: problems are ``(path, reason)`` pairs for hard limits
        exceeded; warnings name the older 100 properties / 5 levels limits when passed.
    """
    defs = schema.get("$defs")
    measure = _Measure(defs if isinstance(defs, _MAP) else {})
    depth = measure.walk(schema, "")
    for name in measure.defs:
        measure.def_depth(name)
    problems = list(measure.problems)
    if measure.properties > MAX_PROPERTIES:
        problems.append(("", f"{measure.properties} properties in all; strict mode allows {MAX_PROPERTIES}"))
    if depth > MAX_NESTING:
        problems.append(("", f"{depth} levels of object nesting; strict mode allows {MAX_NESTING}"))
    if measure.chars > MAX_STRING_TOTAL:
        problems.append(
            (
                "",
                f"property names, definition names, enum and const values total "
                f"{measure.chars} characters; strict mode allows {MAX_STRING_TOTAL}",
            )
        )
    if measure.enum_values > MAX_ENUM_VALUES:
        problems.append(("", f"{measure.enum_values} enum values in all; strict mode allows {MAX_ENUM_VALUES}"))
    warnings = []
    if measure.properties > LEGACY_MAX_PROPERTIES:
        warnings.append(
            f"{measure.properties} properties in all: more than the {LEGACY_MAX_PROPERTIES} "
            "that some deployments (older Azure OpenAI docs) accept under strict mode"
        )
    if depth > LEGACY_MAX_NESTING:
        warnings.append(
            f"{depth} levels of object nesting: more than the {LEGACY_MAX_NESTING} that some "
            "deployments (older Azure OpenAI docs) accept under strict mode"
        )
    return problems, warnings


# -- null stripping (the runtime half of "a null means the default") ----------------------


def strip_nulls(value: Any, schema: Any, defs: Mapping[str, Any] | None) -> Any:
    """Implementation of :func:`tools._strict.strip_disallowed_nulls` (see there)."""
    if not _has_none(value, 0):
        return value
    stripper = _NullStripper(RefResolver(schema if isinstance(schema, _MAP) else None, defs))
    return stripper.strip(value, stripper.alternatives(schema), 0)


def _has_none(value: Any, depth: int) -> bool:
    if depth > MAX_VALUE_DEPTH:
        return False
    if isinstance(value, _MAP):
        return any(v is None or _has_none(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_none(v, depth + 1) for v in value)
    return False


_COMBINATORS = frozenset({"$ref", "allOf", "anyOf", "oneOf"})

#: A conjunction of plain schema nodes (their $ref/allOf/anyOf already expanded).
_Conj = tuple[Mapping[str, Any], ...]


def _join(left: _Conj, right: _Conj) -> _Conj:
    """Both conjunctions as one, each node once, at most :data:`MAX_CONJUNCTION` nodes.

    Cutting a conjunction short can only make a null look allowed, so a null is kept.
    """
    ids = {id(n) for n in left}
    return (left + tuple(n for n in right if id(n) not in ids))[:MAX_CONJUNCTION]


def _capped_product(left: list[_Conj], right: list[_Conj]) -> list[_Conj]:
    if left == [()]:
        return right[:MAX_ALTERNATIVES]
    return list(islice((_join(a, b) for a in left for b in right), MAX_ALTERNATIVES))


class _NullStripper:
    """One strip: the schema's references and memos that keep unions from exploding."""

    def __init__(self, refs: RefResolver) -> None:
        self.refs = refs
        self._alts: dict[tuple[int, frozenset[str]], list[_Conj]] = {}
        self._nulls: dict[tuple[int, frozenset[str]], bool] = {}

    def alternatives(self, node: Any, seen: frozenset[str] = frozenset(), depth: int = 0) -> list[_Conj]:
        """``node`` as a disjunction of conjunctions of plain nodes (capped, memoised)."""
        if node is False:
            return []
        if not isinstance(node, _MAP) or depth > MAX_NULL_DEPTH:
            return [()]
        if _COMBINATORS.isdisjoint(node):
            return [(node,)]
        key = (id(node), seen)
        cached = self._alts.get(key)
        if cached is not None:
            return cached
        parts: list[list[_Conj]] = [[(node,)]]
        ref = node.get("$ref")
        if isinstance(ref, str) and ref not in seen:
            target = self.refs.lookup(ref)
            if target is not None:
                parts.append(self.alternatives(target, seen | {ref}, depth + 1))
        if isinstance(node.get("allOf"), list):
            parts.extend(self.alternatives(e, seen, depth + 1) for e in node["allOf"])
        for name in ("anyOf", "oneOf"):
            if isinstance(node.get(name), list):
                branches = (self.alternatives(b, seen, depth + 1) for b in node[name])
                parts.append(list(islice(chain.from_iterable(branches), MAX_ALTERNATIVES)))
        result: list[_Conj] = [()]
        for part in parts:
            result = _capped_product(result, part)
        self._alts[key] = result
        return result

    def product(self, schemas: list[Any]) -> list[_Conj]:
        result: list[_Conj] = [()]
        for sub in schemas:
            result = _capped_product(result, self.alternatives(sub))
        return result

    def admits_null(self, node: Any) -> bool:
        key = (id(node), frozenset[str]())
        if key not in self._nulls:
            self._nulls[key] = admits_null(node, self.refs, memo=self._nulls)
        return self._nulls[key]

    def strip(self, value: Any, alts: list[_Conj], depth: int) -> Any:
        if depth > MAX_VALUE_DEPTH:
            return value
        if isinstance(value, _MAP):
            return self._strip_object(value, alts, depth)
        if isinstance(value, list):
            return self._strip_array(value, alts, depth)
        return value

    def _strip_object(self, value: Mapping[str, Any], alts: list[_Conj], depth: int) -> Any:
        views = [c for c in alts if _may_be(c, "object")]
        views = [c for c in views if _fits(c, value)] or views
        if not views:
            return value
        out: dict[str, Any] | None = None
        for key, item in value.items():
            declared = [s for s in (_property_schemas(c, key) for c in views) if s]
            if not declared:
                continue
            if item is None:
                if not any(all(self.admits_null(s) for s in group) for group in declared):
                    out = dict(value) if out is None else out
                    del out[key]
            elif isinstance(item, Mapping | list):
                subs = chain.from_iterable(self.product(group) for group in declared)
                new = self.strip(item, list(islice(subs, MAX_ALTERNATIVES)), depth + 1)
                if new is not item:
                    out = dict(value) if out is None else out
                    out[key] = new
        return value if out is None else out

    def _strip_array(self, value: list[Any], alts: list[_Conj], depth: int) -> Any:
        views = [c for c in alts if _may_be(c, "array")]
        if not views:
            return value
        positional = max(
            (len(n[k]) for c in views for n in c for k in ("prefixItems", "items") if isinstance(n.get(k), list)),
            default=0,
        )
        cache: dict[int, list[_Conj]] = {}
        out: list[Any] | None = None
        for index, item in enumerate(value):
            if not isinstance(item, Mapping | list):
                continue
            slot = min(index, positional)
            if slot not in cache:
                subs = chain.from_iterable(self.product(_item_schemas(c, index)) for c in views)
                cache[slot] = list(islice(subs, MAX_ALTERNATIVES))
            new = self.strip(item, cache[slot], depth + 1)
            if new is not item:
                out = list(value) if out is None else out
                out[index] = new
        return value if out is None else out


def _may_be(conj: _Conj, kind: str) -> bool:
    return all(kind in (declared_types(n) or [kind]) for n in conj)


def _fits(conj: _Conj, value: Mapping[str, Any]) -> bool:
    """False when a required key is missing or a const/enum property does not match."""
    for node in conj:
        required = node.get("required")
        if isinstance(required, list) and any(k not in value for k in required):
            return False
        props = node.get("properties")
        if not isinstance(props, _MAP):
            continue
        for key, item in value.items():
            sub = props.get(key)
            if item is None or not isinstance(sub, _MAP):
                continue
            if "const" in sub and sub["const"] != item:
                return False
            if isinstance(sub.get("enum"), list) and item not in sub["enum"]:
                return False
    return True


def _property_schemas(conj: _Conj, key: str) -> list[Any]:
    found: list[Any] = []
    for node in conj:
        props = node.get("properties")
        if isinstance(props, _MAP) and key in props:
            found.append(props[key])
            continue
        patterns = node.get("patternProperties")
        matched = False
        if isinstance(patterns, _MAP):
            for pattern, sub in patterns.items():
                try:
                    if re.search(pattern, key):
                        found.append(sub)
                        matched = True
                except (re.error, TypeError):
                    continue
        extra = node.get("additionalProperties")
        if not matched and isinstance(extra, _MAP):
            found.append(extra)
    return found


def _item_schemas(conj: _Conj, index: int) -> list[Any]:
    found: list[Any] = []
    for node in conj:
        prefix = node.get("prefixItems")
        items = node.get("items")
        if isinstance(prefix, list) and index < len(prefix):
            found.append(prefix[index])
        elif isinstance(items, list) and index < len(items):  # draft 4 tuples
            found.append(items[index])
        elif isinstance(items, _MAP):
            found.append(items)
    return found
