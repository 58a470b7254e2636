"""Run a module as if only tooldeck's core dependencies were installed.

Usage: ``python _core_only.py MODULE [ARGS...]``. Every top-level import that belongs to an
installed distribution outside the closure of tooldeck's core requirements (``setup.cfg``'s
``install_requires``, markers evaluated, then each one's own requirements without extras)
raises ``ModuleNotFoundError``, as on a machine where the README's plain ``pip install -e .``
is all there is.
"""

from __future__ import annotations

import configparser
import importlib.abc
import importlib.metadata as metadata
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from packaging.requirements import Requirement

SETUP_CFG = Path(__file__).resolve().parents[3] / "setup.cfg"


def _core_requirements() -> list[str]:
    """``install_requires`` of the checkout's setup.cfg (not the installed metadata, which
    may be older than the checkout)."""
    config = configparser.ConfigParser()
    config.read(SETUP_CFG)
    lines = config["options"]["install_requires"].splitlines()
    return [line.strip() for line in lines if line.strip()]


def _selected(line: str) -> str | None:
    requirement = Requirement(line)
    if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
        return None
    return requirement.name


def core_closure() -> set[str]:
    """The normalised names of the core requirements and theirs, transitively."""
    seen: set[str] = set()
    todo = [name for name in map(_selected, _core_requirements()) if name is not None]
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [name for name in map(_selected, requires) if name is not None]
    return seen


class _Blocker(importlib.abc.MetaPathFinder):
    def __init__(self, blocked: set[str]) -> None:
        self.blocked = blocked

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        if fullname.partition(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {fullname!r} (not a core dependency)", name=fullname)


def main() -> None:
    allowed = core_closure()
    blocked = {
        module
        for module, dists in metadata.packages_distributions().items()
        if not any(d.lower().replace("_", "-") in allowed for d in dists)
    }
    blocked -= {"tools", "shared", "orchestrator"}
    sys.meta_path.insert(0, _Blocker(blocked))
    module, *args = sys.argv[1:]
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
