"""Gemini function declarations: a tool's JSON schema as the OpenAPI 3.0 subset Gemini reads.

Gemini's ``FunctionDeclaration.parameters`` is an OpenAPI 3.0 ``Schema`` object, not JSON
Schema: types are the enum names ``STRING``, ``NUMBER``, ``INTEGER``, ``BOOLEAN``, ``ARRAY``,
``OBJECT``; null is ``nullable: true`` beside a type; ``enum`` holds strings; there is no
``$ref``/``$defs``, no ``additionalProperties``, no ``const``, no ``oneOf``/``allOf``, and an
``OBJECT`` must list its ``properties``. :func:`to_gemini_schema` converts:

* ``$ref`` is inlined (a recursive one cannot be: it becomes an ``OBJECT`` and is reported);
* ``type: [T, "null"]``, ``anyOf [T, {type: null}]`` and a ``null`` in an enum become
  ``nullable: true``; ``oneOf`` becomes ``anyOf``; a one-entry ``allOf`` is merged;
* ``const`` becomes a one-value enum; a string enum stays; a non-string enum keeps its type
  and lists its values in the description (reported: Gemini enums are strings only);
* ``default`` and unsupported formats move into the description; ``title``, ``examples``,
  ``additionalProperties: false`` and pure constraints (``uniqueItems``, ``not``, ...) are
  dropped from the export (validation still uses the original schema);
* constructs that change what may be sent and that Gemini cannot express — a free-form
  object or map (``additionalProperties`` as a schema, ``patternProperties``), ``prefixItems``,
  an untyped value, a recursive ``$ref`` — are exported as near as possible and reported, so
  the caller logs a WARNING naming the tool and the field (as the strict export does).

Pure: no I/O, no logging, inputs never mutated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tools.schema._rules import RefResolver, def_name, describe_default

__all__ = ["GeminiConversion", "to_gemini_schema"]

_TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}
#: Formats Gemini documents per type; any other format moves into the description.
_FORMATS = {"STRING": {"date-time", "enum"}, "NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64"}}
#: Keywords copied as they are, by the type they apply to.
_COPIED = {
    "STRING": ("minLength", "maxLength", "pattern"),
    "NUMBER": ("minimum", "maximum"),
    "INTEGER": ("minimum", "maximum"),
    "ARRAY": ("minItems", "maxItems"),
    "OBJECT": ("minProperties", "maxProperties"),
}
#: Gemini's documented rule for function and parameter names.
GEMINI_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_MAX_DEPTH = 32


@dataclass(frozen=True)
class GeminiConversion:
    """The result of :func:`to_gemini_schema`.

    Attributes:
        schema: The Gemini ``Schema`` object as a fresh dict; None for a tool that takes no
            arguments (Gemini wants ``parameters`` left out then).
        issues: ``(field path, reason)`` for each construct Gemini cannot express.
    """

    schema: dict[str, Any] | None
    issues: tuple[tuple[str, str], ...] = ()


def to_gemini_schema(schema: Mapping[str, Any]) -> GeminiConversion:
    """Convert a tool's parameter schema (JSON Schema) to a Gemini ``Schema`` object."""
    converter = _Converter(schema)
    out = converter.node(schema, "", frozenset(), 0)
    if out.get("type") != "OBJECT":
        converter.issue("", "the parameters are not an object schema; exported as an object with no parameters")
        out = {"type": "OBJECT"}
    for name in out.get("properties", {}):
        if not GEMINI_NAME.match(name):
            converter.issue(name, "Gemini parameter names start with a letter or '_' and hold only [A-Za-z0-9_]")
    if not out.get("properties"):
        return GeminiConversion(None, tuple(converter.issues))
    return GeminiConversion(out, tuple(converter.issues))


