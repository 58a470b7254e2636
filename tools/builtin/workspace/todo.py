"""``todowrite`` and ``todoread``: the session's todo list, kept in a :class:`TodoStore`."""

from __future__ import annotations

import threading
from typing import Literal

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.errors import InvalidArgumentsError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME

_MAX_ITEMS = 100


class TodoItem(BaseModel):
    """One item of the list."""

    content: str = Field(min_length=1, max_length=500, description="What to do.")
    status: Literal["pending", "in_progress", "completed"] = Field(default="pending", description="Its state.")


class TodoStore:
    """A thread-safe todo list (one per session or workspace)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[TodoItem] = []

    def replace(self, items: list[TodoItem]) -> None:
        """Replace the whole list."""
        with self._lock:
            self._items = list(items)

    def items(self) -> list[TodoItem]:
        """A copy of the list."""
        with self._lock:
            return list(self._items)


class TodoWriteRequest(BaseModel):
    """Arguments of ``todowrite``."""

    todos: list[TodoItem] = Field(description="The whole new list (it replaces the old one).")


class TodoList(BaseModel):
    """The list."""

    todos: list[TodoItem]


class TodoWriteTool(BaseTool[TodoWriteRequest, TodoList]):
    """Replaces the todo list."""

    name = "todowrite"
    description = "Replace the session's todo list (send every item, with status pending, in_progress or completed)."
    manual = CODING_TOOL_MANUALS_BY_NAME["todowrite"]

    def __init__(self, store: TodoStore) -> None:
        self._store = store

    def execute_internal(self, request: TodoWriteRequest) -> TodoList:
        """Store the list and return it."""
        if len(request.todos) > _MAX_ITEMS:
            raise InvalidArgumentsError(f"The list has {len(request.todos)} items; keep it to {_MAX_ITEMS} or fewer.")
        self._store.replace(request.todos)
        return TodoList(todos=self._store.items())


class TodoReadRequest(BaseModel):
    """``todoread`` takes no arguments."""


class TodoReadTool(BaseTool[TodoReadRequest, TodoList]):
    """Reads the todo list."""

    name = "todoread"
    description = "Read the session's todo list."
    manual = CODING_TOOL_MANUALS_BY_NAME["todoread"]

    def __init__(self, store: TodoStore) -> None:
        self._store = store

    def execute_internal(self, request: TodoReadRequest) -> TodoList:
        """Return the list."""
        return TodoList(todos=self._store.items())
