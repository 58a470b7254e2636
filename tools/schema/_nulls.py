"""Null stripping: the runtime half of "a null the schema does not admit means the default".

Implementation of :func:`tools.schema._strict.strip_disallowed_nulls` (documented there). A schema
is read as a disjunction of conjunctions of plain nodes (``$ref``, ``allOf``, ``anyOf`` and
``oneOf`` expanded, memoised and capped) and walked alongside the value.

Only a key declared in ``properties`` loses its null, and only when its schema does not admit
null and says what to use instead: it has a ``default`` or is not ``required``. The keys of a
map (``additionalProperties``/``patternProperties`` values, free-form objects, untyped nodes)
keep their nulls: there a null is a value the model sent, not "use the default".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import chain, islice
from typing import Any

from tools.schema._rules import MAX_NULL_DEPTH, RefResolver, admits_null, declared_types

#: ``dict`` first: most nodes are dicts and the ABC check is slow on the hot path.
_MAP = (dict, Mapping)

#: Argument values nested deeper are left as they are.
MAX_VALUE_DEPTH = 200
#: Cap on the alternatives a union expands to.
MAX_ALTERNATIVES = 64
#: Cap on the schema nodes one alternative of a union holds.
MAX_CONJUNCTION = 64


def strip_nulls(value: Any, schema: Any, defs: Mapping[str, Any] | None) -> Any:
    """Implementation of :func:`tools.schema._strict.strip_disallowed_nulls` (see there)."""
    if not _has_none(value, 0):
        return value
    stripper = _NullStripper(RefResolver(schema if isinstance(schema, _MAP) else None, defs))
    return stripper.strip(value, stripper.alternatives(schema), 0)


class NullStripper:
    """:func:`strip_nulls` for one schema, keeping its expanded unions and null verdicts
    between calls (a tool strips every strict-mode call against the same schema)."""

    def __init__(self, schema: Any, defs: Mapping[str, Any] | None = None) -> None:
        self._stripper = _NullStripper(RefResolver(schema if isinstance(schema, _MAP) else None, defs))
        self._alternatives = self._stripper.alternatives(schema)

    def __call__(self, value: Any) -> Any:
        """``value`` without the nulls the schema does not admit (itself when there are none)."""
        if not _has_none(value, 0):
            return value
        return self._stripper.strip(value, self._alternatives, 0)

    def top_level(self) -> frozenset[str] | None:
        """The top-level properties whose null means "default" when the schema is a plain
        object (no unions, maps or patterns at the top), else None."""
        alternatives = self._alternatives
        single = _single_node(alternatives[0]) if len(alternatives) == 1 else None
        plain = self._stripper._plain_object(single) if single is not None else None
        return None if plain is None else plain[1]


_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def _is_container(value: Any) -> bool:
    """A dict/list (or other Mapping), checked without the slow ABC test for scalars."""
    return isinstance(value, (dict, list)) or (not isinstance(value, _SCALARS) and isinstance(value, Mapping))


def has_null(value: Any) -> bool:
    """Whether a mapping holds a ``None`` value at any depth (list items that are ``None``
    are values of a list, not nulls of a property, and do not count)."""
    return _has_none(value, 0)


def _has_none(value: Any, depth: int) -> bool:
    if depth > MAX_VALUE_DEPTH:
        return False
    kind = type(value)
    if kind is list:
        items: Any = value
        mapping = False
    elif kind is dict or (kind not in _SCALAR_TYPES and isinstance(value, Mapping)):
        items = value.values()
        mapping = True
    else:
        return False
    for item in items:
        if item is None:
            if mapping:
                return True
        elif type(item) not in _SCALAR_TYPES and _has_none(item, depth + 1):
            return True
    return False


_COMBINATORS = frozenset({"$ref", "allOf", "anyOf", "oneOf"})

#: A conjunction of plain schema nodes (their $ref/allOf/anyOf already expanded).
_Conj = tuple[Mapping[str, Any], ...]


def _join(left: _Conj, right: _Conj) -> _Conj:
    """Both conjunctions as one, each node once, at most :data:`MAX_CONJUNCTION` nodes.

    Only pathological schemas reach the cap; the constraints cut off are then not consulted.
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
        self._plain: dict[int, tuple[Mapping[str, Any], frozenset[str]] | None] = {}
        self._defaults: dict[int, bool] = {}

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
        single = _single_node(alts[0]) if len(alts) == 1 else None
        if single is not None:
            plain = self._plain_object(single)
            if plain is not None:
                return self._strip_plain(value, plain, depth)
        views = [c for c in alts if _may_be(c, "object")]
        views = [c for c in views if _fits(c, value)] or views
        if not views:
            return value
        out: dict[str, Any] | None = None
        for key, item in value.items():
            if item is None:
                verdicts = [v for v in (self._drop_null(c, key) for c in views) if v is not None]
                if verdicts and all(verdicts):
                    out = dict(value) if out is None else out
                    del out[key]
                continue
            declared = [s for s in (_property_schemas(c, key) for c in views) if s]
            if declared and _is_container(item):
                subs = chain.from_iterable(self.product(group) for group in declared)
                new = self.strip(item, list(islice(subs, MAX_ALTERNATIVES)), depth + 1)
                if new is not item:
                    out = dict(value) if out is None else out
                    out[key] = new
        return value if out is None else out

    def _drop_null(self, conj: _Conj, key: str) -> bool | None:
        """Whether a null at ``key`` goes in this view of the object: None when the view does
        not mention the key, False when it is a map entry or the null is allowed or the key
        is required without a default."""
        props = [n["properties"][key] for n in conj if isinstance(n.get("properties"), _MAP) and key in n["properties"]]
        if not props:
            return False if _map_entry(conj, key) else None
        if all(self.admits_null(s) for s in props):
            return False
        return any(self.has_default(s) for s in props) or not any(_requires(n, key) for n in conj)

    def _droppable(self, node: Mapping[str, Any], key: str, schema: Any) -> bool:
        return not self.admits_null(schema) and (self.has_default(schema) or not _requires(node, key))

    def has_default(self, node: Any) -> bool:
        """Whether ``node`` (or what its ``$ref``/``allOf`` lead to) carries a ``default``."""
        key = id(node)
        if key not in self._defaults:
            self._defaults[key] = any("default" in n for conj in self.alternatives(node) for n in conj)
        return self._defaults[key]

    def _plain_object(self, node: Mapping[str, Any]) -> tuple[Mapping[str, Any], frozenset[str]] | None:
        """For an object node with only ``properties`` (the common case): its properties and
        the names whose null is dropped; None for anything more involved."""
        key = id(node)
        if key in self._plain:
            return self._plain[key]
        props = node.get("properties")
        extra = node.get("additionalProperties")
        plain: tuple[Mapping[str, Any], frozenset[str]] | None = None
        if (
            isinstance(props, _MAP)
            and "patternProperties" not in node
            and not isinstance(extra, _MAP)
            and _may_be((node,), "object")
        ):
            droppable = frozenset(
                k
                for k, s in props.items()
                if not self.admits_null(s) and (self.has_default(s) or not _requires(node, k))
            )
            plain = (props, droppable)
        self._plain[key] = plain
        return plain

    def _strip_plain(
        self, value: Mapping[str, Any], plain: tuple[Mapping[str, Any], frozenset[str]], depth: int
    ) -> Any:
        props, not_nullable = plain
        out: dict[str, Any] | None = None
        for key, item in value.items():
            if item is None:
                if key in not_nullable:
                    out = dict(value) if out is None else out
                    del out[key]
            elif key in props and _has_none(item, depth + 1):
                new = self.strip(item, self.alternatives(props[key]), depth + 1)
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
            if not _is_container(item):
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


_ANNOTATIONS = frozenset({"$ref", "description", "title", "default", "examples"})


def _single_node(conj: _Conj) -> Mapping[str, Any] | None:
    """The one schema node of a conjunction: itself, or a bare ``$ref``'s target."""
    if len(conj) == 1:
        return conj[0]
    if len(conj) == 2 and _ANNOTATIONS.issuperset(conj[0]):
        return conj[1]
    return None


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


def _requires(node: Mapping[str, Any], key: str) -> bool:
    required = node.get("required")
    return isinstance(required, list) and key in required


def _map_entry(conj: _Conj, key: str) -> bool:
    """Whether ``key`` is a map entry of this view (``patternProperties``/schema-valued
    ``additionalProperties``), where a null is a value, not "use the default"."""
    for node in conj:
        if isinstance(node.get("additionalProperties"), _MAP):
            return True
        patterns = node.get("patternProperties")
        if isinstance(patterns, _MAP):
            for pattern in patterns:
                try:
                    if re.search(pattern, key):
                        return True
                except (re.error, TypeError):
                    continue
    return False


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
