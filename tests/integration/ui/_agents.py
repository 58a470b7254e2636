"""A console whose runs are real agent runs: `OrchestratorService` with a `FunctionModel`.

The model writes notes: its first turn calls ``write_note`` (or, for a question starting with
"delete", ``delete_notes``) with the question; once the tool answered, it answers with what the
tool message said, so a test reads in the answer what the model was told (a result, or a
person's refusal).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator import OrchestratorService, Settings
from orchestrator.testing import FunctionModel
from orchestrator.ui import ConsoleSources
from orchestrator.ui.runner import ServiceRunner
from tests.integration.ui._harness import ConsoleHarness
from tools import LocalToolRegistry
from tools.approvals import StateSigner
from tools.runs import FileRunStore


def note_taker(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> Any:
    """One turn of the note-taking model (see the module docstring)."""
    last = messages[-1]
    if last.get("role") == "tool":
        return f"told: {last['content']}"
    question = str(next(m["content"] for m in reversed(messages) if m.get("role") == "user"))
    tool = "delete_notes" if question.startswith("delete") else "write_note"
    return {"tool_calls": [{"id": "call_1", "function": {"name": tool, "arguments": {"text": question}}}]}


def closed_port() -> int:
    """A loopback port nothing listens on (the context service the agents never reach)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class AgentConsole:
    """The sources of a console over a data directory, with a runner of real services."""

    def __init__(self, harness: ConsoleHarness) -> None:
        self.harness = harness
        self.data = harness.root / "data"
        self.runs = FileRunStore(self.data / "runs")
        self.signer = StateSigner.from_env(harness.env)
        self.written: list[str] = []
        self.deleted: list[str] = []
        self.context = f"http://127.0.0.1:{closed_port()}"

    def tools(self) -> LocalToolRegistry:
        """The tools the agent has (undeclared, so moderate: held at the default level)."""
        registry = LocalToolRegistry()

        def write_note(text: str) -> str:
            """Write a note in the user's notebook.

            Args:
                text: What to write.
            """
            self.written.append(text)
            return f"wrote {text!r}"

        def delete_notes(text: str) -> str:
            """Delete the user's notes that match.

            Args:
                text: Which notes.
            """
            self.deleted.append(text)
            return "deleted"

        registry.register(write_note)
        registry.register(delete_notes)
        return registry

    def service(self, agent: str | None) -> OrchestratorService:
        """A service like the console's: the user's approvals (claims beside them), state key, run records."""
        settings = Settings(data_dir=self.data, context_url=self.context, agent=agent)
        return OrchestratorService(
            settings,
            model=FunctionModel(note_taker, name="note-taker"),
            tools=[self.tools()],
            builtins=False,
            approvals=self.harness.approvals,
            state_signer=self.signer,
            runs=self.runs,
        )

    def sources(self) -> ConsoleSources:
        """Everything the console shows: the agent's tools, the runs, the runner, the settings."""
        runner = ServiceRunner(self.service, data_dir=self.data, signer=self.signer)
        self.harness.closers.append(runner.close)
        registry = self.harness.registry()
        for name in self.tools().names():
            registry.register(self.tools().get_tool(name))  # type: ignore[arg-type]
        return ConsoleSources(registry=registry, runs=self.runs, runner=runner, settings=self.harness.settings())
