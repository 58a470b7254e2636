"""build_mcp_server with a policy, driven in-process by the SDK's Client in both protocol eras:
handshake-era (elicitation/create) and 2026-07-28 (InputRequiredResult, retried with the
user's answer and the signed request state). A forged or stale answer runs nothing; a client
that never answers is refused when the time is up."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types
import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.session import ClientRequestContext

from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy
from tools.external.mcp import build_mcp_server
from tools.routing import ToolCategory, ToolManual

pytestmark = pytest.mark.mcp

MODES = ["legacy", "auto"]  # the handshake, and the in-process 2026-07-28 path


class Notes:
    def __init__(self) -> None:
        self.deleted: list[str] = []

    def registry(self) -> LocalToolRegistry:
        registry = LocalToolRegistry()

        def delete_note(path: str) -> str:
            """Delete a note.

            Args:
                path: The note.
            """
            self.deleted.append(path)
            return f"deleted {path}"

        manual = ToolManual(name="delete_note", category=ToolCategory.FILE_WRITE, risk="dangerous")
        registry.register(delete_note, manual=manual)
        return registry


def _text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


def _server(notes: Notes, **options: Any) -> Any:
    return build_mcp_server(notes.registry(), policy=ApprovalPolicy("medium"), **options)


def _reply(answer: mcp_types.ElicitResult) -> Any:
    async def elicit(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return answer

    return elicit


async def _call(server: Any, mode: str, elicit: Any, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    async with Client(server, mode=mode, elicitation_callback=elicit) as client:
        return await client.call_tool("delete_note", arguments)


@pytest.mark.parametrize("mode", MODES)
def test_yes_runs_the_call_once(mode: str) -> None:
    notes = Notes()
    yes = _reply(mcp_types.ElicitResult(action="accept", content={"approve": True}))
    result = anyio.run(_call, _server(notes), mode, yes, {"path": "a"})
    assert (result.is_error, notes.deleted) == (False, ["a"])


@pytest.mark.parametrize("mode", MODES)
def test_no_refuses(mode: str) -> None:
    notes = Notes()
    no = _reply(mcp_types.ElicitResult(action="accept", content={"approve": False}))
    result = anyio.run(_call, _server(notes), mode, no, {"path": "a"})
    assert result.is_error is True and "the user said no" in _text(result)
    assert notes.deleted == []


@pytest.mark.parametrize("mode", MODES)
def test_without_an_elicitation_callback_the_error_says_how_to_approve(mode: str) -> None:
    notes = Notes()
    result = anyio.run(_call, _server(notes), mode, None, {"path": "a"})
    assert result.is_error is True
    assert "Only a person can approve it, in their own terminal: `tooldeck approve delete_note" in _text(result)
    assert notes.deleted == []


def test_a_client_that_never_answers_is_refused_when_the_time_is_up() -> None:
    notes = Notes()

    async def never(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        await anyio.Event().wait()  # the person walked away
        raise AssertionError("unreachable")

    result = anyio.run(_call, _server(notes, elicitation_timeout=0.2), "legacy", never, {"path": "a"})
    assert result.is_error is True
    assert "Nobody answered the approval request for 'delete_note' within 0.2 s" in _text(result)
    assert notes.deleted == []


async def _retry(server: Any, first: dict[str, Any], second: dict[str, Any], state: Any) -> Any:
    """Ask with ``first``; retry with ``second`` carrying a "yes" and ``state(question)``."""
    declared = _reply(mcp_types.ElicitResult(action="decline"))  # declares elicitation; the test answers itself
    async with Client(server, mode="auto", elicitation_callback=declared) as client:
        question = await client.session.call_tool("delete_note", first, allow_input_required=True)
        assert isinstance(question, mcp_types.InputRequiredResult)
        accept = mcp_types.ElicitResult(action="accept", content={"approve": True})
        yes: dict[str, Any] = dict.fromkeys(question.input_requests or {}, accept)
        return await client.session.call_tool(
            "delete_note", second, input_responses=yes, request_state=state(question.request_state)
        )


def _forged(state: str) -> str:
    document = json.loads(state)
    document["arguments_hash"] = "0" * 64
    return json.dumps(document)


@pytest.mark.parametrize(
    ("second", "state", "error"),
    [
        ({"path": "/"}, lambda s: s, "changed after the user was asked"),
        ({"path": "a"}, lambda s: None, "did not come with the question it answers"),
        ({"path": "a"}, _forged, "did not come with the question it answers"),
        ({"path": "a"}, lambda s: "not json", "did not come with the question it answers"),
    ],
    ids=["other arguments", "no state", "forged state", "junk state"],
)
def test_a_forged_or_stale_answer_runs_nothing(second: dict[str, Any], state: Any, error: str) -> None:
    notes = Notes()
    result = anyio.run(_retry, _server(notes), {"path": "a"}, second, state)
    assert isinstance(result, mcp_types.CallToolResult) and result.is_error is True
    assert error in _text(result)
    assert notes.deleted == []


def test_a_registry_that_cannot_check_approvals_is_refused_at_build_time() -> None:
    class Bare:
        async def acall_tool(self, name: str, /, **arguments: Any) -> Any:
            raise AssertionError("never called")

        def to_mcp_tools(self) -> list[dict[str, Any]]:
            return []

    with pytest.raises(TypeError, match="cannot check approvals; serve a LocalToolRegistry"):
        build_mcp_server(Bare(), policy=ApprovalPolicy("medium"))
