"""Multi-action tools: ``CompositeTool`` dispatching to ``ActionStrategy`` objects by ``action``."""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, create_model

from tools._arguments import describe_arguments, field_error, invalid_arguments, validate_with_model
from tools.base import BaseTool
from tools.errors import ToolDefinitionError, UnknownActionError
from tools.schema import model_schema
from tools.schema._nulls import NullStripper

TActionRequest = TypeVar("TActionRequest", bound=BaseModel)


@functools.cache
def _no_arguments() -> type[BaseModel]:
    """The request model of an action that takes no arguments (built on first use)."""
    return create_model("NoArguments")


class ActionStrategy(ABC, Generic[TActionRequest]):
    """One action of a :class:`CompositeTool`, with its own request model.

    Class attributes:
        action_name: The value of ``action`` that selects this strategy.
        description: What the action does, written for the model.
        RequestModel: Defaults to the generic argument (None: the action takes no arguments).
    """

    action_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    RequestModel: ClassVar[type[BaseModel] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):
            origin = get_origin(base)
            if inspect.isclass(origin) and issubclass(origin, ActionStrategy):
                args = get_args(base)
                arg = args[0] if args else None
                is_model = inspect.isclass(arg) and issubclass(arg, BaseModel)
                if is_model and "RequestModel" not in cls.__dict__:
                    cls.RequestModel = cast(type[BaseModel], arg)

    @abstractmethod
    def execute(self, request: TActionRequest) -> Any:
        """Run the action (may be ``async def``); raise ``ToolError`` for model-visible failures."""


@dataclass(frozen=True, slots=True)
class ActionCall:
    """A validated request for one action: what ``CompositeTool.execute_internal`` receives."""

    strategy: ActionStrategy[Any]
    request: BaseModel


class CompositeTool(BaseTool[ActionCall, Any]):
    """One tool, several actions chosen by the ``action`` argument (strategy pattern).

    Dispatch is a dict lookup. The exported schema is flat: ``action`` as an enum, then the
    union of the actions' parameters, each described with the actions that use it. Null
    arguments that belong to other actions are dropped (models send them under strict mode);
    non-null ones are a ``validation_error`` naming what the chosen action accepts.

    Args:
        strategies: The actions; their ``action_name`` values must be unique and non-empty.
    """

    def __init__(self, strategies: Iterable[ActionStrategy[Any]]) -> None:
        self._strategies: dict[str, ActionStrategy[Any]] = {}
        for strategy in strategies:
            action = strategy.action_name
            if not action or action in self._strategies:
                raise ToolDefinitionError(
                    f"{type(self).__name__}: every ActionStrategy needs a unique, non-empty "
                    f"action_name; {type(strategy).__name__} has {action!r}."
                )
            self._strategies[action] = strategy
        if not self._strategies:
            raise ToolDefinitionError(f"{type(self).__name__}: give at least one ActionStrategy.")
        self._models = {a: s.RequestModel or _no_arguments() for a, s in self._strategies.items()}
        self._schemas = {a: model_schema(m, closed=True) for a, m in self._models.items()}
        self._action_accepted = {a: describe_arguments(schema) for a, schema in self._schemas.items()}
        self._action_strippers = {a: NullStripper(schema) for a, schema in self._schemas.items()}
        self._all_params = {p for schema in self._schemas.values() for p in schema.get("properties", {})}
        self.parameters = self._flat_schema()

    @property
    def actions(self) -> dict[str, ActionStrategy[Any]]:
        """The strategies by action name (a copy)."""
        return dict(self._strategies)

    def validate_input(self, /, **kwargs: Any) -> ActionCall:
        """Pick the strategy by ``action`` and validate the rest with its request model."""
        action = kwargs.pop("action", None)
        strategy = self._strategies.get(action) if isinstance(action, str) else None
        if strategy is None:
            raise self._unknown_action(action)
        schema = self._schemas[strategy.action_name]
        own = schema.get("properties", {})
        foreign = [key for key in kwargs if key not in own]
        rejected = []
        for key in foreign:
            if kwargs[key] is None and key in self._all_params:
                del kwargs[key]
            else:
                rejected.append(key)
        headline = f"Invalid arguments for action '{strategy.action_name}' of tool '{self.name}':"
        if rejected:
            records = [
                field_error((key,), f"not an argument of action '{strategy.action_name}'", sent=False)
                for key in rejected
            ]
            raise invalid_arguments(self.name, records, self._action_accepted[strategy.action_name], headline=headline)
        request = validate_with_model(
            self._models[strategy.action_name],
            kwargs,
            schema=schema,
            tool_name=self.name,
            headline=headline,
            accepted=self._action_accepted[strategy.action_name],
            strip=self._action_strippers[strategy.action_name],
        )
        return ActionCall(strategy, request)

    def execute_internal(self, request: ActionCall) -> Any:
        """Run the chosen action."""
        return request.strategy.execute(request.request)

    def _unknown_action(self, action: Any) -> UnknownActionError:
        lines = [
            f"Tool '{self.name}' needs an 'action' argument."
            if action is None
            else f"Tool '{self.name}' has no action {action!r}.",
            "Available actions:",
        ]
        for name, strategy in self._strategies.items():
            params = self._schemas[name].get("properties", {})
            required = set(self._schemas[name].get("required", ()))
            takes = ", ".join(f"{p}{'' if p in required else '?'}" for p in params) or "no arguments"
            lines.append(f"- {name}: {strategy.description} Takes: {takes}.")
        example = next(iter(self._strategies))
        lines.append(f'Call again with e.g. {{"action": "{example}", ...}}.')
        return UnknownActionError("\n".join(lines), details={"actions": list(self._strategies), "got": action})

    def _flat_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        users: dict[str, list[str]] = {}
        defs: dict[str, Any] = {}
        for action, schema in self._schemas.items():
            for key, value in schema.get("$defs", {}).items():
                if key in defs and defs[key] != value:
                    raise ToolDefinitionError(
                        f"{type(self).__name__}: two actions define different models named {key!r}; rename one of them."
                    )
                defs[key] = value
            required = set(schema.get("required", ()))
            for key, prop in schema.get("properties", {}).items():
                users.setdefault(key, []).append(action + ("" if key in required else " (optional)"))
                properties.setdefault(key, dict(prop))
        action_help = " ".join(f"'{a}': {_sentence(s.description)}" for a, s in self._strategies.items())
        flat: dict[str, Any] = {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": list(self._strategies),
                    "description": f"The action to perform. {action_help}",
                }
            },
            "required": ["action"],
            "additionalProperties": False,
        }
        for key, prop in properties.items():
            used = "Used by action " + ", ".join(users[key]) + "."
            desc = prop.get("description")
            prop["description"] = f"{_sentence(desc)} {used}" if desc else used
            flat["properties"][key] = prop
        if defs:
            flat["$defs"] = defs
        return flat


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."
