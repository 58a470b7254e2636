"""Promote, rollback and install survive a kill: the process is SIGKILLed at the worst
moments (mid-snapshot, before the snapshot's rename, before the index is replaced), and the
previous version is still the active one, loads, and serves; the next attempt succeeds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shared.modules import ModuleAdapters
from tests.unit.shared.modules.worker_support import subprocess_workers
from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER, attestation_of, make_toolkit, registry_for
from tools import LocalToolRegistry
from tools.builtin.modules import ModuleToolkit

WORKTREE = Path(__file__).resolve().parents[3]
BASE = "http://127.0.0.1:9/api/runs"

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    root, point, action, target = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]

    import tools._files as files_module
    from tests.unit.tools.builtin.modules.support import make_toolkit, registry_for

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    real_replace, real_rename, real_write = os.replace, os.rename, files_module.atomic_write_text
    written = []

    def replace(src, dst, *a, **k):
        if point == "index" and str(dst).endswith("index.json"):
            die()
        return real_replace(src, dst, *a, **k)

    def rename(src, dst, *a, **k):
        if point == "snapshot-rename" and "/versions/" in str(dst):
            die()
        return real_rename(src, dst, *a, **k)

    def write(path, text, **k):
        if point == "mid-snapshot" and "/.tmp-" in str(path):
            written.append(path)
            if len(written) == 2:
                die()
        return real_write(path, text, **k)

    os.replace, os.rename, files_module.atomic_write_text = replace, rename, write
    import tools.builtin.modules.versions as versions_module
    versions_module.atomic_write_text = write

    registry = registry_for(make_toolkit(root))
    if action == "promote":
        result = registry.call_tool("module_admin", action="promote_draft", draft_id=target)
    elif action == "rollback":
        result = registry.call_tool(
            "module_admin", action="rollback_version", module_id="run_log", target_version_id=target
        )
    else:
        import json
        result = registry.call_tool("module_pipeline", action="install", module_id="run_log",
                                    validation_attestation=json.loads(target))
    print("NOT KILLED", result.status, result.error)
    """
)


def _child(root: Path, point: str, action: str, target: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(root), point, action, target],
        env=env,
        cwd=WORKTREE,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _install(registry: LocalToolRegistry) -> None:
    registry.call_tool(
        "module_pipeline", action="build", name="Run Log", category="fitness", api_url=BASE, requires_api_key=False
    )
    registry.call_tool("module_pipeline", action="write_code", module_id="run_log", adapter_code=RUNS_ADAPTER)
    attestation = attestation_of(registry.call_tool("module_pipeline", action="validate", module_id="run_log"))
    registry.call_tool("module_pipeline", action="install", module_id="run_log", validation_attestation=attestation)
    registry.call_tool("module_admin", action="enable", module_id="run_log")


def _validated_draft(registry: LocalToolRegistry, marker: str) -> str:
    draft_id: str = registry.call_tool("module_admin", action="create_draft", module_id="run_log").data["draft_id"]
    registry.call_tool(
        "module_admin", action="edit_draft", draft_id=draft_id, file_path="adapter.py", content=RUNS_ADAPTER + marker
    )
    attestation_of(registry.call_tool("module_admin", action="validate_draft", draft_id=draft_id))
    return draft_id


def _serves(kit: ModuleToolkit, version: str) -> None:
    """A fresh loader (a context service starting now) loads ``version`` and nothing else."""
    workers = subprocess_workers()
    loader = ModuleAdapters(kit.store.layout, signer=kit.versions._signer, workers=workers)
    try:
        (status,) = loader.statuses()
        assert (status.version_id, status.loaded, status.reason) == (version, True, None)
    finally:
        loader.close()
        workers.close()


@pytest.mark.parametrize("point", ["mid-snapshot", "snapshot-rename", "index"])
def test_a_kill_during_promote_leaves_the_previous_version_active(tmp_path: Path, point: str) -> None:
    kit = make_toolkit(tmp_path)
    registry = registry_for(kit)
    _install(registry)
    draft_id = _validated_draft(registry, "# v2\n")
    index_before = kit.store.layout.index_path.read_bytes()

    child = _child(tmp_path, point, "promote", draft_id)
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr

    assert kit.store.layout.index_path.read_bytes() == index_before
    assert kit.versions.active("run_log") == "v1"
    assert kit.versions.files("run_log", "v1")["adapter.py"].decode() == RUNS_ADAPTER
    _serves(kit, "v1")

    promoted = registry.call_tool("module_admin", action="promote_draft", draft_id=draft_id)
    assert promoted.ok, promoted.error
    version = promoted.data["version_id"]
    assert kit.versions.files("run_log", version)["adapter.py"].decode() == RUNS_ADAPTER + "# v2\n"
    assert not [p for p in kit.store.layout.versions_dir("run_log").iterdir() if p.name.startswith(".tmp-")]
    _serves(kit, version)


def test_a_kill_during_rollback_leaves_the_current_version_active(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path)
    registry = registry_for(kit)
    _install(registry)
    registry.call_tool("module_admin", action="promote_draft", draft_id=_validated_draft(registry, "# v2\n"))
    assert kit.versions.active("run_log") == "v2"

    child = _child(tmp_path, "index", "rollback", "v1")
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    assert kit.versions.active("run_log") == "v2"
    _serves(kit, "v2")

    assert registry.call_tool("module_admin", action="rollback_version", module_id="run_log", target_version_id="v1").ok
    _serves(kit, "v1")


def test_a_kill_during_a_first_install_leaves_nothing_installed(tmp_path: Path) -> None:
    import json

    kit = make_toolkit(tmp_path)
    registry = registry_for(kit)
    registry.call_tool(
        "module_pipeline", action="build", name="Run Log", category="fitness", api_url=BASE, requires_api_key=False
    )
    registry.call_tool("module_pipeline", action="write_code", module_id="run_log", adapter_code=RUNS_ADAPTER)
    attestation = attestation_of(registry.call_tool("module_pipeline", action="validate", module_id="run_log"))

    child = _child(tmp_path, "index", "install", json.dumps(attestation))
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    assert kit.store.entry("run_log") is None
    assert registry.call_tool("module_admin", action="list").data["modules"][0]["installed"] is False

    again = registry.call_tool(
        "module_pipeline", action="install", module_id="run_log", validation_attestation=attestation
    )
    assert again.ok, again.error
