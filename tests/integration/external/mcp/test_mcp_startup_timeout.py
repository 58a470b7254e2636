"""A server that hangs at start-up is bounded by the caller's timeout, not the defaults.

Two real servers: one that never answers at all (``stubborn_server.py``: it also ignores
SIGTERM and the end of its stdin) and one that completes the handshake and then never
answers ``tools/list`` (``listing_hang_server.py``). Before, ``timeout=3`` waited for the
start-up and listing defaults (``connect_timeout`` 30 s plus ``call_timeout`` 60 s: 91 s);
every call here uses a short timeout against defaults that would take far longer than
the suite's per-test limit, and the error names the caller's timeout.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tools.errors import ToolTimeoutError
from tools.external import MCPAdapter, ToolConfig
from tools.external.mcp import MCPToolset

pytestmark = pytest.mark.mcp

SERVERS = Path(__file__).parent / "servers"
HANGING = ["stubborn_server.py", "listing_hang_server.py"]


def _config(script: str) -> ToolConfig:
    command = [sys.executable, str(SERVERS / script)]
    # call timeout 600 s: if the caller's 2 s were not the bound, the suite's limit would end the test
    return ToolConfig.model_validate(
        {"id": "hanging", "name": "hanging", "adapter_type": "mcp", "config": {"command": command, "timeout": 600}}
    )


@pytest.mark.parametrize("script", HANGING)
def test_an_adapter_call_is_bounded_by_the_callers_timeout(script: str, gone: Callable[[int], bool]) -> None:
    adapter = MCPAdapter([_config(script)])
    try:
        result = adapter.execute("hanging", "anything", {}, timeout=2)
        pid = adapter.toolset("hanging").server_pid
    finally:
        adapter.close()
    assert result.error is not None
    assert result.error.type == "timeout"
    assert "did not answer within 2 seconds" in result.error.message
    assert pid is not None and gone(pid)  # the hung server's group is killed on close


@pytest.mark.parametrize("script", HANGING)
def test_a_toolset_call_and_listing_are_bounded_by_the_callers_timeout(
    script: str, gone: Callable[[int], bool]
) -> None:
    command = [sys.executable, str(SERVERS / script)]
    with MCPToolset(command, connect_timeout=600, call_timeout=600) as toolset:
        result = toolset.call("anything", {}, timeout=2)
        assert result.error is not None
        assert result.error.type == "timeout"
        assert "within 2 seconds" in result.error.message
        with pytest.raises(ToolTimeoutError, match=r"within 1\.5 seconds"):
            toolset.tools(timeout=1.5)
        pid = toolset.server_pid
    assert pid is not None and gone(pid)


def test_a_persistent_server_keeps_starting_for_the_next_call(gone: Callable[[int], bool]) -> None:
    # A caller that gives up does not take the start-up with it: a slow server that comes up
    # within connect_timeout serves the next call (here it never does; its start is one).
    command = [sys.executable, str(SERVERS / "stubborn_server.py")]
    with MCPToolset(command, connect_timeout=600) as toolset:
        assert toolset.call("a", {}, timeout=1).error is not None
        first = toolset.server_pid
        assert toolset.call("b", {}, timeout=1).error is not None
        assert toolset.server_pid == first  # the same start-up, not a second server
    assert first is not None and gone(first)
