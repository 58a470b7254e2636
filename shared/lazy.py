"""Public names of a package imported on first use (PEP 562), so importing the package stays cheap.

A package lists where each of its public names lives and hands the two module hooks this
returns to Python::

    _HOMES = {"MCPToolset": "tools.external.mcp.toolset", ...}
    __getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)

The first ``package.Name`` (or ``from package import Name``) imports the module that defines
it; the value is then a plain attribute of the package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose names live in ``homes``.

    Args:
        package: The package's ``__name__`` (already in ``sys.modules``: call this from it).
        homes: Public name -> the module that defines it.
        public: The package's ``__all__``: what ``dir(package)`` lists.
    """
    namespace = sys.modules[package].__dict__
    listed = list(public)

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(listed)

    return __getattr__, __dir__
