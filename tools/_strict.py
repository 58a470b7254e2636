"""OpenAI strict mode: the schema transform and its partner, null stripping.

:func:`to_strict_schema` turns any JSON schema for a tool's parameters (pydantic's output
or a hand-written one) into the subset OpenAI accepts with ``strict: true`` (the rules are
in ``../shared/STRICT.md``). An optional property becomes required and nullable, its
default moves into the description, and :func:`strip_disallowed_nulls` later turns the
``null`` the model sends for it back into "use the default".

Both functions are pure: no I/O, no logging, no state between calls, inputs never mutated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tools._strict_rules import (
    ALLOWED_FORMATS,
    ARRAY_KEYWORDS,
    JSON_TYPES,
    MEANINGFUL_KEYWORDS,
    NUMBER_KEYWORDS,
    SCALAR_TYPES,
    UNSUPPORTED_KEYWORDS,
    RefResolver,
    admits_null,
    check_limits,
    declared_types,
    describe_default,
    value_matches_type,
)

__all__ = [
    "StrictConversion",
    "StrictIssue",
    "schema_admits_null",
    "strip_disallowed_nulls",
    "to_strict_schema",
]

#: Deeper schemas are cut off (an unsupported issue): strict mode allows 10 object levels.
_MAX_SCHEMA_DEPTH = 64
#: Deeper argument values are left as they are by :func:`strip_disallowed_nulls`.
_MAX_VALUE_DEPTH = 200
#: Cap on the alternatives a union expands to while stripping nulls.
_MAX_ALTERNATIVES = 64
_MISSING: Any = object()


@dataclass(frozen=True)
class StrictIssue:
    """A construct strict mode cannot express.

    Attributes:
        path: Where, as a field path: ``filters``, ``items[].tags``; ``(root)`` for the
            top level.
        reason: What strict mode cannot express there and what to do, for a developer.
    """

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class StrictConversion:
    """The result of :func:`to_strict_schema`.

    Attributes:
        schema: The strict schema, a fresh dict.
        unsupported: What strict mode cannot express; when non-empty the tool must be
            exported with ``strict: false`` (``schema`` is then a best effort only).
        warnings: Softer findings, e.g. the schema passes the older 100 properties /
            5 levels limits that some deployments still state.
    """

    schema: dict[str, Any]
    unsupported: tuple[StrictIssue, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the schema can be exported with ``strict: true``."""
        return not self.unsupported


def to_strict_schema(schema: Mapping[str, Any]) -> StrictConversion:
    """Convert a tool's parameter schema to OpenAI's strict subset.

    Every object gets ``additionalProperties: false`` and lists all its properties in
    ``required``; a property that was optional becomes nullable (``type: [T, "null"]``, or
    ``anyOf [X, {"type": "null"}]`` for enums, consts, refs, unions and objects) with its
    non-null default stated in the description ("Defaults to 10."); ``default``,
    ``title``, ``discriminator`` and keywords strict mode rejects but that only constrain
    (``minLength``, ``uniqueItems``, ``format: uri`` ...) are dropped; ``oneOf`` becomes
    ``anyOf``; a single-entry ``allOf`` is merged; a ``$ref`` with siblings is inlined;
    ``$defs`` (also from ``definitions``) and recursion are kept.

    Malformed, hostile or oversized input never raises: a non-object root, an untyped
    node, an unknown type, a free-form object or map, ``patternProperties``, tuples,
    ``if``/``then``/``else``, a multi-entry ``allOf``, an enum contradicting its type, a
    dangling or external ``$ref``, schemas nested deeper than 64 levels (cyclic dicts too)
    and schemas past the limits of STRICT.md rule 9 are reported in ``unsupported`` with
    the field path while the rest is converted. The input is never mutated.

    Args:
        schema: A JSON schema for a tool's parameters (draft 2020-12 or older).

    Returns:
        The strict schema with any unsupported constructs and warnings.
    """
    converter = _Converter(schema)
    out = converter.convert_root()
    problems, warnings = check_limits(out)
    for path, reason in problems:
        converter.issue(path, reason)
    return StrictConversion(out, tuple(dict.fromkeys(converter.issues)), tuple(warnings))


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _def_name(ref: str) -> str | None:
    """``X`` for ``#/$defs/X`` or ``#/definitions/X`` (pointer-unescaped), else None."""
    for prefix in ("#/$defs/", "#/definitions/"):
        rest = ref[len(prefix) :]
        if ref.startswith(prefix) and rest and "/" not in rest:
            return rest.replace("~1", "/").replace("~0", "~")
    return None


