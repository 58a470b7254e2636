"""The multi-action rule shared by :class:`~tools.composite.CompositeTool` and
:class:`~tools.external.external_tool.ExternalTool`: one flat schema, one dispatch.

A multi-action tool takes an ``action`` argument that picks one of its actions; each action
validates the rest of the arguments with its own schema. :class:`ActionSet` holds the
actions and implements, once, what both kinds of tool promise:

* The flat schema: ``action`` as a required enum (described with what each action does),
  then the union of the actions' parameters, each described with the actions that use it
  ("Used by action search, load (optional)."). The schema is closed
  (``additionalProperties: false``) when every action's schema is closed.
* Dispatch: a missing or unknown ``action`` is an ``unknown_action`` error listing every
  action with what it takes. Arguments the chosen action does not declare are dropped when
  they are null and belong to another action (a strict-mode model sends every parameter,
  the unused ones null); any other such argument is a ``validation_error`` naming what the
  chosen action accepts, unless the action's own schema is open (then the action's
  validation decides). The rest goes to the action's own validation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tools._arguments import AcceptedArguments, describe_arguments, field_error, invalid_arguments
from tools.errors import ToolDefinitionError, UnknownActionError

#: ``validate(arguments, headline, tool_name) -> request``; raises ``InvalidArgumentsError``.
Validate = Callable[[dict[str, Any], str, str], Any]


@dataclass(frozen=True)
class Action:
    """One action as the dispatcher sees it.

    Attributes:
        name: The value of ``action`` that selects it.
        description: What it does, for the model.
        schema: JSON schema (an object schema) of its arguments.
        validate: Turns its arguments into the request its tool runs; gets the arguments,
            the headline for error messages and the tool's name.
    """

    name: str
    description: str
    schema: Mapping[str, Any]
    validate: Validate
    accepted: AcceptedArguments = field(init=False, repr=False, compare=False)
    properties: frozenset[str] = field(init=False, repr=False, compare=False)
    closed: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        props = self.schema.get("properties")
        object.__setattr__(self, "accepted", describe_arguments(self.schema))
        object.__setattr__(self, "properties", frozenset(props if isinstance(props, Mapping) else ()))
        object.__setattr__(self, "closed", self.schema.get("additionalProperties") is False)

    def takes(self) -> str:
        """``"module, force?"``: its arguments, optional ones marked with ``?``."""
        props = self.schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return "no arguments"
        required = set(self.schema.get("required") or ())
        return ", ".join(f"{p}{'' if p in required else '?'}" for p in props)


@dataclass(frozen=True)
class Dispatched:
    """The outcome of :meth:`ActionSet.dispatch`: the chosen action and its request."""

    action: Action
    request: Any


class ActionSet:
    """The actions of one multi-action tool: the flat schema and the dispatch rule.

    Args:
        actions: The actions, in the order the model is shown them.
        owner: Names the tool in definition errors (e.g. its class name or config id).

    Raises:
        ToolDefinitionError: no actions, a repeated or empty action name, an action with an
            argument called ``action``, or two actions defining different ``$defs`` entries
            under one name.
    """

    def __init__(self, actions: Iterable[Action], *, owner: str) -> None:
        self._actions: dict[str, Action] = {}
        for action in actions:
            if not action.name or action.name in self._actions:
                raise ToolDefinitionError(f"{owner}: every action needs a unique, non-empty name; got {action.name!r}.")
            if "action" in action.properties:
                raise ToolDefinitionError(
                    f"{owner}: action {action.name!r} has an argument called 'action', which "
                    "selects the action in a multi-action tool; rename the argument or expose "
                    "the actions as separate tools."
                )
            self._actions[action.name] = action
        if not self._actions:
            raise ToolDefinitionError(f"{owner}: give at least one action.")
        self._all_params = frozenset(p for a in self._actions.values() for p in a.properties)
        self._schema = _flat_schema(list(self._actions.values()), owner)

    @property
    def names(self) -> list[str]:
        """The action names, in order."""
        return list(self._actions)

    def get(self, name: str) -> Action | None:
        """The action called ``name``, or None."""
        return self._actions.get(name)

    def flat_schema(self) -> dict[str, Any]:
        """The tool's argument schema (the same dict every call: copy before changing it)."""
        return self._schema

    def dispatch(self, arguments: Mapping[str, Any], *, tool_name: str) -> Dispatched:
        """Pick the action named by ``arguments["action"]`` and validate the rest with it.

        Raises:
            UnknownActionError: ``action`` is missing or names no action.
            InvalidArgumentsError: an argument the action does not take, or the action's
                own validation failed.
        """
        kwargs = dict(arguments)
        name = kwargs.pop("action", None)
        action = self._actions.get(name) if isinstance(name, str) else None
        if action is None:
            raise self.unknown_action(name, tool_name=tool_name)
        rejected: list[str] = []
        for key in [k for k in kwargs if k not in action.properties]:
            if kwargs[key] is None and key in self._all_params:
                del kwargs[key]  # another action's argument, left empty
            elif action.closed:
                rejected.append(key)
        headline = f"Invalid arguments for action '{action.name}' of tool '{tool_name}':"
        if rejected:
            problem = f"not an argument of action '{action.name}'"
            records = [field_error((key,), problem, sent=False) for key in rejected]
            raise invalid_arguments(tool_name, records, action.accepted, headline=headline)
        return Dispatched(action, action.validate(kwargs, headline, tool_name))

    def unknown_action(self, got: Any, *, tool_name: str) -> UnknownActionError:
        """The ``unknown_action`` error for ``got``: every action, what it does and takes."""
        first = (
            f"Tool '{tool_name}' needs an 'action' argument."
            if got is None
            else f"Tool '{tool_name}' has no action {_short(got)}."
        )
        lines = [first, "Available actions:"]
        for action in self._actions.values():
            what = _sentence(action.description)
            lines.append(f"- {action.name}: {what + ' ' if what else ''}Takes: {action.takes()}.")
        example = next(iter(self._actions))
        lines.append(f'Call again with e.g. {{"action": "{example}", ...}}.')
        details = {"actions": list(self._actions), "got": got if _jsonable_scalar(got) else repr(got)[:80]}
        return UnknownActionError("\n".join(lines), details=details)


