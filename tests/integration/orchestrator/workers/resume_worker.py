"""One process of the "resume the same state at once" test.

``python resume_worker.py STATE CLAIMS LOG GO KEY``: builds the graph (a dangerous ``wipe`` tool
that appends one line to LOG per execution, states signed with the key file KEY: one user's
key), reads the paused state from STATE, prints ``ready``, waits until the file GO exists, then
resumes with ``Approve()`` through a ``FileClaimStore(CLAIMS)`` and prints ``resumed <status>``
or ``refused <message>``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.graph import AgentGraph, ClaimStore, ResumeError
from orchestrator.llm import ChatResponse, ToolChoice
from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, Approve, StateSigner
from tools.routing import ToolCategory, ToolManual


class TwoTurns:
    """Calls ``wipe`` on the first turn, answers on the next."""

    supports_strict_tools = False

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        if messages[-1].get("role") == "tool":
            return ChatResponse(message={"role": "assistant", "content": "wiped"})
        arguments = json.dumps({"path": "scratch"})
        wipe = {"id": "c0", "type": "function", "function": {"name": "wipe", "arguments": arguments}}
        return ChatResponse(message={"role": "assistant", "content": None, "tool_calls": [wipe]})


def build_graph(log: Path, key: Path, claims: ClaimStore | None = None) -> AgentGraph:
    registry = LocalToolRegistry(policy=ApprovalPolicy("high"))

    def wipe(path: str) -> str:
        """Wipe a path.

        Args:
            path: The path.
        """
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"wiped {path}\n")
        return f"wiped {path}"

    registry.register(wipe, manual=ToolManual(name="wipe", category=ToolCategory.FILE_WRITE, risk="dangerous"))
    return AgentGraph(TwoTurns(), registry, claims=claims, state_signer=StateSigner.from_file(key))


def main(state_file: str, claims_file: str, log: str, go: str, key: str) -> None:
    from orchestrator.graph import FileClaimStore

    graph = build_graph(Path(log), Path(key), FileClaimStore(claims_file))
    state = json.loads(Path(state_file).read_text())
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.001)
    try:
        run = graph.resume(state, {"c0": Approve()})
    except ResumeError as exc:
        print("refused", exc, flush=True)
    else:
        print("resumed", run.status, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:6])
