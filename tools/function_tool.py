"""Plain functions as tools: ``FunctionTool`` builds a request model from the signature.

Parameter types and defaults come from the signature; parameter descriptions from the
docstring (Google, NumPy or Sphinx style, typed or untyped, via ``docstring_parser``); the
tool description is the docstring's prose (its summary and the paragraphs after it, where
usage guidance such as "never guess an id" lives) without its ``Args:``/``Returns:``/
``Raises:``/``Examples:`` sections, and never the Python signature.

Parameters whose names start with ``_`` and have a default are not shown to the model: they
keep their Python default (the closure idiom ``def f(query, _client=client)``).
"""

from __future__ import annotations

import datetime
import decimal
import enum
import inspect
import re
import threading
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, create_model

from tools._docstrings import parse_docstring
from tools._names import check_tool_name
from tools.base import BaseTool, prepare_parameters
from tools.errors import ToolDefinitionError

_SIMPLE_TYPES: dict[str, Any] = {
    "int": int,
    "integer": int,
    "str": str,
    "string": str,
    "float": float,
    "number": float,
    "bool": bool,
    "boolean": bool,
    "list": list,
    "array": list,
    "dict": dict,
    "object": dict,
    "mapping": dict,
}


def _dates() -> tuple[type, ...]:
    return (datetime.datetime, datetime.date, datetime.time, datetime.timedelta, decimal.Decimal, uuid.UUID)


_LIST_OF = re.compile(r"^(?:list|sequence|iterable)\s*(?:\[\s*(\w+)\s*\]|\s+of\s+(\w+?)s?)$", re.I)


def _docstring_type(type_name: str | None) -> Any:
    """Map a docstring type ('int', 'list of str', 'Optional[int]', 'str, optional') to a type."""
    if not type_name:
        return None
    text = type_name.strip()
    text = re.sub(r",?\s*optional$", "", text, flags=re.I).strip()
    optional = False
    match = re.fullmatch(r"optional\[(.+)\]", text, flags=re.I)
    if match:
        text, optional = match.group(1).strip(), True
    base = _SIMPLE_TYPES.get(text.lower())
    if base is None:
        listed = _LIST_OF.match(text)
        if listed:
            item = _SIMPLE_TYPES.get((listed.group(1) or listed.group(2) or "").lower())
            base = list[item] if item is not None else list  # type: ignore[valid-type]
    if base is None:
        return None
    return base | None if optional else base


