"""The rulebook of OpenAI strict mode: keyword tables, null admission, limits, node shapes.

Pure helpers for :mod:`tools.schema._strict`. Nothing here does I/O or keeps state between calls.
The rules come from ``../shared/STRICT.md`` (OpenAI's Structured Outputs documentation and
the ``openai`` SDK's strict transform).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
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
UNSUPPORTED_KEYWORDS: Mapping[str, str] = MappingProxyType(
    {
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
)

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
#: Deeper schemas are cut off by the converter (an unsupported issue).
MAX_SCHEMA_DEPTH = 64

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


_TYPE_CHECKS: Mapping[str, Any] = MappingProxyType(
    {
        "null": lambda v: v is None,
        "boolean": lambda v: isinstance(v, bool),
        "integer": _is_integer,
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "string": lambda v: isinstance(v, str),
        "array": lambda v: isinstance(v, list | tuple),
        "object": lambda v: isinstance(v, _MAP),
    }
)


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
    """Whether ``null`` may be valid under ``node`` (see :func:`tools.schema._strict.schema_admits_null`).

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


# -- shapes the converter builds ---------------------------------------------------------


def escape_pointer(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def def_name(ref: str) -> str | None:
    """``X`` for ``#/$defs/X`` or ``#/definitions/X`` (pointer-unescaped), else None."""
    for prefix in ("#/$defs/", "#/definitions/"):
        rest = ref[len(prefix) :]
        if ref.startswith(prefix) and rest and "/" not in rest:
            return rest.replace("~1", "/").replace("~0", "~")
    return None


def single_value(node: Any) -> bool:
    if not isinstance(node, _MAP):
        return False
    enum = node.get("enum")
    return "const" in node or (isinstance(enum, list) and len(enum) == 1)


def discriminator_names(root: Mapping[str, Any]) -> frozenset[str]:
    """The ``discriminator.propertyName`` of every union anywhere in ``root``."""
    names: set[str] = set()
    stack: list[tuple[Any, int]] = [(root, 0)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if id(node) in seen or depth > MAX_SCHEMA_DEPTH:
            continue
        seen.add(id(node))
        if isinstance(node, _MAP):
            tag = node.get("discriminator")
            if isinstance(tag, _MAP) and isinstance(tag.get("propertyName"), str):
                names.add(tag["propertyName"])
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return frozenset(names)


def nullable(core: dict[str, Any]) -> dict[str, Any]:
    """``core`` that also admits null, in the form strict mode honours."""
    kind = core.get("type")
    if isinstance(kind, str) and kind in SCALAR_TYPES and "enum" not in core and "const" not in core:
        return {**core, "type": [kind, "null"]}
    if not core:
        return core
    null = {"type": "null"}
    if set(core) <= {"anyOf", "description"}:
        branches = core["anyOf"] if null in core["anyOf"] else [*core["anyOf"], null]
        return {**core, "anyOf": branches}
    wrapped: dict[str, Any] = {"anyOf": [{k: v for k, v in core.items() if k != "description"}, null]}
    if "description" in core and "$ref" not in core:
        wrapped["description"] = core["description"]
    return wrapped
