"""A local Ray (two CPUs) for this session: started on first use, shut down at the end."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """``ray`` after ``ray.init(num_cpus=2)``; its workers import tooldeck and these tests'
    tools from this checkout."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'tooldeck[ray]'")
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
        object_store_memory=200 * 1024 * 1024,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        yield ray
    finally:
        ray.shutdown()
