"""What :meth:`LocalToolRegistry.register <tools.registry.LocalToolRegistry.register>` makes of
what it is given: the checked tool instance to register, and its key.

A plain function is wrapped in a :class:`~tools.function_tool.FunctionTool`; a registration
under another name, description or schema (or with ``expose_errors``) gets an alias, a shallow
copy sharing the tool's collaborators; the name is checked, an overlong description logged and
a tool's own schema converted from a corpus dialect.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tools._foreign_errors import check_expose_errors
from tools._names import check_tool_name
from tools.base import BaseTool, prepare_parameters
from tools.errors import ToolDefinitionError
from tools.function_tool import FunctionTool

_LONG_DESCRIPTION = 1024
# The registry's logger: what register() warns about is logged under the name users configure.
logger = logging.getLogger("tools.registry")


def registered_tool(
    tool: BaseTool[Any, Any] | Callable[..., Any],
    name: str | None,
    description: str | None,
    parameters: Mapping[str, Any] | None,
    expose_errors: Sequence[type[BaseException] | str],
) -> tuple[str, BaseTool[Any, Any]]:
    """The registration key and the tool instance to register (see ``register()``'s arguments).

    Raises:
        InvalidToolNameError: the name does not match ``^[a-zA-Z0-9_-]{1,64}$``.
        ToolDefinitionError: ``tool`` is neither a tool nor a function, or the
            ``parameters`` schema is invalid.
    """
    if isinstance(tool, BaseTool):
        instance: BaseTool[Any, Any] = tool
    elif callable(tool) and not inspect.isclass(tool):
        instance = FunctionTool(tool, name=name, description=description, parameters=parameters)
        name = description = parameters = None
    else:
        raise ToolDefinitionError(
            f"register() takes a BaseTool instance or a function, not {type(tool).__name__}; "
            "did you pass the class instead of an instance?"
        )
    if name is not None or description is not None or parameters is not None or expose_errors:
        instance = _renamed(instance, name, description, parameters)
    if expose_errors:
        owner = f"registration of {instance.name!r}"
        instance.expose_errors = (*instance.expose_errors, *check_expose_errors(expose_errors, owner=owner))
    key = check_tool_name(instance.name, owner=f"registration of {type(instance).__name__}")
    if len(instance.description) > _LONG_DESCRIPTION:
        logger.warning(
            "tool %r: description is %d characters; some providers reject more than %d",
            key,
            len(instance.description),
            _LONG_DESCRIPTION,
        )
    if instance.parameters is not None and parameters is None:
        prepared = prepare_parameters(instance.parameters, owner=f"tool {key!r}")
        if prepared != instance.parameters:  # a corpus dialect, converted (and logged)
            instance.parameters = prepared
            instance.reset_schema_cache()
    return key, instance


def _renamed(
    tool: BaseTool[Any, Any],
    name: str | None,
    description: str | None,
    parameters: Mapping[str, Any] | None,
) -> BaseTool[Any, Any]:
    """A shallow copy of ``tool`` under another name/description/schema (same collaborators)."""
    alias = copy.copy(tool)
    if name is not None:
        alias.name = check_tool_name(name, owner=f"alias of tool {tool.name!r}")
    if description is not None:
        alias.description = description
    if parameters is not None:
        alias.parameters = prepare_parameters(parameters, owner=f"tool {alias.name!r}")
    alias.reset_schema_cache()
    return alias
