"""Which tools run as independent tasks and which on one actor (`is_stateful`), and that
neither Ray nor psycopg is imported by ``import tools``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tools import BaseTool, FunctionTool, LocalToolRegistry, RetryPolicy, UpstreamError
from tools.executors import RemoteExecutor, RemoteTool, is_stateful

REPO_ROOT = Path(__file__).resolve().parents[3]


class Request(BaseModel):
    x: int = 0


class Plain(BaseTool[Request, int]):
    name = "plain"
    description = "No collaborators."
    timeout = 3.0

    def execute_internal(self, request: Request) -> int:
        return request.x


class WithClient(Plain):
    name = "with_client"

    def __init__(self, client: object) -> None:
        self._client = client


class DeclaredStateless(WithClient):
    name = "declared"
    stateful = False


def module_function(x: int) -> int:
    """Double.

    Args:
        x: A number.
    """
    return 2 * x


def test_tools_without_collaborators_are_stateless_and_tools_with_them_are_not() -> None:
    plain = Plain()
    plain.description = "overridden on the instance"  # a standard attribute: still plain
    assert not is_stateful(plain)
    assert is_stateful(WithClient(object()))
    assert not is_stateful(DeclaredStateless(object()))  # the tool's own word wins
    marked = Plain()
    marked.stateful = True
    assert is_stateful(marked)


def test_function_tools_are_stateless_unless_they_capture_something() -> None:
    assert not is_stateful(FunctionTool(module_function))
    seen: list[int] = []

    def closure(x: int) -> int:
        """Remember.

        Args:
            x: A number.
        """
        seen.append(x)
        return x

    assert is_stateful(FunctionTool(closure))
    assert is_stateful(FunctionTool(WithClient(object()).execute_internal, name="bound"))
    registry = LocalToolRegistry()
    registry.register(module_function, name="alias")  # an alias copies the tool: still stateless
    tool = registry.get_tool("alias")
    assert tool is not None and not is_stateful(tool)


class RecordingExecutor:
    """A remote executor that runs calls here, recording what it was given."""

    def __init__(self) -> None:
        self.prepared: list[str] = []
        self.calls: list[tuple[str, Any, float | None]] = []

    def prepare(self, tool: BaseTool[Any, Any]) -> RemoteTool:
        self.prepared.append(tool.name)
        executor = self

        class Placed:
            def run(self, arguments: Any, timeout: float | None) -> Any:
                executor.calls.append((tool.name, arguments, timeout))
                return tool._run(arguments)._with_trusted_metadata(executor="recording")

            async def arun(self, arguments: Any, timeout: float | None) -> Any:
                return self.run(arguments, timeout)

        return Placed()

    def close(self) -> None:
        pass


def test_registrations_hand_their_tools_to_the_executor_unless_kept_here() -> None:
    executor = RecordingExecutor()
    assert isinstance(executor, RemoteExecutor)
    registry = LocalToolRegistry(executor=executor)
    registry.register(Plain())
    registry.register(module_function, executor=None)
    assert executor.prepared == ["plain"]
    assert registry.call_tool("plain", x=4).metadata["executor"] == "recording"
    assert executor.calls == [("plain", {"x": 4}, 3.0)]  # with the tool's timeout
    assert "executor" not in registry.call_tool("module_function", x=1).metadata


def test_import_tools_imports_neither_ray_nor_psycopg() -> None:
    code = (
        "import sys, tools, tools.executors, tools.postgres, tools.approvals, tools.builtin.knowledge\n"
        "print(sorted(m for m in ('ray', 'psycopg', 'psycopg_pool') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO_ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


class Flaky(BaseTool[Request, int]):
    """Fails (retryably) on its first call, then answers."""

    name = "flaky"
    description = "Fails once."
    stateful = False

    def __init__(self) -> None:
        self.calls = 0

    def execute_internal(self, request: Request) -> int:
        self.calls += 1
        if self.calls == 1:
            raise UpstreamError("the backend hiccuped")
        return request.x


def test_retries_and_the_async_path_go_through_the_executor_too() -> None:
    executor = RecordingExecutor()
    registry = LocalToolRegistry(executor=executor, sleep=lambda _seconds: None)
    registry.register(Flaky(), retry=RetryPolicy(max_attempts=3, jitter=0))
    result = registry.call_tool("flaky", x=7)
    assert (result.data, result.metadata["attempts"]) == (7, 2)
    assert [name for name, _, _ in executor.calls] == ["flaky", "flaky"]
    assert asyncio.run(registry.acall_tool("flaky", x=8)).data == 8
    assert len(executor.calls) == 3
