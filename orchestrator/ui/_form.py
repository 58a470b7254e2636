"""A form from a tool's JSON schema, and the arguments a submitted form stands for.

Each top-level property becomes one field: a text box for strings, a number box for numbers
and integers, a menu for enums, booleans and constants, a JSON box for everything else
(objects, arrays, unions of several types). Local ``$ref`` and ``anyOf [T, null]`` (what
pydantic and the strict export write) are read through. An empty field means "not given"
(the tool's default applies). Whatever the form says, the tool validates the arguments
again when it is called: the form only saves typing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = ["FormField", "form_fields", "parse_form"]

FieldKind = Literal["text", "number", "integer", "choice", "json"]
#: The form field that, when filled, replaces the per-property fields.
RAW_FIELD = "__arguments_json"
_PREFIX = "arg."
_MAX_DEPTH = 8


@dataclass(frozen=True)
class FormField:
    """One input of a tool's form.

    Attributes:
        name: The argument's name.
        kind: How it is entered (see the module docstring).
        required: The schema lists it as required.
        description: The schema's description (shown under the field).
        choices: For ``choice`` fields, (value as submitted, label) pairs.
        placeholder: The default or an example, shown in the empty field.
        value: What the field holds (after a submission, what was sent).
        error: Why the submitted value was not usable.
    """

    name: str
    kind: FieldKind
    required: bool = False
    description: str = ""
    choices: tuple[tuple[str, str], ...] = ()
    placeholder: str = ""
    value: str = ""
    error: str | None = None
    _schema: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def input_name(self) -> str:
        """The form control's name (prefixed, so no argument can clash with the form's own fields)."""
        return _PREFIX + self.name


def form_fields(schema: Mapping[str, Any] | None) -> list[FormField]:
    """The fields of a form for ``schema`` (a JSON schema of ``type: object``)."""
    if not isinstance(schema, Mapping):
        return []
    root = schema
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    return [
        _field(root, str(name), _resolve(root, spec), str(name) in needed)
        for name, spec in properties.items()
        if isinstance(spec, Mapping)
    ]


def parse_form(fields: list[FormField], form: Mapping[str, str]) -> tuple[dict[str, Any] | None, list[FormField]]:
    """The arguments a submitted form stands for, and the fields showing what was sent.

    Returns:
        ``(arguments, fields)``: ``arguments`` is None when a field (or the JSON box) could
        not be read; each field then carries its ``error``.
    """
    raw = form.get(RAW_FIELD, "").strip()
    if raw:
        try:
            value = json.loads(raw)
        except ValueError as exc:
            return None, [*fields, _raw_error(f"not valid JSON: {exc}")]
        if not isinstance(value, dict):
            return None, [*fields, _raw_error('the arguments must be one JSON object, e.g. {"city": "Lisbon"}')]
        return value, fields
    arguments: dict[str, Any] = {}
    shown: list[FormField] = []
    failed = False
    for item in fields:
        text = form.get(item.input_name, "")
        try:
            parsed = _value(item, text)
        except ValueError as exc:
            failed = True
            shown.append(replace(item, value=text, error=str(exc)))
            continue
        shown.append(replace(item, value=text, error=None))
        if parsed is not _UNSET:
            arguments[item.name] = parsed
    return (None if failed else arguments), shown


def raw_field_error(fields: list[FormField]) -> str | None:
    """The error of the JSON box, when the last parse put one there."""
    for item in fields:
        if item.name == RAW_FIELD:
            return item.error
    return None


class _Unset:
    pass


_UNSET: Any = _Unset()


def _raw_error(message: str) -> FormField:
    return FormField(name=RAW_FIELD, kind="json", error=message)


def _value(item: FormField, text: str) -> Any:
    """The value of one field's text; ``_UNSET`` for an empty field."""
    if text.strip() == "":
        return _UNSET
    if item.kind == "integer":
        try:
            return int(text.strip())
        except ValueError:
            raise ValueError(f"{text.strip()[:40]!r} is not a whole number") from None
    if item.kind == "number":
        try:
            number = float(text.strip())
        except ValueError:
            raise ValueError(f"{text.strip()[:40]!r} is not a number") from None
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    if item.kind in ("choice", "json"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
    return text


def _resolve(root: Mapping[str, Any], spec: Mapping[str, Any], depth: int = 0) -> Mapping[str, Any]:
    """``spec`` with a local ``$ref`` followed (keeping its own description and default)."""
    ref = spec.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/") or depth > _MAX_DEPTH:
        return spec
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, Mapping) else None
    if not isinstance(target, Mapping):
        return spec
    return {**_resolve(root, target, depth + 1), **{k: v for k, v in spec.items() if k != "$ref"}}


def _field(root: Mapping[str, Any], name: str, spec: Mapping[str, Any], required: bool) -> FormField:
    branches = spec.get("anyOf") or spec.get("oneOf")
    nullable = False
    if isinstance(branches, list):
        kept = [b for b in branches if isinstance(b, Mapping) and b.get("type") != "null"]
        nullable = len(kept) < len(branches)
        if len(kept) == 1:
            spec = {**_resolve(root, kept[0]), **{k: v for k, v in spec.items() if k not in ("anyOf", "oneOf")}}
    types = spec.get("type")
    if isinstance(types, list):  # ["integer", "null"]: the strict export's nullable field
        real = [t for t in types if t != "null"]
        nullable = nullable or len(real) < len(types)
        spec = {**spec, "type": real[0] if len(real) == 1 else real}
    kind, choices = _kind(spec, nullable)
    default = spec.get("default", _UNSET)
    placeholder = "" if default is _UNSET else f"default: {json.dumps(default, ensure_ascii=False)}"
    if not placeholder and isinstance(spec.get("examples"), list) and spec["examples"]:
        placeholder = f"e.g. {json.dumps(spec['examples'][0], ensure_ascii=False)}"
    description = spec.get("description")
    return FormField(
        name=name,
        kind=kind,
        required=required,
        description=description if isinstance(description, str) else "",
        choices=choices,
        placeholder=placeholder[:120],
        _schema=spec,
    )


def _kind(spec: Mapping[str, Any], nullable: bool) -> tuple[FieldKind, tuple[tuple[str, str], ...]]:
    enum = spec.get("enum")
    if "const" in spec:
        enum = [spec["const"]]
    kind = spec.get("type")
    if isinstance(enum, list) and enum:
        values = [*enum, *([None] if nullable and None not in enum else [])]
        return "choice", tuple((json.dumps(v, ensure_ascii=False), _label(v)) for v in values)
    if kind == "boolean":
        values = [True, False, *([None] if nullable else [])]
        return "choice", tuple((json.dumps(v), _label(v)) for v in values)
    if kind == "integer":
        return "integer", ()
    if kind == "number":
        return "number", ()
    if kind == "string":
        return "text", ()
    return "json", ()


def _label(value: Any) -> str:
    if value is None:
        return "null"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