class _Converter:
    def __init__(self, root: Mapping[str, Any]) -> None:
        defs = root.get("$defs") if isinstance(root.get("$defs"), Mapping) else root.get("definitions")
        self.refs = RefResolver(root, defs if isinstance(defs, Mapping) else None)
        self.issues: list[tuple[str, str]] = []

    def issue(self, path: str, reason: str) -> None:
        self.issues.append((path or "(root)", reason))

    def node(self, node: Any, path: str, seen: frozenset[str], depth: int) -> dict[str, Any]:
        if node is True or node == {}:
            return self._untyped(path, node if isinstance(node, Mapping) else {})
        if not isinstance(node, Mapping) or depth > _MAX_DEPTH:
            self.issue(path, "a schema node Gemini cannot read; exported as a string")
            return {"type": "STRING"}
        node = self._resolved(node, path, seen)
        if node is None:
            return {"type": "OBJECT", "description": "A nested value of the same shape as its parent."}
        seen = seen | {node["$ref"]} if "$ref" in node else seen
        node = {k: v for k, v in node.items() if k != "$ref"}
        parts = node.get("allOf")
        if isinstance(parts, list) and len(parts) == 1:
            # The node's own keywords (its description) win over the merged schema's.
            own = {k: v for k, v in node.items() if k != "allOf"}
            node = {**self._resolved_or_empty(parts[0], path, seen), **own}
        return self._convert(node, path, seen, depth)

    def _resolved(self, node: Mapping[str, Any], path: str, seen: frozenset[str]) -> dict[str, Any] | None:
        ref = node.get("$ref")
        if ref is None:
            return dict(node)
        if ref in seen:
            self.issue(path, f"a recursive reference ({def_name(ref) or ref}) cannot be inlined; exported as an object")
            return None
        target = self.refs.lookup(ref)
        if not isinstance(target, Mapping):
            self.issue(path, f"an unresolvable reference {str(ref)[:80]!r}; exported as an object")
            return None
        # Sibling keywords (a description beside the $ref) win over the target's.
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}, "$ref": ref}
        inner = target.get("$ref")
        if inner is not None and inner not in seen:
            again = self._resolved({**merged, "$ref": inner}, path, seen | {ref})
            return None if again is None else {**again, "$ref": ref}
        return merged

    def _resolved_or_empty(self, node: Any, path: str, seen: frozenset[str]) -> dict[str, Any]:
        if not isinstance(node, Mapping):
            return {}
        return self._resolved(node, path, seen) or {}

    def _convert(self, node: dict[str, Any], path: str, seen: frozenset[str], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        description = node.get("description") if isinstance(node.get("description"), str) else None
        branches = node.get("anyOf", node.get("oneOf"))
        if isinstance(branches, list) and branches:
            out = self._union(branches, path, seen, depth)
        else:
            kinds, nullable = self._types(node, path)
            if kinds is None:
                return self._untyped(path, node)
            if len(kinds) > 1:
                out = {"anyOf": [self._typed({**node, "type": kind}, kind, path, seen, depth) for kind in kinds]}
            else:
                out = self._typed(node, kinds[0], path, seen, depth)
            if nullable:
                out["nullable"] = True
        if isinstance(node.get("allOf"), list):
            self.issue(path, "allOf with several schemas is not expressible; only the node's own keywords exported")
        for keyword in ("patternProperties", "prefixItems"):
            if keyword in node:
                self.issue(path, f"{keyword} is not expressible; the export accepts a looser shape")
        description = self._merge_description(description, out.pop("description", None))
        if "default" in node and node["default"] is not None:
            description = describe_default(description, node["default"])
        if description:
            out["description"] = description
        return out

    def _types(self, node: Mapping[str, Any], path: str) -> tuple[list[str] | None, bool]:
        kind = node.get("type")
        kinds = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
        values = self._values(node)
        if not kinds and values is not None:
            kinds = sorted({_json_type(v) for v in values if v is not None}) or ["string"]
            if "integer" in kinds and "number" in kinds:
                kinds.remove("integer")
        nullable = "null" in kinds or (values is not None and None in values)
        kinds = [k for k in kinds if k != "null"]
        unknown = [k for k in kinds if k not in _TYPES]
        if unknown:
            self.issue(path, f"unknown type {unknown[0]!r}")
            kinds = [k for k in kinds if k in _TYPES]
        if not kinds:
            return (None, nullable) if not nullable else (["string"], True)
        return kinds, nullable

    @staticmethod
    def _values(node: Mapping[str, Any]) -> list[Any] | None:
        if "const" in node:
            return [node["const"]]
        enum = node.get("enum")
        return list(enum) if isinstance(enum, list) else None

    def _typed(self, node: Mapping[str, Any], kind: str, path: str, seen: frozenset[str], depth: int) -> dict[str, Any]:
        gemini = _TYPES[kind]
        out: dict[str, Any] = {"type": gemini}
        for keyword in _COPIED.get(gemini, ()):
            value = node.get(keyword)
            if isinstance(value, int | float) or (keyword == "pattern" and isinstance(value, str)):
                out[keyword] = value
        extra = self._format(node, gemini, out) + self._enum(node, kind, path, out)
        if gemini == "ARRAY":
            items = node.get("items")
            if items is None:
                self.issue(path, "an array without items; exported as an array of strings")
                out["items"] = {"type": "STRING"}
            else:
                out["items"] = self.node(items, f"{path}[]", seen, depth + 1)
        elif gemini == "OBJECT":
            self._object(node, out, path, seen, depth)
        if extra:
            out["description"] = " ".join(extra)
        return out

    @staticmethod
    def _format(node: Mapping[str, Any], gemini: str, out: dict[str, Any]) -> list[str]:
        """Copy a format Gemini knows; any other goes to the description (returned)."""
        fmt = node.get("format")
        if not isinstance(fmt, str):
            return []
        if fmt in _FORMATS.get(gemini, ()):
            out["format"] = fmt
            return []
        return [f"Format: {fmt}."]

    def _enum(self, node: Mapping[str, Any], kind: str, path: str, out: dict[str, Any]) -> list[str]:
        """A string enum as is; other enums as text for the description (returned)."""
        values = self._values(node)
        if values is None:
            return []
        concrete = [v for v in values if v is not None and _matches(v, kind)]
        if kind == "string":
            out["enum"] = [str(v) for v in concrete]
            return []
        self.issue(path, f"an enum of {kind} values: Gemini enums are strings; the values are in the description")
        return ["One of: " + ", ".join(_literal(v) for v in concrete) + "."]

    def _object(
        self, node: Mapping[str, Any], out: dict[str, Any], path: str, seen: frozenset[str], depth: int
    ) -> None:
        properties = node.get("properties")
        props: dict[str, Any] = {}
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                props[name] = self.node(sub, f"{path}.{name}" if path else str(name), seen, depth + 1)
        additional = node.get("additionalProperties")
        if additional not in (None, False) and (additional is True or isinstance(additional, Mapping)):
            self.issue(path, "a free-form object or map (additionalProperties) is not expressible; keys not described")
        elif not props and depth > 0 and "patternProperties" not in node:
            self.issue(path, "an object without properties (free-form) is not expressible; keys not described")
        if props:
            out["properties"] = props
            required = node.get("required")
            if isinstance(required, list):
                kept = [name for name in required if name in props]
                if kept:
                    out["required"] = kept

    def _union(self, branches: list[Any], path: str, seen: frozenset[str], depth: int) -> dict[str, Any]:
        nullable = False
        kept: list[Any] = []
        for branch in branches:
            if isinstance(branch, Mapping) and (branch.get("type") == "null" or branch.get("const", 0) is None):
                nullable = True
            else:
                kept.append(branch)
        if not kept:
            return {"type": "STRING", "nullable": True}
        converted = [self.node(branch, path, seen, depth + 1) for branch in kept]
        out: dict[str, Any] = converted[0] if len(converted) == 1 else {"anyOf": converted}
        if nullable:
            out["nullable"] = True
        return out

    def _untyped(self, path: str, node: Mapping[str, Any]) -> dict[str, Any]:
        self.issue(path, "an untyped value (any JSON) is not expressible; exported as a string")
        out: dict[str, Any] = {"type": "STRING"}
        description = node.get("description")
        if isinstance(description, str) and description:
            out["description"] = description
        return out

    @staticmethod
    def _merge_description(first: str | None, second: str | None) -> str | None:
        if first and second:
            return f"{first} {second}"
        return first or second


def _matches(value: Any, kind: str) -> bool:
    found = _json_type(value)
    return found == kind or (kind == "number" and found == "integer")


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int in Python
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "null")


def _literal(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
