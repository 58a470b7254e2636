"""Schemas written in the dialects of public function-calling corpora, made JSON Schema.

BFCL writes ``"type": "dict"``, ``"float"``, ``"tuple"`` and ``"any"``; APIGen/xLAM writes
a bare map of parameters with Python type names (``"str, optional"``, ``"List[int]"``).
:func:`normalize_parameters` turns both into standard JSON Schema and reports each change,
so such schemas register, validate and export like hand-written ones.

Both corpora write a Python default of ``None`` as the string ``"None"`` (BFCL) or as
``null`` on a type that does not admit null: it means "no default value is sent". Left in,
it would be filled into a call that left the argument out (``find(path='.')`` searching for
files named "None"), so such a ``default`` is removed from an optional parameter and the
function's own default applies. A ``null`` default on a type that admits null is a real
value and stays.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

_TYPE_NAMES: dict[str, str] = {
    "dict": "object",
    "object": "object",
    "map": "object",
    "hashmap": "object",
    "hashtable": "object",
    "mapping": "object",
    "float": "number",
    "double": "number",
    "number": "number",
    "decimal": "number",
    "int": "integer",
    "integer": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "bigint": "integer",
    "str": "string",
    "string": "string",
    "char": "string",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "arraylist": "array",
    "tuple": "array",
    "set": "array",
    "sequence": "array",
    "queue": "array",
    "stack": "array",
    "null": "null",
    "none": "null",
}
_GENERIC = re.compile(r"^(?P<outer>[A-Za-z_.]+)\s*\[(?P<inner>.*)\]$")
_OPTIONAL_SUFFIX = re.compile(r",?\s*optional\s*$", re.I)
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
# Keywords whose value is a map from *names* to schemas (names are never rewritten).
_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames")


def _convert_type(text: str) -> tuple[dict[str, Any] | None, bool]:
    """A type string of a dialect as a schema fragment, and whether it said "optional"."""
    optional = bool(_OPTIONAL_SUFFIX.search(text))
    text = _OPTIONAL_SUFFIX.sub("", text).strip()
    generic = _GENERIC.match(text)
    if generic:
        outer, inner = generic.group("outer").split(".")[-1].lower(), generic.group("inner").strip()
        fragment, inner_optional = _convert_generic(outer, inner)
        return fragment, optional or inner_optional
    lowered = text.lower()
    if lowered in ("any", "anytype", ""):
        return {}, optional
    mapped = _TYPE_NAMES.get(lowered)
    return ({"type": mapped} if mapped else None), optional


def _convert_generic(outer: str, inner: str) -> tuple[dict[str, Any] | None, bool]:
    """``List[int]``, ``Optional[str]``, ``Dict[str, int]``, ``Union[int, None]``."""
    if outer == "optional":
        return _convert_type(inner)[0], True
    if outer in {"list", "sequence", "set", "tuple", "array"}:
        item = _convert_type(inner.split(",", maxsplit=1)[0])[0] if inner else None
        return ({"type": "array", "items": item} if item else {"type": "array"}), False
    if outer in {"dict", "mapping"}:
        return {"type": "object"}, False
    if outer == "union":
        branches = [_convert_type(part)[0] for part in inner.split(",")]
        kinds = [b["type"] for b in branches if b and isinstance(b.get("type"), str)]
        return ({"type": kinds} if kinds else None), "null" in kinds
    return None, False


def _normalize_type(node: dict[str, Any], path: str, changes: list[str]) -> None:
    kind = node.get("type")
    if isinstance(kind, str) and kind not in _JSON_TYPES:
        fragment, _ = _convert_type(kind)
        if fragment is not None:
            node.pop("type")
            node.update({k: v for k, v in fragment.items() if k not in node or k == "type"})
            changes.append(f"{path or '(root)'}: type {kind!r} -> {fragment.get('type', 'any')!r}")
    elif isinstance(kind, list):
        mapped = [k if k in _JSON_TYPES else _TYPE_NAMES.get(str(k).lower(), k) for k in kind]
        if mapped != kind:
            node["type"] = mapped
            changes.append(f"{path or '(root)'}: type {kind!r} -> {mapped!r}")


def _admits_null(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    branches = node.get("anyOf") or node.get("oneOf") or ()
    return any(isinstance(b, Mapping) and _admits_null(b) for b in branches)


def _drop_none_defaults(node: dict[str, Any], path: str, changes: list[str]) -> None:
    """Remove the corpora's "no default" markers from the optional properties of ``node``."""
    properties = node.get("properties")
    if not isinstance(properties, dict):
        return
    required = node.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    for name, sub in properties.items():
        if name in required_names or not isinstance(sub, dict) or "default" not in sub:
            continue
        default = sub["default"]
        if default == "None" or (default is None and not _admits_null(sub)):
            del sub["default"]
            where = f"{path}.{name}" if path else name
            changes.append(f"{where}: default {default!r} means no default value is sent; removed")


def _normalize_node(node: Any, path: str, changes: list[str]) -> Any:
    if not isinstance(node, dict):
        return node
    _normalize_type(node, path, changes)
    _drop_none_defaults(node, path, changes)
    for key in _NAME_MAPS:
        if isinstance(node.get(key), dict):
            for name, sub in node[key].items():
                _normalize_node(sub, f"{path}.{name}" if path else name, changes)
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            for index, sub in enumerate(node[key]):
                _normalize_node(sub, f"{path}[{key}{index}]", changes)
    for key in _SCHEMA_VALUES:
        if isinstance(node.get(key), dict):
            _normalize_node(node[key], f"{path}[]" if key == "items" else f"{path}.{key}", changes)
    return node


def _is_parameter_map(schema: Mapping[str, Any]) -> bool:
    """APIGen/xLAM style: ``{"city": {"type": "str", ...}, ...}`` with no object wrapper."""
    if not schema or "type" in schema or "properties" in schema or "$schema" in schema:
        return False
    return all(isinstance(v, Mapping) and ("type" in v or "description" in v) for v in schema.values())


def normalize_parameters(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return ``schema`` as standard JSON Schema and the list of changes made (a fresh copy).

    A schema that is already standard comes back equal, with no changes. A bare map of
    parameters is wrapped into an object whose ``required`` lists the parameters without a
    ``default`` and not marked optional.
    """
    out = copy.deepcopy(dict(schema))
    changes: list[str] = []
    if _is_parameter_map(out):
        required = []
        for name, sub in out.items():
            kind = sub.get("type")
            optional = isinstance(kind, str) and (_convert_type(kind)[1])
            if "default" not in sub and not optional and not sub.get("optional"):
                required.append(name)
            sub.pop("optional", None)
        out = {"type": "object", "properties": out, "required": required}
        changes.append("(root): a bare map of parameters wrapped into an object schema")
    _normalize_node(out, "", changes)
    return out, changes