class FunctionTool(BaseTool[BaseModel, Any]):
    """A :class:`~tools.base.BaseTool` wrapping a plain (sync or async) function.

    Args:
        func: The function. ``*args`` is not supported; ``**kwargs`` makes the schema open.
        name: Tool name (default: the function's ``__name__``).
        description: Tool description (default: the docstring's prose without its sections).
        version: Reported in every result's metadata.
        parameters: A hand-written JSON schema to show the model and to validate the
            arguments against (instead of the signature's); the function receives the
            validated values as keyword arguments.

    Raises:
        ToolDefinitionError: the name is invalid or the signature cannot be a tool.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        version: str = "0.1.0",
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        self.func = func
        self.name = check_tool_name(name or getattr(func, "__name__", ""), owner=f"function {func!r}")
        doc = parse_docstring(inspect.getdoc(func) or "")
        self.description = description if description is not None else _prose(doc)
        self.version = version
        hints = _type_hints(func)
        return_type = hints.get("return")
        if typing.get_origin(return_type) is typing.Annotated:
            return_type = typing.get_args(return_type)[0]
        if inspect.isclass(return_type) and issubclass(return_type, BaseModel):
            self.ResponseModel = return_type
        if parameters is not None:
            # The hand-written schema is the contract: the signature needs no model of its own.
            self.parameters = prepare_parameters(parameters, owner=f"function tool {self.name!r}")
            self.RequestModel = None
            self._positional = _positional_only(func, self.name)
            self._open = self._plain = False
            return
        param_docs = {p.arg_name.lstrip("*"): p for p in doc.params}
        arguments = _arguments(func, self.name, param_docs, hints)
        self._positional, self._open = arguments.positional, arguments.open
        self._plain = not self._positional and not self._open
        if _builds_later(arguments):
            # Built on first use (a call, a schema): registering stays as cheap as the
            # signature and docstring reading it needs.
            self.__dict__["_td_pending_model"] = arguments
            self.__dict__["_td_model_lock"] = threading.Lock()
        else:  # may fail: build it now, so the mistake is reported at registration
            self.RequestModel = _build_model(self.name, arguments)

    @property
    def RequestModel(self) -> type[BaseModel] | None:
        """The argument model, built from the signature on first use."""
        model: type[BaseModel] | None = self.__dict__.get("_td_request_model")
        if model is None and "_td_pending_model" in self.__dict__:
            with self.__dict__["_td_model_lock"]:
                pending = self.__dict__.get("_td_pending_model")
                if pending is not None:
                    self.__dict__["_td_request_model"] = _build_model(self.name, pending)
                    del self.__dict__["_td_pending_model"]
                model = self.__dict__.get("_td_request_model")
        return model

    @RequestModel.setter
    def RequestModel(self, model: type[BaseModel] | None) -> None:
        self.__dict__.pop("_td_pending_model", None)
        self.__dict__["_td_request_model"] = model

    def __getstate__(self) -> dict[str, Any]:
        """The tool without its build lock (a copy sent to another process, e.g. a Ray worker)."""
        state = self.__dict__.copy()
        state.pop("_td_model_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "_td_pending_model" in state:
            self.__dict__["_td_model_lock"] = threading.Lock()

    @property
    def is_async(self) -> bool:
        """True when the wrapped function is ``async def``."""
        return inspect.iscoroutinefunction(self.func)

    def execute_internal(self, request: BaseModel | dict[str, Any]) -> Any:
        """Call the function with the validated arguments."""
        if self._plain:  # the common case: keyword arguments straight from the model
            return self.func(**request.__dict__)
        if isinstance(request, dict):  # validated against hand-written ``parameters``
            positional = [request.pop(p) for p in self._positional if p in request]
            return self.func(*positional, **request)
        values = request.__dict__
        if self._open:
            values = {**values, **(request.__pydantic_extra__ or {})}
        positional = [values[p] for p in self._positional]
        keywords = {k: v for k, v in values.items() if k not in self._positional}
        return self.func(*positional, **keywords)


def _prose(doc: Any) -> str:
    """The docstring's summary and following paragraphs, without its sections."""
    parts = [part.strip() for part in (doc.short_description, doc.long_description) if part and part.strip()]
    return "\n\n".join(parts)


def _signature(func: Callable[..., Any], tool_name: str) -> inspect.Signature:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"function tool {tool_name!r}: cannot read its signature ({exc}).") from None


def _positional_only(func: Callable[..., Any], tool_name: str) -> list[str]:
    params = _signature(func, tool_name).parameters.values()
    return [p.name for p in params if p.kind is p.POSITIONAL_ONLY]


def _type_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """The function's resolved annotations (``Annotated`` kept); empty when they cannot be
    resolved (a forward reference to a name that does not exist)."""
    try:
        return typing.get_type_hints(func, include_extras=True)
    except Exception:
        return {}


#: Types whose pydantic schema cannot fail to build (with the containers below).
_PLAIN_TYPES: frozenset[Any] = frozenset(
    {str, int, float, bool, bytes, type(None), None, Any, list, dict, set, frozenset, tuple, *_dates()}
)
_CONTAINERS = frozenset({list, dict, set, frozenset, tuple, typing.Union, types.UnionType})
#: Argument names a model cannot take as they are (pydantic warns or refuses at build time).
_MODEL_NAMES = frozenset(dir(BaseModel))


