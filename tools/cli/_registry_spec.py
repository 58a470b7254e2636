"""Find the registry a command works on: ``module:attribute`` or the adopted tools and builtins.

Like uvicorn's ``--app-dir``, the module is imported from the application directory
(default: the current one). The attribute may be a ``LocalToolRegistry`` or a function
returning one.
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.cli._context import CliContext, fail

if TYPE_CHECKING:
    from tools.registry import LocalToolRegistry

logger = logging.getLogger(__name__)


def load_registry(spec: str, app_dir: Path | None = None) -> LocalToolRegistry:
    """Import ``module:attribute`` (from ``app_dir``) and return the registry it names.

    Raises:
        CliError: the spec is malformed, the import fails, or it names something else.
    """
    from tools.registry import LocalToolRegistry

    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        fail(f"registry {spec!r}: expected 'module:attribute', e.g. 'myapp.tools:build_registry'")
    directory = str((app_dir or Path.cwd()).resolve())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        fail(
            f"registry {spec!r}: cannot import {module_name!r} ({exc}); run from the project root or pass --app-dir DIR"
        )
    target = getattr(module, attr, None)
    if target is None:
        fail(f"registry {spec!r}: module {module_name!r} has no attribute {attr!r}")
    if callable(target) and not isinstance(target, LocalToolRegistry):
        target = target()
    if not isinstance(target, LocalToolRegistry):
        fail(f"registry {spec!r}: {attr} is (or returned) {type(target).__name__}, not a LocalToolRegistry")
    return target


def default_registry(cli: CliContext) -> LocalToolRegistry:
    """The builtin tools that need no configuration, plus every adopted tool (with manuals).

    An adopted tool whose name clashes with a builtin, or that cannot be built, is left out
    with a WARNING.
    """
    from tools.registry import LocalToolRegistry

    registry = LocalToolRegistry()
    for tool in _builtins():
        registry.register(tool)
    service = cli.registry_service(with_catalog=False)
    skipped: dict[str, str] = {}
    for tool in service.build_tools(skipped=skipped):
        if tool.name in registry:
            logger.warning("adopted tool %s clashes with a builtin tool and is left out", tool.name)
            continue
        try:
            registry.register(tool)
        except Exception as exc:  # a bad hand-written schema: leave that one tool out
            logger.warning("adopted tool %s not registered: %s", tool.name, exc)
    return registry


def _builtins() -> list[Any]:
    tools: list[Any] = []
    try:
        from tools.builtin.math import MathSolverTool

        tools.append(MathSolverTool())
    except ImportError as exc:  # pragma: no cover - sympy is a core dependency
        logger.warning("math_solver left out: %s", exc)
    return tools
