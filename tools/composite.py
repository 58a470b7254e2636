"""Multi-action tools: ``CompositeTool`` dispatching to ``ActionStrategy`` objects by ``action``."""

from __future__ import annotations

import copy
import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, create_model

from tools._actions import Action, ActionSet
from tools._arguments import describe_arguments, validate_with_model
from tools._risk_words import risky_word
from tools.base import BaseTool
from tools.errors import ToolDefinitionError
from tools.manual import ActionRisk, RiskLevel, ToolManual
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
        risk: The action's risk (``safe``, ``moderate``, ``dangerous``): the approval gate
            asks for a call of this action as for a tool of this risk. None (undeclared)
            fails closed: ``moderate``, or ``dangerous`` when the action's name destroys,
            sends, pays, deploys or executes.
        mutating: Whether the action can change anything (None: undeclared, so True).
    """

    action_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    RequestModel: ClassVar[type[BaseModel] | None] = None
    risk: ClassVar[RiskLevel | None] = None
    mutating: ClassVar[bool | None] = None

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
    non-null ones are a ``validation_error`` naming what the chosen action accepts; a
    missing or unknown ``action`` is an ``unknown_action`` error listing every action and
    its arguments. The rule lives in :class:`tools._actions.ActionSet`, which
    :class:`~tools.external.ExternalTool` shares.

    Risk is per action: each strategy declares its ``risk`` and ``mutating``, and
    :meth:`get_manual` carries them (``ToolManual.actions``), so the approval gate asks for a
    call as its ``action`` requires (an unknown or missing action: the riskiest one's).

    Args:
        strategies: The actions; their ``action_name`` values must be unique and non-empty.
    """

    def __init__(self, strategies: Iterable[ActionStrategy[Any]]) -> None:
        self._strategies: dict[str, ActionStrategy[Any]] = {}
        self._risks: tuple[ActionRisk, ...] = ()
        actions: list[Action] = []
        for strategy in strategies:
            name = strategy.action_name
            if not name or name in self._strategies:
                raise ToolDefinitionError(
                    f"{type(self).__name__}: every ActionStrategy needs a unique, non-empty "
                    f"action_name; {type(strategy).__name__} has {name!r}."
                )
            self._strategies[name] = strategy
            actions.append(_model_action(strategy))
        if not self._strategies:
            raise ToolDefinitionError(f"{type(self).__name__}: give at least one ActionStrategy.")
        self._actions = ActionSet(actions, owner=type(self).__name__)
        self._risks = tuple(_action_risk(strategy) for strategy in self._strategies.values())
        self.parameters = copy.deepcopy(self._actions.flat_schema())

    @property
    def actions(self) -> dict[str, ActionStrategy[Any]]:
        """The strategies by action name (a copy)."""
        return dict(self._strategies)

    def get_manual(self) -> ToolManual:
        """The tool's manual (its own ``manual``, else a fail-closed one) with the risk of
        each action: ``risk`` is the riskiest action's."""
        base = BaseTool.get_manual(self)
        memo = self.__dict__.get("_td_action_manual")
        if memo is not None and memo[0] is base:
            return memo[1]  # type: ignore[no-any-return]
        manual = base.with_actions(self._risks)
        self.__dict__["_td_action_manual"] = (base, manual)
        return manual

    def validate_input(self, /, **kwargs: Any) -> ActionCall:
        """Pick the strategy by ``action`` and validate the rest with its request model."""
        chosen = self._actions.dispatch(kwargs, tool_name=self.name)
        return ActionCall(self._strategies[chosen.action.name], chosen.request)

    def execute_internal(self, request: ActionCall) -> Any:
        """Run the chosen action."""
        return request.strategy.execute(request.request)


def _action_risk(strategy: ActionStrategy[Any]) -> ActionRisk:
    """The declared risk of ``strategy``, or the fail-closed default for what it left out."""
    risk = strategy.risk
    if risk is None:
        risk = "dangerous" if risky_word(strategy.action_name) is not None else "moderate"
    mutating = strategy.mutating if strategy.mutating is not None else True
    declared = strategy.risk is not None and strategy.mutating is not None
    return ActionRisk(name=strategy.action_name, risk=risk, mutating=mutating, declared=declared)


def _model_action(strategy: ActionStrategy[Any]) -> Action:
    """The :class:`Action` of a strategy: its request model's schema and validation."""
    model = strategy.RequestModel or _no_arguments()
    schema = model_schema(model, closed=True)
    accepted = describe_arguments(schema)
    strip = NullStripper(schema)

    def validate(arguments: dict[str, Any], headline: str, tool_name: str) -> Any:
        return validate_with_model(
            model,
            arguments,
            schema=schema,
            tool_name=tool_name,
            headline=headline,
            accepted=accepted,
            strip=strip,
        )

    return Action(strategy.action_name, strategy.description, schema, validate)
