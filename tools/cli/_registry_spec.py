"""Find the registry a command works on: ``module:attribute`` or the adopted tools and builtins.

``module:attribute`` resolves as in `tools.registry_spec` (also what ``python -m
orchestrator --registry`` uses): like uvicorn's ``--app-dir``, the module is imported from
the application directory (default: the current one).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.cli._context import CliContext, fail

if TYPE_CHECKING:
    from tools.registry import LocalToolRegistry

logger = logging.getLogger(__name__)


def load_registry(spec: str, app_dir: Path | None = None) -> LocalToolRegistry:
    """Import ``module:attribute`` (from ``app_dir``) and return the registry it names
    (`tools.registry_spec.load_registry`: a registry, a factory, a tool or a list of tools).

    Raises:
        CliError: the spec is malformed, the import fails, or it names something else.
    """
    from tools.registry_spec import RegistrySpecError
    from tools.registry_spec import load_registry as resolve

    try:
        return resolve(spec, app_dir)
    except RegistrySpecError as exc:
        fail(str(exc))


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
