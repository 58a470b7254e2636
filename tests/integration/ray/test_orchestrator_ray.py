"""``python -m orchestrator --executor ray --ray-address ADDR``: the compute tools run on the
cluster (a separate process), the answer is the same, and tools bound to this host stay here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import AUTH

REPO_ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.serial


def test_the_orchestrator_runs_math_on_the_ray_cluster(local_ray: Any, tmp_path: Path) -> None:
    address = local_ray.get_runtime_context().gcs_address
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
        "PYTHONPATH": str(REPO_ROOT),
        **AUTH,  # the cluster's token, as every process joining it needs
    }
    question = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
    result = subprocess.run(
        [sys.executable, "-m", "orchestrator", "--executor", "ray", "--ray-address", address, "--json", question],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run = json.loads(result.stdout)
    assert run["answer"].startswith("12 * (3 + 4) = 84.")
    where = {record["name"]: record["metadata"].get("executor") for record in run["tool_results"]}
    assert where == {"math_solver": "ray", "store_knowledge": None}
    assert run["settings"]["executor"] == "ray" and run["settings"]["ray_address"] == address
