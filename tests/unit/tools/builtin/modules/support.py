"""Helpers shared by the module tests: small hand-written fakes and a working adapter.

``SubprocessSandbox`` is a test double of the sandbox's workspace contract (a copy of the
workspace as the working directory, ``python_path`` first on ``sys.path``, ``-I -S``)
run as a plain subprocess: it is *not* isolated, so it only ever runs the module tests
these tests write. The real ``LocalSandbox`` runs the same harness in
``tests/integration/sandbox/test_module_tests_in_sandbox.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.modules import ModuleKeys, ModuleWorkers
from tools import LocalToolRegistry
from tools.builtin.code_executor import SandboxResult
from tools.builtin.modules import ModuleToolkit, TestRun

#: A module's adapter as a model would write it for a JSON API of runs.
RUNS_ADAPTER = '''"""Runs from a local JSON API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import requests

from shared.adapters.base import AdapterError, BaseAdapter


class Adapter(BaseAdapter[dict[str, Any]]):
    """Reads GET {base_url} -> {"runs": [{"date": ..., "km": ...}]}."""

    def fetch_raw(self, config: Mapping[str, Any]) -> Any:
        headers = {"Accept": "application/json"}
        token = config.get("credentials", {}).get("api_key")
        if token:
            headers["X-API-Key"] = token
        try:
            response = self.http_session().get(config["base_url"], headers=headers, timeout=5)
        except requests.RequestException as exc:
            raise AdapterError(f"cannot reach the API ({type(exc).__name__})") from None
        if response.status_code != 200:
            raise AdapterError(f"the API answered HTTP {response.status_code}")
        return response.json()

    def transform(self, raw: Any) -> list[dict[str, Any]]:
        runs = raw.get("runs") if isinstance(raw, dict) else None
        if not isinstance(runs, list):
            raise AdapterError("no runs in the answer")
        return [{"date": str(r["date"]), "km": float(r["km"])} for r in runs if isinstance(r, dict)]

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        runs = data if isinstance(data, list) else []
        total = round(sum(float(r["km"]) for r in runs), 1)
        return {"runs": len(runs), "total_km": total, "latest": runs[-1]["date"] if runs else None}
'''

RUNS_TEST = """import unittest

from adapter import Adapter

SAMPLE = {"runs": [{"date": "2026-11-24", "km": 5.2}, {"date": "2026-11-25", "km": 7.5}]}


class Reply:
    status_code = 200

    def json(self):
        return SAMPLE


class Session:
    def get(self, url, **kwargs):
        return Reply()


class AdapterTest(unittest.TestCase):
    def test_fetch(self):
        result = Adapter(session=Session()).fetch({"base_url": "BASE", "credentials": {}})
        self.assertTrue(result.success, result.error)
        self.assertEqual([r["km"] for r in result.data], [5.2, 7.5])

    def test_normalize(self):
        shaped = Adapter.normalize_for_tools([{"date": "2026-11-25", "km": 7.5}])
        self.assertEqual(shaped, {"runs": 1, "total_km": 7.5, "latest": "2026-11-25"})
"""


def runs_test(base_url: str) -> str:
    """The module's tests, with its base URL."""
    return RUNS_TEST.replace('"BASE"', repr(base_url))


@dataclass
class PassingRunner:
    """A test runner that reports passing tests without running anything."""

    calls: list[Mapping[str, bytes]] = field(default_factory=list)

    def run_tests(self, files: Mapping[str, bytes]) -> TestRun:
        self.calls.append(dict(files))
        return TestRun(ran=3, passed=True, note="3 test(s) ran, 0 failed")


class SubprocessSandbox:
    """The sandbox workspace contract, as a plain (unisolated) subprocess. Tests only."""

    def languages(self) -> list[str]:
        return ["python"]

    def run(
        self,
        code: str,
        *,
        language: str = "python",
        stdin: str | None = None,
        timeout_seconds: float | None = None,
        workspace: str | None = None,
        writable: bool = False,
        python_path: Sequence[str] = (),
    ) -> SandboxResult:
        with tempfile.TemporaryDirectory(prefix="fake-sbx-") as scratch:
            cwd = Path(scratch) / "w"
            if workspace is not None:
                shutil.copytree(workspace, cwd)
            else:
                cwd.mkdir()
            prelude = f"import sys; sys.path[0:0] = {list(python_path)!r}\n"
            try:
                proc = subprocess.run(
                    [sys.executable, "-I", "-S", "-c", prelude + code],
                    check=False,
                    cwd=cwd,
                    input=stdin or "",
                    capture_output=True,
                    text=True,
                    timeout=timeout_seconds or 60,
                    start_new_session=True,
                )
            except subprocess.TimeoutExpired as exc:
                out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
                return SandboxResult("python", out, "", None, 0.0, timed_out=True)
        return SandboxResult("python", proc.stdout, proc.stderr, proc.returncode, 0.0)

    def close(self) -> None:
        pass


def make_toolkit(
    root: Path, *, runner: Any = None, sandbox: Any = None, gateway: Any = None, workers: ModuleWorkers | None = None
) -> ModuleToolkit:
    """A toolkit over ``root/modules`` with keys in ``root/keys``; ``workers`` run enabled modules."""
    keys = ModuleKeys.load(root / "keys")
    if runner is None and sandbox is None:
        runner = PassingRunner()
    return ModuleToolkit.create(
        root / "modules", keys=keys, sandbox=sandbox, test_runner=runner, llm_gateway=gateway, workers=workers
    )


def registry_for(toolkit: ModuleToolkit, *, aliases: bool = True) -> LocalToolRegistry:
    """A registry with the module tools (and the old names)."""
    registry = LocalToolRegistry()
    toolkit.register(registry, aliases=aliases)
    return registry


def attestation_of(result: Any) -> dict[str, Any]:
    """The attestation of a passing validate result."""
    assert result.ok, result.error
    assert result.data["passed"], result.data["findings"]
    attestation: dict[str, Any] = result.data["attestation"]
    return attestation
