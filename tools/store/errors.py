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

from tools.errors import DataFileError, TooldeckError


class StoreError(TooldeckError):
    """A tool-store operation failed; the message says what to do."""


class RegistryFileError(StoreError, DataFileError):
    """A registry file cannot be used; it is left untouched (``path``, ``line``, ``problem``)."""

    kind = "registry file"


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