class _Converter:
    """One conversion: the source schema, the converted ``$defs`` and the issues found."""

    def __init__(self, root: Any) -> None:
        self.root: Mapping[str, Any] = root if isinstance(root, Mapping) else {}
        self.issues: list[StrictIssue] = []
        self.refs = RefResolver(self.root, None)
        self.out_defs: dict[str, dict[str, Any]] = {}
        self._inlining: set[str] = set()
        if not isinstance(root, Mapping):
            self.issue("", f"a tool's parameters must be a JSON object schema, got {root!r:.60}")

    def issue(self, path: str, reason: str) -> None:
        self.issues.append(StrictIssue(path or "(root)", reason))

    # -- the root ---------------------------------------------------------------------
    def convert_root(self) -> dict[str, Any]:
        node = {k: v for k, v in self.root.items() if k not in ("$defs", "definitions")}
        node = self._normalize(node, "", force_inline=True)
        out = self._object_or_empty(node)
        if self.out_defs:
            out["$defs"] = dict(self.out_defs)
        return out

    def _object_or_empty(self, node: Mapping[str, Any]) -> dict[str, Any]:
        if "anyOf" in node or "oneOf" in node:
            self.issue("", "the root must be one object, not a union (anyOf/oneOf)")
            return self._convert_union(node, "", 0)
        kinds = self._types(node, "")
        if kinds is None and ("enum" in node or "const" in node):
            self.issue("", "the root must be an object, not an enum or const")
        elif kinds and "object" not in kinds:
            self.issue("", f"the root must be an object, not {'/'.join(kinds)}")
        if "properties" in node or node.get("additionalProperties", False) is not False:
            out = self._object_body(node, "", 0)
        else:
            out = {
                "type": "object",
                "properties": {},
                "required": [],
                "additionalProperties": False,
            }
        self._flag_unsupported(node, "")
        if isinstance(node.get("description"), str):
            out["description"] = node["description"]
        return out

    # -- normalisation: allOf and $ref ----------------------------------------------------
    def _normalize(self, node: Mapping[str, Any], path: str, *, force_inline: bool = False) -> Any:
        """Merge a single-entry ``allOf``; inline a ``$ref`` that has siblings.

        Returns the node to convert; a bare ``$ref`` stays a ``$ref``.
        """
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            rest = {k: v for k, v in node.items() if k != "allOf"}
            merged = self._merge(all_of[0], rest, path)
            if merged is None:
                return {}
            node = merged
        elif "allOf" in node:
            self.issue(path, "allOf with several entries cannot be expressed in strict mode")
        ref = node.get("$ref")
        if ref is None:
            return node
        siblings = {
            k: v
            for k, v in node.items()
            if k != "$ref" and (k in MEANINGFUL_KEYWORDS or (k == "default" and v is not None))
        }
        if not siblings and not force_inline:
            return {"$ref": ref}
        target = self.refs.lookup(ref)
        if target is None:
            self.issue(path, f"$ref {ref!r:.80} does not point into this schema")
            return {}
        if ref in self._inlining:
            if any(k != "description" for k in siblings):
                self.issue(path, f"a recursive $ref {ref!r:.80} with sibling keywords")
            return {"$ref": ref}
        merged = self._merge(target, siblings, path)
        if merged is None:
            return {}
        self._inlining.add(ref)
        try:
            return self._normalize(merged, path, force_inline=force_inline)
        finally:
            self._inlining.discard(ref)

    def _merge(
        self, base: Mapping[str, Any], extra: Mapping[str, Any], path: str
    ) -> dict[str, Any] | None:
        """``base`` and ``extra`` as one node (``extra``'s description wins); None on conflict."""
        out = dict(base)
        for key, value in extra.items():
            if key == "required" and isinstance(out.get(key), list) and isinstance(value, list):
                out[key] = list(dict.fromkeys([*out[key], *value]))
            elif key not in out or key not in MEANINGFUL_KEYWORDS or key == "description":
                out[key] = value
            elif out[key] != value:
                self.issue(path, f"conflicting {key!r} between a schema and its $ref/allOf entry")
                return None
        return out

    # -- conversion of one node -----------------------------------------------------------
    def convert(self, node: Any, path: str, depth: int) -> dict[str, Any]:
        """Convert any schema node (the node's default, if any, goes into its description)."""
        if depth > _MAX_SCHEMA_DEPTH:
            self.issue(path, f"the schema is nested more than {_MAX_SCHEMA_DEPTH} levels deep")
            return {}
        if not isinstance(node, Mapping):
            what = "`true` (anything)" if node is True else repr(node)[:60]
            self.issue(path, f"a schema of {what} has no type; strict mode needs a type")
            return {}
        node = self._normalize(node, path)
        if "$ref" in node:
            return self._bare_ref(str(node["$ref"]), path, depth)
        described = self._description(node)
        self._flag_unsupported(node, path)
        if "anyOf" in node or "oneOf" in node:
            out = self._convert_union(node, path, depth)
        elif "enum" in node or "const" in node:
            out = self._convert_enum(node, path)
        else:
            out = self._convert_typed(node, path, depth)
        if described is not None:
            out = self._with_description(out, described)
        return out

    @staticmethod
    def _description(node: Mapping[str, Any]) -> str | None:
        text = node.get("description")
        text = text if isinstance(text, str) else None
        default = node.get("default")
        if default is not None:
            return describe_default(text, default)
        return text

    @staticmethod
    def _with_description(out: dict[str, Any], text: str) -> dict[str, Any]:
        if "$ref" in out:  # a recursive ref cannot be inlined: drop the text, keep it valid
            return out
        return {**out, "description": text}

    def _bare_ref(self, ref: str, path: str, depth: int) -> dict[str, Any]:
        if ref == "#":
            return {"$ref": "#"}
        target = self.refs.lookup(ref)
        if target is None:
            self.issue(path, f"$ref {ref!r:.80} does not point into this schema")
            return {}
        name = _def_name(ref)
        if name is not None:
            if name not in self.out_defs:
                self.out_defs[name] = {}  # placeholder: a recursive use finds it
                self.out_defs[name] = self.convert(target, path, depth + 1)
            return {"$ref": "#/$defs/" + _escape(name)}
        if ref in self._inlining:
            self.issue(path, f"a recursive $ref {ref!r:.80} outside $defs; move it into $defs")
            return {}
        self._inlining.add(ref)
        try:
            return self.convert(target, path, depth + 1)
        finally:
            self._inlining.discard(ref)

    def _flag_unsupported(self, node: Mapping[str, Any], path: str) -> None:
        for key, reason in UNSUPPORTED_KEYWORDS.items():
            if key in node:
                self.issue(path, reason)
        deps = node.get("dependencies")
        if isinstance(deps, Mapping) and any(isinstance(v, Mapping) for v in deps.values()):
            self.issue(path, "schema-valued dependencies cannot be expressed in strict mode")

    def _convert_union(self, node: Mapping[str, Any], path: str, depth: int) -> dict[str, Any]:
        if "anyOf" in node and "oneOf" in node:
            self.issue(path, "anyOf and oneOf on the same node cannot be expressed in strict mode")
        key = "anyOf" if "anyOf" in node else "oneOf"
        branches = node[key]
        if not isinstance(branches, list) or not branches:
            self.issue(path, f"{key} must be a non-empty list of schemas")
            return {}
        shared = {
            k: v
            for k, v in node.items()
            if k in MEANINGFUL_KEYWORDS and k not in ("anyOf", "oneOf", "description")
        }
        out: list[dict[str, Any]] = []
        for branch in branches:
            if shared and isinstance(branch, Mapping):
                merged = self._merge(branch, shared, path)
                branch = merged if merged is not None else {}
            converted = self.convert(branch, path, depth + 1)
            if set(converted) == {"anyOf"}:
                out.extend(converted["anyOf"])
            elif converted not in out:
                out.append(converted)
        return {"anyOf": out}

    def _convert_enum(self, node: Mapping[str, Any], path: str) -> dict[str, Any]:
        kinds = self._types(node, path)
        out: dict[str, Any] = {}
        if kinds:
            out["type"] = kinds[0] if len(kinds) == 1 else kinds
        values: list[Any] = []
        if "enum" in node:
            if not isinstance(node["enum"], list) or not node["enum"]:
                self.issue(path, "enum must be a non-empty list")
            else:
                values = list(node["enum"])
                out["enum"] = values
        if "const" in node:
            values.append(node["const"])
            out["const"] = node["const"]
        if kinds:
            for value in values:
                if not any(value_matches_type(value, k) for k in kinds):
                    self.issue(
                        path,
                        f"the value {value!r:.40} contradicts the declared type "
                        f"{'/'.join(kinds)}; fix the type or the values",
                    )
                    break
            for kind in kinds:
                out.update(self._constraints(node, kind))
        return out

    def _types(self, node: Mapping[str, Any], path: str) -> list[str] | None:
        """Declared or inferred types; None if untyped, [] if malformed (issue recorded)."""
        if "type" not in node:
            if "properties" in node or "additionalProperties" in node:
                return ["object"]
            if "items" in node or "prefixItems" in node:
                return ["array"]
            return None
        kinds = declared_types(node)
        if kinds is None:
            self.issue(path, f"malformed type {node['type']!r:.60}")
            return []
        unknown = [k for k in kinds if k not in JSON_TYPES]
        if unknown:
            self.issue(
                path,
                f"unknown type {unknown[0]!r:.40}; JSON Schema types are "
                + ", ".join(sorted(JSON_TYPES)),
            )
            return []
        return kinds

    def _convert_typed(self, node: Mapping[str, Any], path: str, depth: int) -> dict[str, Any]:
        kinds = self._types(node, path)
        if kinds is None:
            self.issue(path, "no type: strict mode needs a type (or anyOf, enum, const, $ref)")
            return {}
        if not kinds:
            return {}
        concrete = [k for k in kinds if k != "null"]
        if not concrete:
            return {"type": "null"}
        bodies = [self._typed_body(node, kind, path, depth) for kind in concrete]
        if "null" in kinds:
            bodies.append({"type": "null"})
        if len(bodies) == 1:
            return bodies[0]
        if len(bodies) == 2 and bodies[1] == {"type": "null"}:
            return _nullable(bodies[0])
        return {"anyOf": bodies}

    @staticmethod
    def _constraints(node: Mapping[str, Any], kind: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if kind == "string":
            if isinstance(node.get("pattern"), str):
                out["pattern"] = node["pattern"]
            if node.get("format") in ALLOWED_FORMATS:
                out["format"] = node["format"]
        elif kind in ("number", "integer"):
            for key in NUMBER_KEYWORDS:
                value = node.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    out[key] = value
        elif kind == "array":
            for key in ARRAY_KEYWORDS:
                value = node.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    out[key] = value
        return out

    def _typed_body(
        self, node: Mapping[str, Any], kind: str, path: str, depth: int
    ) -> dict[str, Any]:
        if kind == "object":
            return self._object_body(node, path, depth)
        out: dict[str, Any] = {"type": kind, **self._constraints(node, kind)}
        if kind == "array":
            items = node.get("items")
            if isinstance(items, list):
                self.issue(path, "a tuple (items as a list) cannot be expressed in strict mode")
            elif items is None:
                if "prefixItems" not in node:
                    self.issue(path, "an array without an item schema; give `items` a type")
            elif items is not False:
                out["items"] = self.convert(items, f"{path}[]", depth + 1)
        return out

    def _object_body(self, node: Mapping[str, Any], path: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        extra = node.get("additionalProperties", _MISSING)
        props = node.get("properties", _MISSING)
        if extra is not _MISSING and extra is not False:
            if isinstance(extra, Mapping) and extra:
                reason = (
                    "a map (additionalProperties with a schema, e.g. dict[str, X]) cannot be "
                    "expressed in strict mode; use a list of key/value objects"
                )
            else:
                reason = "a free-form object (additionalProperties allows any key)"
            self.issue(path, reason)
        elif props is _MISSING and extra is _MISSING and "patternProperties" not in node:
            self.issue(
                path,
                "a free-form object (type object with no properties) cannot be expressed in "
                "strict mode; declare its properties",
            )
        if props is not _MISSING and not isinstance(props, Mapping):
            self.issue(path, "properties must be an object mapping names to schemas")
        elif isinstance(props, Mapping):
            required = node.get("required")
            required = set(required) if isinstance(required, list) else set()
            for name, sub in props.items():
                if not isinstance(name, str):
                    self.issue(path, f"a property name must be a string, got {name!r:.40}")
                    continue
                child = _join(path, name)
                out["properties"][name] = self._property(sub, name in required, child, depth + 1)
                out["required"].append(name)
        out["additionalProperties"] = False
        return out

    def _property(self, sub: Any, required: bool, path: str, depth: int) -> dict[str, Any]:
        """One property: optional and not admitting null -> nullable, default described."""
        if required or not isinstance(sub, Mapping) or admits_null(sub, self.refs):
            return self.convert(sub, path, depth)
        text = self._description(sub)
        core = {k: v for k, v in sub.items() if k not in ("description", "default")}
        out = _nullable(self.convert(core, path, depth))
        return {**out, "description": text} if text is not None else out


def _nullable(core: dict[str, Any]) -> dict[str, Any]:
    """``core`` that also admits null, in the form strict mode honours."""
    kind = core.get("type")
    if (
        isinstance(kind, str)
        and kind in SCALAR_TYPES
        and "enum" not in core
        and "const" not in core
    ):
        return {**core, "type": [kind, "null"]}
    if not core:
        return core
    null = {"type": "null"}
    if set(core) <= {"anyOf", "description"}:
        branches = core["anyOf"] if null in core["anyOf"] else [*core["anyOf"], null]
        return {**core, "anyOf": branches}
    wrapped: dict[str, Any] = {
        "anyOf": [{k: v for k, v in core.items() if k != "description"}, null]
    }
    if "description" in core and "$ref" not in core:
        wrapped["description"] = core["description"]
    return wrapped


# -- nulls --------------------------------------------------------------------------------


def schema_admits_null(node: Any, defs: Mapping[str, Any] | None = None) -> bool:
    """Whether JSON ``null`` can be valid under a schema node.

    True when the node's type is or contains ``"null"``, any ``anyOf``/``oneOf`` branch
    admits null, the node is untyped (``{}``, ``true``, only a description), or its
    ``enum``/``const`` contains None; a ``$ref`` (into ``defs``, by ``#/$defs/Name`` or
    ``#/definitions/Name``) and ``allOf`` entries must admit null too. Malformed nodes,
    dangling or cyclic references count as admitting null (the safe answer for keeping a
    null the model sent); nothing raises.

    Args:
        node: A JSON schema node.
        defs: The ``$defs`` of the schema the node comes from, for resolving ``$ref``.
    """
    return admits_null(node, RefResolver(None, defs or {}))


def strip_disallowed_nulls(
    value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None
) -> Any:
    """Drop object keys whose value is null where the schema does not admit null.

    The model sends ``null`` for an optional argument it leaves out (strict mode makes it
    send every key); removing such keys lets validation fill the default. Applies at any
    depth: nested objects, ``$ref``'d models, array items, ``additionalProperties``
    values, union branches (a null key is removed only if no branch that declares the key
    admits null; branches whose ``const``/``enum`` discriminators or required keys do not
    fit the value are not considered). Keys the schema does not declare are left alone;
    nulls inside arrays are kept.

    Returns ``value`` itself, not a copy, when there is nothing to strip (a quick scan for
    None comes first); otherwise a copy where only the changed containers are new. Any
    value and any schema are accepted without raising: malformed schema parts, dangling
    references and unknown keywords are ignored, values nested deeper than 200 levels (or
    cyclic) are left as they are below that depth, and union expansion is capped.

    Args:
        value: The arguments (usually a dict decoded from the model's JSON).
        schema: The ORIGINAL (non-strict) schema they are validated against.
        defs: The schema's ``$defs``; taken from ``schema`` when None.
    """
    if not _has_none(value, 0):
        return value
    refs = RefResolver(schema if isinstance(schema, Mapping) else None, defs)
    return _strip(value, _alternatives(schema, refs, frozenset()), refs, 0)


def _has_none(value: Any, depth: int) -> bool:
    if depth > _MAX_VALUE_DEPTH:
        return False
    if isinstance(value, Mapping):
        return any(v is None or _has_none(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_none(v, depth + 1) for v in value)
    return False


_Conj = tuple[Mapping[str, Any], ...]


def _alternatives(
    node: Any, refs: RefResolver, seen: frozenset[str], depth: int = 0
) -> list[_Conj]:
    """``node`` as a disjunction of conjunctions of plain nodes ($ref/allOf/anyOf expanded)."""
    if node is False:
        return []
    if not isinstance(node, Mapping) or depth > _MAX_SCHEMA_DEPTH:
        return [()]
    parts: list[list[_Conj]] = [[(node,)]]
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        target = refs.lookup(ref)
        if target is not None:
            parts.append(_alternatives(target, refs, seen | {ref}, depth + 1))
    if isinstance(node.get("allOf"), list):
        parts.extend(_alternatives(entry, refs, seen, depth + 1) for entry in node["allOf"])
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            parts.append(
                [alt for b in node[key] for alt in _alternatives(b, refs, seen, depth + 1)]
            )
    result: list[_Conj] = [()]
    for part in parts:
        result = [a + b for a in result for b in part][:_MAX_ALTERNATIVES]
    return result


def _may_be(conj: _Conj, kind: str) -> bool:
    return all(kind in (declared_types(n) or [kind]) for n in conj)


def _fits(conj: _Conj, value: Mapping[str, Any]) -> bool:
    """False when a required key is missing or a const/enum property does not match."""
    for node in conj:
        required = node.get("required")
        if isinstance(required, list) and any(k not in value for k in required):
            return False
        props = node.get("properties")
        if not isinstance(props, Mapping):
            continue
        for key, item in value.items():
            sub = props.get(key)
            if item is None or not isinstance(sub, Mapping):
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
        if isinstance(props, Mapping) and key in props:
            found.append(props[key])
            continue
        patterns = node.get("patternProperties")
        matched = False
        if isinstance(patterns, Mapping):
            for pattern, sub in patterns.items():
                try:
                    if re.search(pattern, key):
                        found.append(sub)
                        matched = True
                except (re.error, TypeError):
                    continue
        extra = node.get("additionalProperties")
        if not matched and isinstance(extra, Mapping):
            found.append(extra)
    return found


def _product(schemas: list[Any], refs: RefResolver) -> list[_Conj]:
    result: list[_Conj] = [()]
    for sub in schemas:
        options = _alternatives(sub, refs, frozenset())
        result = [a + b for a in result for b in options][:_MAX_ALTERNATIVES]
    return result


def _strip(value: Any, alts: list[_Conj], refs: RefResolver, depth: int) -> Any:
    if depth > _MAX_VALUE_DEPTH:
        return value
    if isinstance(value, Mapping):
        return _strip_object(value, alts, refs, depth)
    if isinstance(value, list):
        return _strip_array(value, alts, refs, depth)
    return value


def _strip_object(
    value: Mapping[str, Any], alts: list[_Conj], refs: RefResolver, depth: int
) -> Any:
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
            if not any(all(admits_null(s, refs) for s in schemas) for schemas in declared):
                out = dict(value) if out is None else out
                del out[key]
            continue
        if isinstance(item, Mapping | list):
            sub_alts = [alt for schemas in declared for alt in _product(schemas, refs)]
            new = _strip(item, sub_alts[:_MAX_ALTERNATIVES], refs, depth + 1)
            if new is not item:
                out = dict(value) if out is None else out
                out[key] = new
    return value if out is None else out


def _item_schemas(conj: _Conj, index: int) -> list[Any]:
    found: list[Any] = []
    for node in conj:
        prefix = node.get("prefixItems")
        items = node.get("items")
        if isinstance(prefix, list) and index < len(prefix):
            found.append(prefix[index])
        elif isinstance(items, list) and index < len(items):  # draft 4 tuples
            found.append(items[index])
        elif isinstance(items, Mapping):
            found.append(items)
    return found


def _strip_array(value: list[Any], alts: list[_Conj], refs: RefResolver, depth: int) -> Any:
    views = [c for c in alts if _may_be(c, "array")]
    if not views:
        return value
    positional = max(
        (
            len(n[k])
            for c in views
            for n in c
            for k in ("prefixItems", "items")
            if isinstance(n.get(k), list)
        ),
        default=0,
    )
    cache: dict[int, list[_Conj]] = {}
    out: list[Any] | None = None
    for index, item in enumerate(value):
        if not isinstance(item, Mapping | list):
            continue
        slot = min(index, positional)
        if slot not in cache:
            cache[slot] = [alt for c in views for alt in _product(_item_schemas(c, index), refs)][
                :_MAX_ALTERNATIVES
            ]
        new = _strip(item, cache[slot], refs, depth + 1)
        if new is not item:
            out = list(value) if out is None else out
            out[index] = new
    return value if out is None else out
