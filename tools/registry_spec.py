"""``module:factory``: an application's tools, named on a command line.

``tooldeck --registry myapp.tools:build`` and ``python -m orchestrator --registry
mytools:build`` resolve the same way, here: ``module`` is imported (the application
directory, default the current one, comes first on ``sys.path``, as with uvicorn's
``--app-dir``) and ``attribute`` is looked up in it. The attribute may be:

* a `tools.LocalToolRegistry`, or a function returning one (its registrations are used
  as registered: manuals, presets, timeouts, retry policies, hidden aliases);
* a tool (a `tools.BaseTool` instance or a plain function), or a list of them, or a
  function returning either: they are registered in a new registry.

A function that takes arguments is not called (a plain function *tool* of that name is
what is meant then). `copy_registrations` moves a registry's tools into another one (the
orchestrator's, beside its builtins), each with its own registration options.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tools.base import BaseTool
from tools.errors import TooldeckError
from tools.registry import LocalToolRegistry

__all__ = ["RegistrySpecError", "copy_registrations", "load_registry"]


class RegistrySpecError(TooldeckError):
    """A ``module:factory`` could not be resolved; the message names the spec, the cause and the fix."""


def load_registry(spec: str, app_dir: Path | None = None) -> LocalToolRegistry:
    """The registry ``spec`` names (see the module docstring).

    Raises:
        RegistrySpecError: a malformed spec, an import that fails, a missing attribute, or
            something that is not a registry, a tool or a list of tools.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise RegistrySpecError(f"registry {spec!r}: expected 'module:attribute', e.g. 'myapp.tools:build_registry'")
    directory = str((app_dir or Path.cwd()).resolve())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RegistrySpecError(
            f"registry {spec!r}: cannot import {module_name!r} ({exc}); run from the project root or pass --app-dir DIR"
        ) from None
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise RegistrySpecError(f"registry {spec!r}: module {module_name!r} has no attribute {attr!r}")
    if _is_factory(target):
        try:
            target = target()
        except TooldeckError as exc:
            raise RegistrySpecError(f"registry {spec!r}: {attr}() failed: {exc}") from None
    return _as_registry(spec, attr, target)


def _is_factory(target: Any) -> bool:
    """A zero-argument function (not a tool instance, not a class, not a function tool)."""
    if isinstance(target, (LocalToolRegistry, BaseTool)) or inspect.isclass(target) or not callable(target):
        return False
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in signature.parameters.values()
    )


def _as_registry(spec: str, attr: str, target: Any) -> LocalToolRegistry:
    if isinstance(target, LocalToolRegistry):
        return target
    items = list(target) if isinstance(target, (list, tuple)) else [target]
    wrong = [type(item).__name__ for item in items if not isinstance(item, BaseTool) and not _is_function(item)]
    if wrong or not items:
        got = type(target).__name__ if not isinstance(target, (list, tuple)) else f"a list with {', '.join(wrong)}"
        raise RegistrySpecError(
            f"registry {spec!r}: {attr} is (or returned) {got or 'an empty list'}, not a LocalToolRegistry, a tool or "
            "a list of tools; return e.g. a LocalToolRegistry with your tools registered"
        )
    registry = LocalToolRegistry()
    for item in items:
        registry.register(item)
    return registry


def _is_function(item: Any) -> bool:
    return callable(item) and not inspect.isclass(item)


def copy_registrations(
    source: LocalToolRegistry, target: LocalToolRegistry, *, names: Iterable[str] | None = None
) -> list[str]:
    """Register ``source``'s tools in ``target``, each with its registration options.

    Manuals, presets (arguments the registration fixes, hidden from the model), timeouts,
    retry policies and hidden aliases carry over; breakers and metrics are ``target``'s,
    and so is its approval policy: every call of a copied tool goes through ``target``.

    Args:
        source: Where the tools are registered now.
        target: Where they are added.
        names: Only these (default: every registration, in order).

    Returns:
        The names registered.

    Raises:
        DuplicateToolError: ``target`` already has one of the names (nothing is registered then).
    """
    from tools.errors import DuplicateToolError

    entries = source._entries  # same package: a registration's options are not public
    chosen = list(entries) if names is None else [name for name in names if name in entries]
    taken = [name for name in chosen if name in target]
    if taken:
        raise DuplicateToolError(
            f"tool name(s) {', '.join(map(repr, taken))} are registered already; rename your tool(s) (name= in "
            "register) or leave the other tools out"
        )
    register: Callable[..., Any] = target.register
    for name in chosen:
        entry = entries[name]
        register(
            entry.tool,
            manual=entry.manual,
            preset=entry.preset or None,
            timeout=entry.timeout,
            retry=entry.retry,
            hidden=entry.hidden,
        )
    return chosen
