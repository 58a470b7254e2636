"""OpenAI strict mode: the schema transform and its partner, null stripping.

:func:`to_strict_schema` turns any JSON schema for a tool's parameters (pydantic's output
or a hand-written one) into the subset OpenAI accepts with ``strict: true`` (the rules are
in ``../shared/STRICT.md``). An optional property becomes required and nullable, its
default moves into the description, and :func:`strip_disallowed_nulls` later turns the
``null`` the model sends for it back into "use the default".

Both functions are pure: no I/O, no logging, no state between calls, inputs never mutated.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tools.schema._nulls import strip_nulls
from tools.schema._rules import (
    ALLOWED_FORMATS,
    ARRAY_KEYWORDS,
    JSON_TYPES,
    MAX_SCHEMA_DEPTH,
    MEANINGFUL_KEYWORDS,
    NUMBER_KEYWORDS,
    UNSUPPORTED_KEYWORDS,
    RefResolver,
    admits_null,
    check_limits,
    declared_types,
    def_name,
    describe_default,
    discriminator_names,
    escape_pointer,
    nullable,
    single_value,
    value_matches_type,
)

__all__ = [
    "StrictConversion",
    "StrictIssue",
    "schema_admits_null",
    "strip_disallowed_nulls",
    "to_strict_schema",
]

_MISSING: Any = object()
_UNSUPPORTED = frozenset(UNSUPPORTED_KEYWORDS)
#: A node with one of these says what it accepts; without, its type may be inferred.
_TYPED = frozenset({"type", "anyOf", "oneOf", "enum", "const"})
#: ``dict`` first: most nodes are dicts and the ABC check is slow on the hot path.
_MAP = (dict, Mapping)


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

    The only argument-less form that stays strict is an object with no properties and
    ``additionalProperties: false``; ``{}``, ``{"type": "object"}`` or ``"properties": {}``
    without it accept any arguments, so they are reported (a strict export would let the
    model send only ``{}``).

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


#: Why a root object without properties stays non-strict (strict would only ever send ``{}``).
_FREE_FORM_ROOT = (
    "the tool takes any arguments (an object with no properties and no "
    "additionalProperties: false): under strict mode a model could only ever send {}; "
    "declare its properties, or say additionalProperties: false if it takes no arguments"
)


def _no_properties(props: Any) -> bool:
    """True when an object declares no property (``properties`` absent or empty)."""
    return props is _MISSING or (isinstance(props, _MAP) and not props)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class _Converter:
    """One conversion: the source schema, the converted ``$defs`` and the issues found."""

    def __init__(self, root: Any) -> None:
        self.root: Mapping[str, Any] = root if isinstance(root, _MAP) else {}
        self.issues: list[StrictIssue] = []
        self.refs = RefResolver(self.root, None)
        self.out_defs: dict[str, dict[str, Any]] = {}
        self._inlining: set[str] = set()
        self._tags: frozenset[str] | None = None  # discriminator names, computed on demand
        # resolves refs in the converted output; the root and a def being converted (its
        # placeholder) are objects, which do not admit null
        self._out_refs = RefResolver({"type": "object", "$defs": self.out_defs}, self.out_defs)
        if not isinstance(root, _MAP):
            self.issue("", f"a tool's parameters must be a JSON object schema, got {root!r:.60}")

    def issue(self, path: str, reason: str) -> None:
        self.issues.append(StrictIssue(path or "(root)", reason))

    # -- the root ---------------------------------------------------------------------
    def convert_root(self) -> dict[str, Any]:
        node = {k: v for k, v in self.root.items() if k not in ("$defs", "definitions")}
        node, inlined = self._normalize(node, "", force_inline=True)
        with self._blocking(inlined):
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
        if "properties" in node or "additionalProperties" in node:
            out = self._object_body(node, "", 0)
        else:
            if "patternProperties" not in node and not any(i.path == "(root)" for i in self.issues):
                self.issue("", _FREE_FORM_ROOT)
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
    def _normalize(
        self, node: Mapping[str, Any], path: str, *, force_inline: bool = False
    ) -> tuple[Any, tuple[str, ...]]:
        """Merge a single-entry ``allOf``; inline a ``$ref`` that has siblings.

        Returns the node to convert (a bare ``$ref`` stays a ``$ref``) and the references
        inlined into it, which stay blocked from inlining while it is converted.
        """
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], _MAP):
            rest = {k: v for k, v in node.items() if k != "allOf"}
            node = self._merge(all_of[0], rest, path) or {}
        elif "allOf" in node:
            self.issue(path, "allOf with several entries cannot be expressed in strict mode")
        if "$ref" not in node:
            return node, ()
        return self._inline(node, path, force_inline=force_inline)

    def _inline(self, node: Mapping[str, Any], path: str, *, force_inline: bool) -> tuple[Any, tuple[str, ...]]:
        ref = node["$ref"]
        siblings = {
            k: v
            for k, v in node.items()
            if k != "$ref" and (k in MEANINGFUL_KEYWORDS or (k == "default" and v is not None))
        }
        target = self.refs.lookup(ref)
        if not isinstance(ref, str) or target is None:
            self.issue(path, f"$ref {ref!r:.80} does not point into this schema")
            return {}, ()
        if not siblings and not force_inline:
            return {"$ref": ref}, ()
        if ref in self._inlining:
            if any(k not in ("description", "default") for k in siblings):
                self.issue(path, f"a recursive $ref {ref!r:.80} with sibling keywords")
            return {"$ref": ref}, ()
        merged = self._merge(target, siblings, path)
        if merged is None:
            return {}, ()
        self._inlining.add(ref)
        try:
            result, inner = self._normalize(merged, path, force_inline=force_inline)
        finally:
            self._inlining.discard(ref)
        return result, (ref, *inner)

    @contextmanager
    def _blocking(self, refs: tuple[str, ...]) -> Iterator[None]:
        """Keep ``refs`` from being inlined again while the node they built is converted."""
        added = [r for r in refs if r not in self._inlining]
        self._inlining.update(added)
        try:
            yield
        finally:
            self._inlining.difference_update(added)

    def _merge(self, base: Mapping[str, Any], extra: Mapping[str, Any], path: str) -> dict[str, Any] | None:
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
        if depth > MAX_SCHEMA_DEPTH:
            self.issue(path, f"the schema is nested more than {MAX_SCHEMA_DEPTH} levels deep")
            return {}
        if not isinstance(node, _MAP):
            what = "`true` (anything)" if node is True else repr(node)[:60]
            self.issue(path, f"a schema of {what} has no type; strict mode needs a type")
            return {}
        node, inlined = self._normalize(node, path)
        if "$ref" in node:
            return self._bare_ref(str(node["$ref"]), path, depth)
        if inlined:
            with self._blocking(inlined):
                out = self._convert_plain(node, path, depth)
        else:
            out = self._convert_plain(node, path, depth)
        described = self._description(node)
        return self._with_description(out, described) if described is not None else out

    def _convert_plain(self, node: Mapping[str, Any], path: str, depth: int) -> dict[str, Any]:
        self._flag_unsupported(node, path)
        if "anyOf" in node or "oneOf" in node:
            return self._convert_union(node, path, depth)
        if "enum" in node or "const" in node:
            return self._convert_enum(node, path)
        return self._convert_typed(node, path, depth)

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
        name = def_name(ref)
        if name is not None:
            if name not in self.out_defs:
                # a recursive use finds this placeholder (an object, which does not admit null)
                self.out_defs[name] = {"type": "object"}
                self.out_defs[name] = self.convert(target, path, depth + 1)
            return {"$ref": "#/$defs/" + escape_pointer(name)}
        if ref in self._inlining:
            self.issue(path, f"a recursive $ref {ref!r:.80} outside $defs; move it into $defs")
            return {}
        self._inlining.add(ref)
        try:
            return self.convert(target, path, depth + 1)
        finally:
            self._inlining.discard(ref)

    def _flag_unsupported(self, node: Mapping[str, Any], path: str) -> None:
        if not _UNSUPPORTED.isdisjoint(node):
            for key, reason in UNSUPPORTED_KEYWORDS.items():
                if key in node:
                    self.issue(path, reason)
        deps = node.get("dependencies")
        if isinstance(deps, _MAP) and any(isinstance(v, _MAP) for v in deps.values()):
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
            k: v for k, v in node.items() if k in MEANINGFUL_KEYWORDS and k not in ("anyOf", "oneOf", "description")
        }
        out: list[dict[str, Any]] = []
        for branch in branches:
            source = branch
            if shared and isinstance(branch, _MAP):
                source = self._merge(branch, shared, path) or {}
            converted = self.convert(source, path, depth + 1)
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
                f"unknown type {unknown[0]!r:.40}; JSON Schema types are " + ", ".join(sorted(JSON_TYPES)),
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
            return nullable(bodies[0])
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

    def _typed_body(self, node: Mapping[str, Any], kind: str, path: str, depth: int) -> dict[str, Any]:
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
            if isinstance(extra, _MAP) and extra:
                reason = (
                    "a map (additionalProperties with a schema, e.g. dict[str, X]) cannot be "
                    "expressed in strict mode; use a list of key/value objects"
                )
            else:
                reason = "a free-form object (additionalProperties allows any key)"
            self.issue(path, reason)
        elif extra is _MISSING and _no_properties(props) and "patternProperties" not in node:
            self.issue(
                path,
                _FREE_FORM_ROOT
                if not path
                else "a free-form object (type object with no properties) cannot be expressed in "
                "strict mode; declare its properties",
            )
        if props is not _MISSING and not isinstance(props, _MAP):
            self.issue(path, "properties must be an object mapping names to schemas")
        elif isinstance(props, _MAP):
            required = node.get("required")
            required = set(required) if isinstance(required, list) else set()
            for name, sub in props.items():
                if not isinstance(name, str):
                    self.issue(path, f"a property name must be a string, got {name!r:.40}")
                    continue
                child = _join(path, name)
                # A union's tag (pydantic's `kind: Literal["cat"] = "cat"`) has one legal value
                # and picks the branch: it stays required and non-null.
                pinned = name in required or (single_value(sub) and name in self._tag_names())
                out["properties"][name] = self._property(sub, pinned, child, depth + 1)
                out["required"].append(name)
        out["additionalProperties"] = False
        return out

    def _tag_names(self) -> frozenset[str]:
        if self._tags is None:
            self._tags = discriminator_names(self.root)
        return self._tags

    def _property(self, sub: Any, required: bool, path: str, depth: int) -> dict[str, Any]:
        """One property: optional and not admitting null -> nullable, default described."""
        if required or not isinstance(sub, _MAP):
            return self.convert(sub, path, depth)
        if not _TYPED.isdisjoint(sub) and admits_null(sub, self.refs):
            return self.convert(sub, path, depth)  # already nullable (Optional[T] = None)
        core = self.convert({k: v for k, v in sub.items() if k not in ("description", "default")}, path, depth)
        if admits_null(core, self._out_refs):
            return self.convert(sub, path, depth)
        text = self._description(sub)
        out = nullable(core)
        return {**out, "description": text} if text is not None else out


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


def strip_disallowed_nulls(value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> Any:
    """Drop the nulls that mean "use the default".

    The model sends ``null`` for an optional argument it leaves out (strict mode makes it
    send every key); removing such keys lets validation fill the default. A null is removed
    only for a key declared in ``properties`` whose schema does not admit null and that has
    a ``default`` or is not required. Map entries (``additionalProperties`` /
    ``patternProperties`` values), free-form objects and untyped nodes keep their nulls:
    there a null is a value the model sent. Applies at any depth: nested objects, ``$ref``'d
    models, array items, models inside map values, union branches (a null key is removed
    only if no branch that declares the key admits null; branches whose ``const``/``enum``
    discriminators or required keys do not fit the value are not considered). Keys the
    schema does not declare are left alone; nulls inside arrays are kept.

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
    return strip_nulls(value, schema, defs)
