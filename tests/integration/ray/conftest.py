"""A local Ray (two CPUs) for this session: started on first use, shut down at the end."""

from __future__ import annotations

import importlib.util
import logging
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
#: Ray's token authentication, with a token of this session (never written to ~/.ray).
AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """``ray`` after ``ray.init(num_cpus=2)``; its workers import tooldeck and these tests'
    tools from this checkout. Processes that join it need `AUTH` in their environment."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed: pip install -e '.[ray]' in a tooldeck checkout")
    saved = {name: os.environ.get(name) for name in AUTH}
    os.environ.update(AUTH)  # read when Ray is imported, and inherited by the processes it starts
    try:
        import ray

        path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
            object_store_memory=200 * 1024 * 1024,
            runtime_env={"env_vars": {"PYTHONPATH": path}},
        )
        try:
            yield ray
        finally:
            ray.shutdown()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