def _flat_schema(actions: list[Action], owner: str) -> dict[str, Any]:
    properties: dict[str, dict[str, Any]] = {}
    users: dict[str, list[str]] = {}
    defs: dict[str, Any] = {}
    for action in actions:
        for key, value in (action.schema.get("$defs") or {}).items():
            if key in defs and defs[key] != value:
                raise ToolDefinitionError(
                    f"{owner}: two actions define different schemas named {key!r} in $defs; rename one of them."
                )
            defs[key] = value
        required = set(action.schema.get("required") or ())
        for key, prop in (action.schema.get("properties") or {}).items():
            users.setdefault(key, []).append(action.name + ("" if key in required else " (optional)"))
            properties.setdefault(key, dict(prop) if isinstance(prop, Mapping) else {})
    action_help = " ".join(f"'{a.name}': {_sentence(a.description)}".rstrip() for a in actions)
    flat: dict[str, Any] = {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": [a.name for a in actions],
                "description": f"The action to perform. {action_help}".rstrip(),
            }
        },
        "required": ["action"],
    }
    for key, prop in properties.items():
        used = "Used by action " + ", ".join(users[key]) + "."
        desc = prop.get("description")
        prop["description"] = f"{_sentence(desc)} {used}" if isinstance(desc, str) and desc.strip() else used
        flat["properties"][key] = prop
    if all(a.closed for a in actions):
        flat["additionalProperties"] = False
    if defs:
        flat["$defs"] = defs
    return flat


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _jsonable_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))
