"""``serve-mcp`` forwards a tool's ``report_progress`` as MCP progress notifications (issue 21
item 7), to a real MCP SDK client with a progress callback, over stdio, for sync and async
tools; a client without a progress token gets none and the same result."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import itertools

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.integration.external.mcp.conftest import REPO_ROOT

pytestmark = pytest.mark.mcp

TOOLS = textwrap.dedent(
    '''
    import asyncio
    from tools import LocalToolRegistry, report_progress, current_call

    def build() -> LocalToolRegistry:
        registry = LocalToolRegistry(default_timeout=60)

        @registry.tool
        def index(files: int) -> str:
            """Index some files, reporting progress.

            Args:
                files: How many.
            """
            for number in range(1, files + 1):
                report_progress(number / files, f"indexed file {number}")
            report_progress(None, "writing the index")
            return f"indexed {files}"

        @registry.tool
        async def fetch(pages: int) -> str:
            """Fetch pages, reporting progress.

            Args:
                pages: How many.
            """
            context = current_call()
            for number in range(1, pages + 1):
                await asyncio.sleep(0)
                context.report_progress(number / pages, f"page {number}")
            return f"fetched {pages}"

        return registry
    '''
)


async def session_run(
    app_dir: Path,
    calls: list[tuple[str, dict[str, Any], bool]],
    *,
    freedom: str | None = "high",
    elicit: Any = None,
) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HOME": str(app_dir), "XDG_CONFIG_HOME": str(app_dir)}
    env.pop("TOOLDECK_FREEDOM", None)
    if freedom is not None:  # high: these tools are undeclared (moderate); most tests are about progress only
        env["TOOLDECK_FREEDOM"] = freedom
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tools.cli", "serve-mcp", "progress_tools:build", "--app-dir", str(app_dir)],
        env=env,
        cwd=app_dir,
    )
    seen: list[dict[str, Any]] = []
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        await session.initialize()
        for name, arguments, listen in calls:
            reports: list[tuple[float, float | None, str | None]] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None, _into: list[Any] = reports
            ) -> None:
                _into.append((progress, total, message))

            result = await session.call_tool(name, arguments, progress_callback=on_progress if listen else None)
            text = "".join(getattr(block, "text", "") for block in result.content)
            seen.append({"text": text, "error": result.is_error, "reports": reports})
    return seen


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    app_dir = tmp_path_factory.mktemp("progress_app")
    (app_dir / "progress_tools.py").write_text(TOOLS)
    calls = [("index", {"files": 3}, True), ("fetch", {"pages": 2}, True), ("index", {"files": 2}, False)]
    return anyio.run(session_run, app_dir, calls)


def test_a_sync_tools_reports_arrive_in_order_before_its_result(served: list[dict[str, Any]]) -> None:
    index = served[0]
    assert (index["text"], index["error"]) == ("indexed 3", False)
    messages = [message for _, _, message in index["reports"]]
    assert messages == ["indexed file 1", "indexed file 2", "indexed file 3", "writing the index"]
    progress = [value for value, _, _ in index["reports"]]
    assert progress[:3] == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert all(later > earlier for earlier, later in itertools.pairwise(progress))  # MCP: increasing
    assert {total for _, total, _ in index["reports"]} == {1.0}


def test_an_async_tools_reports_arrive_too(served: list[dict[str, Any]]) -> None:
    fetch = served[1]
    assert fetch["text"] == "fetched 2"
    assert fetch["reports"] == [(0.5, 1.0, "page 1"), (1.0, 1.0, "page 2")]


def test_a_client_that_did_not_ask_gets_no_reports_and_the_same_result(served: list[dict[str, Any]]) -> None:
    assert served[2] == {"text": "indexed 2", "error": False, "reports": []}


def test_a_call_a_person_approves_through_the_client_reports_progress_too(tmp_path: Path) -> None:
    """At the default level (medium) the undeclared tool is asked about by elicitation; once the
    client's user says yes, the call runs and its reports reach the client before the result."""
    import mcp_types

    (tmp_path / "progress_tools.py").write_text(TOOLS)
    asked: list[str] = []

    async def yes(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"approve": True})

    async def go() -> list[dict[str, Any]]:
        return await session_run(tmp_path, [("index", {"files": 2}, True)], freedom=None, elicit=yes)

    (index,) = anyio.run(go)
    assert len(asked) == 1 and "index" in asked[0]
    assert (index["text"], index["error"]) == ("indexed 2", False)
    assert [message for _, _, message in index["reports"]] == ["indexed file 1", "indexed file 2", "writing the index"]
