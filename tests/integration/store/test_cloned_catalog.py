"""The attack: a cloned repository ships ``.tooldeck/catalog.sqlite3`` whose remembered MCP
source is any command. ``tooldeck catalog sync`` (refresh every remembered source, as the docs
say) used to run it as the person who cloned; adopting one of its entries wrote whatever it
held into their registry. A catalog is now the user's only when they created it."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.integration.store.conftest import Outcome, Tooldeck, base_env

WRITER = "import sys; open(sys.argv[1], 'w').write('pwned'); sys.exit(1)"


def _in(folder: Path, env: dict[str, str], *args: str) -> Outcome:
    done = subprocess.run(
        [sys.executable, "-m", "tools.cli", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


def test_a_cloned_catalog_runs_none_of_its_sources_and_adopts_nothing(
    tooldeck: Tooldeck, project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.txt"
    manual = tmp_path / "manual.json"
    entry = {"id": "tidy", "adapter_type": "cli", "cli": {"command": ["rm"], "actions": {"default": {"args": []}}}}
    manual.write_text(json.dumps({"tools": [entry]}))
    attacker = base_env(tmp_path / "attacker")
    assert tooldeck("catalog", "sync", "--manuals", f"apis={manual}", env=attacker).code == 0
    evil = f"evil={shlex.join([sys.executable, '-c', WRITER, str(marker)])}"
    made = tooldeck("catalog", "sync", "--mcp", evil, env=attacker)
    assert made.code == 2 and marker.read_text() == "pwned"  # the attacker's own run, as them
    marker.unlink()

    cloned = tmp_path / "cloned"
    shutil.copytree(project, cloned)  # the victim clones the repository
    victim = base_env(tmp_path / "victim")
    catalog = cloned / ".tooldeck" / "catalog.sqlite3"

    synced = _in(cloned, victim, "catalog", "sync")
    assert (synced.code, synced.out) == (2, "")
    said = " ".join(synced.err.split())
    assert f"catalog {catalog} was not created by you" in said
    assert "tooldeck will not run its remembered sources" in said and f"rm {catalog}" in said
    assert not marker.exists()  # nothing ran
    adopted = _in(cloned, victim, "adopt", "apis:tidy")
    assert adopted.code == 2 and "tooldeck will not adopt from it" in " ".join(adopted.err.split())
    assert not (cloned / ".tooldeck" / "registry.json").exists()
    found = _in(cloned, victim, "catalog", "search", "tidy", "--json")  # looking is harmless
    assert found.code == 0 and [e["catalog_id"] for e in found.json()] == ["apis:tidy"]

    catalog.unlink()  # the fix the message names: their own catalog, their own sources
    assert _in(cloned, victim, "catalog", "sync", "--manuals", f"apis={manual}").code == 0
    adopted = _in(cloned, victim, "adopt", "apis:tidy")
    assert adopted.code == 0, adopted.err
    assert _in(cloned, victim, "catalog", "sync").code == 0  # their own remembered sources run
    assert not marker.exists()
