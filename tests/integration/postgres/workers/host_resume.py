"""One process of the "hosts resume the same state at once" test.

``python host_resume.py STATE LOG GO [DATABASE_URL]`` with the host's data directories in
``XDG_CONFIG_HOME``: builds a graph whose approvals live where this host keeps them (the
database when a URL is given, else the approvals file under ``XDG_CONFIG_HOME``) and gives
it no claim store, so it claims beside its approvals. Its states are signed and checked with
the key the entry points use (`StateSigner.from_env`: ``TOOLDECK_STATE_KEY_FILE`` when set,
else the user's own). Prints ``ready``, waits for GO, resumes the saved state with
``Approve()`` and prints ``resumed <status>`` or ``refused <message>``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from orchestrator.graph import AgentGraph, ResumeError
from tests.integration.orchestrator.workers.resume_worker import TwoTurns
from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsBackend, Approve, StateSigner, open_approvals_store
from tools.routing import ToolCategory, ToolManual


def build_graph(
    log: Path, database_url: str | None, env: dict[str, str], store: ApprovalsBackend | None = None
) -> AgentGraph:
    """``wipe`` (dangerous; appends a line to ``log`` per run) behind a ``high`` policy over
    ``store`` (default: the approvals this host keeps)."""
    store = store if store is not None else open_approvals_store(env, database_url=database_url)
    registry = LocalToolRegistry(policy=ApprovalPolicy("high", store))

    def wipe(path: str) -> str:
        """Wipe a path.

        Args:
            path: The path.
        """
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"wiped {path} by {os.getpid()}\n")
        return f"wiped {path}"

    registry.register(wipe, manual=ToolManual(name="wipe", category=ToolCategory.FILE_WRITE, risk="dangerous"))
    return AgentGraph(TwoTurns(), registry, state_signer=StateSigner.from_env(env))


def main(state_file: str, log: str, go: str, database_url: str | None = None) -> None:
    graph = build_graph(Path(log), database_url, dict(os.environ))
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
    main(*sys.argv[1:5])