def _builds_surely(annotation: Any, depth: int = 0) -> bool:  # noqa: PLR0911 - one answer per kind of type
    """Whether pydantic surely builds a validator for ``annotation`` (plain types, enums,
    finished models, literals, and unions and containers of those). Anything else (an
    arbitrary class, ``Annotated`` constraints that may not apply) is built at once, so that
    a mistake is reported at registration, not at the first call."""
    if depth > 8:
        return False
    try:
        if annotation in _PLAIN_TYPES:
            return True
    except TypeError:  # unhashable: not a plain type
        return False
    if inspect.isclass(annotation):
        if issubclass(annotation, BaseModel):
            return bool(annotation.__pydantic_complete__)
        return issubclass(annotation, enum.Enum)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin not in _CONTAINERS:
        return False
    return all(arg is Ellipsis or _builds_surely(arg, depth + 1) for arg in typing.get_args(annotation))


class _Arguments(NamedTuple):
    """A function's arguments as the model sees them, read from its signature."""

    fields: dict[str, tuple[Any, Any, str | None]]  # name -> (annotation, default, description)
    positional: list[str]
    open: bool


def _arguments(
    func: Callable[..., Any], tool_name: str, param_docs: dict[str, Any], hints: dict[str, Any]
) -> _Arguments:
    """The arguments of ``func``: each one's annotation, default and description.

    Raises:
        ToolDefinitionError: a parameter no model could send (``*args``, ``_private``
            without a default).
    """
    fields: dict[str, tuple[Any, Any, str | None]] = {}
    positional: list[str] = []
    open_schema = False
    for param in _signature(func, tool_name).parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            raise ToolDefinitionError(
                f"function tool {tool_name!r}: *{param.name} cannot be sent by a model; use a list parameter instead."
            )
        if param.kind is param.VAR_KEYWORD:
            open_schema = True
            continue
        if param.name.startswith("_"):
            if param.default is not inspect.Parameter.empty:
                continue  # private, keeps its Python default: never shown to the model
            raise ToolDefinitionError(
                f"function tool {tool_name!r}: parameter {param.name!r} starts with '_' and has no "
                "default, so no call could supply it; give it a default or rename it."
            )
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(param.name)
        doc = param_docs.get(param.name)
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if annotation is inspect.Parameter.empty:
            annotation = _docstring_type(getattr(doc, "type_name", None))
            if annotation is None:
                default = param.default
                annotation = type(default) if default not in (inspect.Parameter.empty, None) else Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default, getattr(doc, "description", None) or None)
    return _Arguments(fields, positional, open_schema)


def _builds_later(arguments: _Arguments) -> bool:
    """Whether the argument model may be built on first use: it surely builds (see
    :func:`_builds_surely`) and no name clashes with a ``BaseModel`` attribute."""
    return all(
        _builds_surely(annotation) and name not in _MODEL_NAMES for name, (annotation, _, _) in arguments.fields.items()
    )


def _build_model(tool_name: str, arguments: _Arguments) -> type[BaseModel]:
    """The pydantic model of the arguments (closed unless the function takes ``**kwargs``).

    Raises:
        ToolDefinitionError: pydantic cannot build it (the message says why).
    """
    from pydantic import Field  # deferred: importing it loads pydantic.types (~25 ms)

    fields: dict[str, Any] = {
        name: (annotation, Field(default, description=description))
        for name, (annotation, default, description) in arguments.fields.items()
    }
    config = ConfigDict(extra="allow" if arguments.open else "forbid", protected_namespaces=())
    model_name = "".join(part.capitalize() for part in re.split(r"[_-]+", tool_name)) + "Arguments"
    try:
        return create_model(model_name, __config__=config, **fields)
    except Exception as exc:
        raise ToolDefinitionError(f"function tool {tool_name!r}: cannot build its argument model: {exc}") from None
