"""SessionHome: one session, on the toolset's loop thread or adopted into an application loop."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from tools.errors import ToolDefinitionError, ToolError, ToolTimeoutError, UpstreamError
from tools.external.mcp import _home, _loop
from tools.external.mcp._home import SYNC_ON_HOME, SessionHome


class FakeSession:
    """Records the loop every operation ran on; ``hang`` never returns."""

    made = 0

    def __init__(self) -> None:
        FakeSession.made += 1
        self.number = FakeSession.made
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.closed = False

    @property
    def server_pid(self) -> int | None:
        return None

    async def where(self) -> int:
        self.loops.append(asyncio.get_running_loop())
        return self.number

    async def hang(self) -> None:
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed = True


def _where(session: Any) -> Any:
    return session.where()


def _hang(session: Any) -> Any:
    return session.hang()


def _home_of() -> tuple[SessionHome, list[FakeSession]]:
    made: list[FakeSession] = []

    def make() -> Any:
        made.append(FakeSession())
        return made[-1]

    return SessionHome(make, name="tooldeck-mcp-test", close_timeout=5), made


def test_sync_callers_share_one_session_on_a_loop_thread() -> None:
    home, made = _home_of()
    try:
        results = [home.run(_where, timeout=5) for _ in range(3)]
        assert results == [made[0].number] * 3
        assert len(set(made[0].loops)) == 1
        assert any(t.name == "tooldeck-mcp-test" for t in threading.enumerate())
    finally:
        home.close()
    assert made[0].closed
    assert not any(t.name == "tooldeck-mcp-test" for t in threading.enumerate())
    with pytest.raises(UpstreamError, match="closed"):
        home.run(_where, timeout=5)
    home.close()  # idempotent


def test_adopted_session_runs_in_place_and_refuses_sync_calls_on_its_loop() -> None:
    home, made = _home_of()
    home.run(_where, timeout=5)  # a loop thread and a first session

    async def main() -> None:
        await home.adopt()
        assert made[0].closed  # the session opened elsewhere was closed first
        here = asyncio.get_running_loop()
        assert await home.arun(_where, timeout=5) == made[1].number
        assert made[1].loops == [here]
        assert home.serves_from(here)
        with pytest.raises(ToolError, match=r"await tool\.aexecute"):
            home.run(_where, timeout=5)
        # another thread hops into this loop
        assert await asyncio.to_thread(home.run, _where, timeout=5) == made[1].number
        assert made[1].loops == [here, here]
        await home.aclose()
        assert made[1].closed

    asyncio.run(main())
    assert SYNC_ON_HOME.startswith("This MCP tool was called synchronously")


def test_when_the_serving_loop_ends_sync_calls_get_a_loop_thread_again() -> None:
    home, made = _home_of()

    async def main() -> None:
        await home.adopt()
        await home.arun(_where, timeout=5)

    asyncio.run(main())
    try:
        assert home.run(_where, timeout=5) == made[-1].number
        assert len(made) == 3  # first, adopted, and the one after the loop ended
    finally:
        home.close()


def test_a_second_running_loop_cannot_adopt() -> None:
    home, _ = _home_of()

    async def main() -> None:
        await home.adopt()
        await home.adopt()  # the same loop again: nothing to do
        errors: list[BaseException] = []

        def other() -> None:
            try:
                asyncio.run(home.adopt())
            except ToolDefinitionError as exc:
                errors.append(exc)

        await asyncio.to_thread(other)
        assert errors and "another event loop" in str(errors[0])
        await home.aclose()

    asyncio.run(main())


def test_a_hop_that_never_answers_ends_at_the_backstop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_home, "BACKSTOP_GRACE", 0.05)
    monkeypatch.setattr(_loop, "BACKSTOP_GRACE", 0.05)
    home, _ = _home_of()
    try:

        async def main() -> None:
            with pytest.raises(ToolTimeoutError, match=r"did not answer within 0\.01 seconds"):
                await home.arun(_hang, timeout=0.01)

        asyncio.run(main())
        with pytest.raises(ToolTimeoutError):
            home.run(_hang, timeout=0.01)
    finally:
        home.close()


def test_close_from_the_serving_loop_is_scheduled() -> None:
    home, made = _home_of()

    async def main() -> None:
        await home.adopt()
        home.close()  # cannot wait here: scheduled
        await asyncio.sleep(0)
        assert made[-1].closed

    asyncio.run(main())
