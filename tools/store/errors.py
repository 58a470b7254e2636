"""Errors of the tool store, each naming the thing, the cause and the fix.

::

    StoreError (TooldeckError)
    +-- RegistryFileError      a registry file is unreadable, not JSON or invalid (file, line)
    +-- ToolNotAdoptedError    an id that is not in any registry (says how to adopt it)
    +-- AlreadyAdoptedError    adopting over an existing id without replace=True
    +-- CatalogError           the catalog database or one of its sources failed
        +-- UnknownCatalogEntryError   no catalog entry with that id
"""

from __future__ import annotations

from pathlib import Path

from tools.errors import TooldeckError


class StoreError(TooldeckError):
    """A tool-store operation failed; the message says what to do."""


class RegistryFileError(StoreError):
    """A registry file cannot be used; it is left untouched.

    Attributes:
        path: The file.
        line: The 1-based line of the problem, when known.
        problem: What is wrong.
    """

    def __init__(self, path: Path, problem: str, *, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(
            f"registry file {where}: {problem}; fix or remove the file "
            "(tooldeck never overwrites a registry it cannot read)"
        )
        self.path = path
        self.line = line
        self.problem = problem


class ToolNotAdoptedError(StoreError, LookupError):
    """The tool id is not in any registry.

    Attributes:
        tool_id: The id that was asked for.
        adopt_command: The exact command that would adopt it, when the catalog knows it.
    """

    def __init__(self, tool_id: str, message: str, *, adopt_command: str | None = None) -> None:
        super().__init__(message)
        self.tool_id = tool_id
        self.adopt_command = adopt_command


class AlreadyAdoptedError(StoreError):
    """A tool with this id is already adopted."""


class CatalogError(StoreError):
    """The catalog or one of its sources failed."""


class UnknownCatalogEntryError(CatalogError, LookupError):
    """No catalog entry has this id."""
