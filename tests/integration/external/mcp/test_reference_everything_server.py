"""The full MCP client against the MCP project's own reference server, the TypeScript
"everything" server (npm ``@modelcontextprotocol/server-everything``), over stdio and
streamable HTTP.

It offers four tools only to clients that declare sampling, elicitation or roots
(``trigger-sampling-request``, ``trigger-elicitation-request``, ``trigger-url-elicitation``,
``get-roots-list``), and ``simulate-research-query`` only as an MCP task that may stop for
the user's input (``input_required``). ``.ci/run`` installs the server with npm and names its
entry point in ``TOOLDECK_EVERYTHING_SERVER``; without Node.js or the package these tests
skip, saying which is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests.integration.external.mcp.conftest import free_port, wait_listening
from tools.external.mcp import (
    ElicitationRequest,
    ElicitationResult,
    MCPClientHandlers,
    MCPToolset,
    SamplingRequest,
    SamplingResult,
)

pytestmark = pytest.mark.mcp

CAPABILITY_TOOLS = {
    "trigger-sampling-request",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "get-roots-list",
}
NODE = shutil.which("node")
ENTRY = os.environ.get("TOOLDECK_EVERYTHING_SERVER", "")

if NODE is None:
    pytest.skip("Node.js is not installed (apt-get install nodejs)", allow_module_level=True)
if not ENTRY or not Path(ENTRY).is_file():
    pytest.skip(
        "the reference server is not installed: npm install @modelcontextprotocol/server-everything and set "
        "TOOLDECK_EVERYTHING_SERVER to its dist/index.js (.ci/run does both)",
        allow_module_level=True,
    )


class Person:
    """Answers the server as a person at the terminal would, and keeps what was asked."""

    def __init__(self) -> None:
        self.sampled: list[SamplingRequest] = []
        self.asked: list[ElicitationRequest] = []

    def sample(self, request: SamplingRequest) -> SamplingResult:
        self.sampled.append(request)
        return SamplingResult(text="Lisbon", model="tiny-model")

    def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        self.asked.append(request)
        if request.mode == "url":
            return ElicitationResult("accept")
        answers = {"name": "Ada", "email": "ada@example.com", "interpretation": "snake", "check": True}
        properties = request.requested_schema.get("properties", {})
        return ElicitationResult("accept", {key: answers[key] for key in properties if key in answers})


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    assert NODE is not None
    if request.param == "stdio":
        yield {"command": [NODE, ENTRY, "stdio"]}
        return
    port = free_port()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PORT": str(port), "HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [NODE, ENTRY, "streamableHttp"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_listening(port, proc)
        yield {"url": f"http://127.0.0.1:{port}/mcp"}
    finally:
        proc.kill()
        proc.wait(10)


def test_without_handlers_the_four_capability_tools_are_not_offered(server: dict[str, Any]) -> None:
    with MCPToolset(**server, call_timeout=60) as plain:
        names = {tool.name for tool in plain.tools()}
    assert "echo" in names and not CAPABILITY_TOOLS & names


def test_with_handlers_sampling_elicitation_roots_and_tasks_work(server: dict[str, Any], tmp_path: Path) -> None:
    person = Person()
    handlers = MCPClientHandlers(sampling=person.sample, elicitation=person.elicit, roots=[tmp_path])
    with MCPToolset(**server, handlers=handlers, call_timeout=120) as toolset:
        assert {tool.name for tool in toolset.tools()} >= CAPABILITY_TOOLS | {"simulate-research-query"}

        roots = toolset.call("get-roots-list")
        assert roots.ok and tmp_path.as_uri() in str(roots.data)

        sampled = toolset.call("trigger-sampling-request", {"prompt": "Capital of Portugal?", "maxTokens": 20})
        assert sampled.ok and '"text": "Lisbon"' in str(sampled.data) and '"model": "tiny-model"' in str(sampled.data)
        assert "Capital of Portugal?" in json.dumps([dict(m) for m in person.sampled[0].messages])

        form = toolset.call("trigger-elicitation-request")
        assert form.ok and "Name: Ada" in str(form.data), form.data

        url = toolset.call("trigger-url-elicitation", {"url": "https://auth.example/x", "errorPath": True})
        assert url.ok, url.error  # -32042 first: the prerequisite page is put to the person, then the call again
        assert [r.url for r in person.asked if r.mode == "url"] == [
            "https://modelcontextprotocol.io",
            "https://auth.example/x",
        ]

        research = toolset.call("simulate-research-query", {"topic": "python", "ambiguous": True})
        assert research.ok and "Clarification**: snake" in str(research.data), research.data  # input_required, answered
