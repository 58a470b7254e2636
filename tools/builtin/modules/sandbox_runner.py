"""The dynamic stage of validation: the module's own tests, in the sandbox, network off.

:class:`ModuleTestRunner` is the small interface the validator needs;
:class:`SandboxTestRunner` implements it with a sandbox whose ``run`` accepts a
``workspace`` (a folder whose copy is the program's working directory) and a
``python_path`` (folders made visible read-only and put first on ``sys.path``; the
sandbox's interpreter runs ``-I -S``, so nothing else is importable but the standard
library). The project (for ``shared.adapters``) and the folder holding pydantic and
requests go on that path; the module's files go in the workspace; a small harness runs
``unittest`` discovery there and prints one JSON line the runner reads back.

A sandbox without workspace support cannot run the tests: the run then fails with a
finding saying so, and no attestation is issued.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tools._files import atomic_write_text
from tools.builtin.code_executor._runplan import readable_by_others
from tools.builtin.modules.report import Finding
from tools.errors import ToolError

__all__ = [
    "SANDBOX_NEEDS_WORKSPACE",
    "ModuleTestRunner",
    "SandboxTestRunner",
    "TestRun",
    "default_python_path",
    "workspace_supported",
]

#: Why the tests cannot run when the sandbox has no workspace support.
SANDBOX_NEEDS_WORKSPACE = "needs the sandbox workspace support (pipeline branch)"
_MARK = "@@TOOLDECK-MODULE-TESTS@@"
_MAX_PROBLEMS = 20

HARNESS = f"""
import io, json, os, sys, unittest
sys.dont_write_bytecode = True
here = os.getcwd()
sys.path.insert(0, here)
MARK = {_MARK!r}

def where(text):
    found = (None, None)
    for line in text.splitlines():
        line = line.strip()
        if line.startswith('File "') and '", line ' in line:
            path, _, rest = line[6:].partition('", line ')
            number = rest.split(",")[0]
            if os.path.abspath(path).startswith(here + os.sep) and number.isdigit():
                found = (os.path.relpath(os.path.abspath(path), here), int(number))
    return found

try:
    suite = unittest.TestLoader().discover(here, pattern="test*.py", top_level_dir=here)
except Exception as exc:
    print(MARK + json.dumps({{"error": "cannot load the tests: %s: %s" % (type(exc).__name__, exc)}}))
    sys.exit(1)
result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
problems = []
for kind, pairs in (("failure", result.failures), ("error", result.errors)):
    for test, text in pairs[:{_MAX_PROBLEMS}]:
        file, line = where(text)
        lines = text.rstrip().splitlines()
        start = max((i for i, ln in enumerate(lines) if ln.startswith("Traceback")), default=0)
        first = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()), start)
        problems.append({{"test": test.id(), "kind": kind, "file": file, "line": line,
                         "message": "\\n".join(lines[first:])[:500]}})
print(MARK + json.dumps({{"ran": result.testsRun, "problems": problems}}))
sys.exit(0 if result.wasSuccessful() else 1)
"""


@dataclass(frozen=True)
class TestRun:
    """What running a module's tests gave.

    Attributes:
        ran: Tests that ran.
        passed: True when at least one test ran and none failed.
        findings: One per failing test (file and line of the innermost frame in the
            module), or why the tests could not run.
        note: A one-line summary.
    """

    __test__ = False  # not a pytest test class

    ran: int
    passed: bool
    findings: list[Finding] = field(default_factory=list)
    note: str = ""


class ModuleTestRunner(Protocol):
    """Runs a module's tests somewhere isolated."""

    def run_tests(self, files: Mapping[str, bytes]) -> TestRun:
        """Run the tests among ``files`` (the module's files by relative path)."""
        ...


def workspace_supported(sandbox: object) -> bool:
    """Whether ``sandbox.run`` takes ``workspace`` and ``python_path`` (checked by signature)."""
    run = getattr(sandbox, "run", None)
    if run is None:
        return False
    try:
        parameters = inspect.signature(run).parameters
    except (TypeError, ValueError):
        return False
    return "workspace" in parameters and "python_path" in parameters


def default_python_path() -> tuple[str, ...]:
    """The folders a module's tests need: the project (``shared``) and pydantic's site folder."""
    import pydantic
    import requests

    folders = [_project_folder()]
    folders += [Path(m.__file__ or "").resolve().parent.parent for m in (pydantic, requests)]
    return tuple(dict.fromkeys(str(f) for f in folders))


def _project_folder() -> Path:
    import shared

    return Path(shared.__file__).resolve().parent.parent


#: Where a run's scratch folder holds its copy of ``shared`` (not a package: discovery skips it).
_LIB = ".tooldeck-lib"


def _copy_shared(scratch: Path) -> str:
    """A copy of ``shared`` inside ``scratch``, readable by everyone: the folder to import it from.

    As root the sandbox runs the tests as another uid, which cannot import a project folder in
    a directory only its owner may enter (a checkout in ``/root`` or in a ``mktemp -d``
    folder); the copy goes with the tests' own files instead.
    """
    lib = scratch / _LIB
    shutil.copytree(_project_folder() / "shared", lib / "shared", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [lib, *lib.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return str(lib)


def _unavailable(message: str) -> TestRun:
    finding = Finding(stage="dynamic", file="test_adapter.py", rule="tests-not-run", message=message)
    return TestRun(ran=0, passed=False, findings=[finding], note=message)


class SandboxTestRunner:
    """Runs a module's ``unittest`` tests in a sandbox with the network off.

    Args:
        sandbox: A sandbox whose ``run`` takes ``workspace``, ``writable`` and
            ``python_path`` (e.g. ``LocalSandbox``).
        python_path: Folders the tests may import from (default: :func:`default_python_path`).
        timeout_seconds: Wall-clock limit of one test run.
        temp_root: Where the workspace copy is prepared (default: the system temp dir).
    """

    def __init__(
        self,
        *,
        sandbox: Any,
        python_path: Sequence[str | os.PathLike[str]] | None = None,
        timeout_seconds: float = 60.0,
        temp_root: str | None = None,
    ) -> None:
        self._sandbox = sandbox
        self._python_path = tuple(str(p) for p in (default_python_path() if python_path is None else python_path))
        project = str(_project_folder())
        # The default path's project folder, where the sandbox's uid could not enter it: a copy.
        self._copy_project = python_path is None and not readable_by_others(Path(project))
        self._timeout = timeout_seconds
        self._temp_root = temp_root

    @property
    def supported(self) -> bool:
        """Whether the sandbox can run module tests (it has workspace support)."""
        return workspace_supported(self._sandbox)

    def run_tests(self, files: Mapping[str, bytes]) -> TestRun:
        """Copy ``files`` to a scratch folder and run their tests there in the sandbox."""
        if not self.supported:
            return _unavailable(f"the tests could not run: running them {SANDBOX_NEEDS_WORKSPACE}.")
        with tempfile.TemporaryDirectory(prefix="tooldeck-module-", dir=self._temp_root) as scratch:
            for path, data in files.items():
                atomic_write_text(Path(scratch) / path, data.decode("utf-8", errors="replace"), mode=0o644)
            os.chmod(scratch, 0o755)  # noqa: S103 - the sandbox user reads this scratch copy
            python_path = self._python_path
            if self._copy_project:
                python_path = (_copy_shared(Path(scratch)), *python_path[1:])
            try:
                result = self._sandbox.run(
                    HARNESS,
                    language="python",
                    timeout_seconds=self._timeout,
                    workspace=scratch,
                    writable=False,
                    python_path=python_path,
                )
            except ToolError as exc:
                return _unavailable(f"the sandbox could not run the tests: {exc.message}")
        return _read_result(result, self._timeout)


def _read_result(result: Any, timeout: float) -> TestRun:
    if getattr(result, "timed_out", False):
        return _unavailable(f"the tests did not finish within {timeout:g} s (an endless loop, or a network wait?).")
    stdout = str(getattr(result, "stdout", ""))
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith(_MARK)), None)
    if line is None:
        tail = str(getattr(result, "stderr", "")).strip()[-600:] or "(no output)"
        return _unavailable(f"the test run crashed before reporting: {tail}")
    try:
        report = json.loads(line[len(_MARK) :])
    except ValueError:
        return _unavailable("the test run printed an unreadable report.")
    if "error" in report:
        return _unavailable(str(report["error"])[:600])
    ran = int(report.get("ran", 0))
    findings = [_finding(problem) for problem in report.get("problems", [])[:_MAX_PROBLEMS]]
    if ran == 0:
        findings.append(
            Finding(
                stage="dynamic",
                file="test_adapter.py",
                rule="no-tests",
                message="no test ran; write unittest.TestCase classes in test_*.py files.",
            )
        )
    failed = len(findings)
    note = f"{ran} test(s) ran, {failed} failed" if ran else "no test ran"
    return TestRun(ran=ran, passed=ran > 0 and not findings, findings=findings, note=note)


def _finding(problem: Mapping[str, Any]) -> Finding:
    file = problem.get("file") if isinstance(problem.get("file"), str) else None
    line = problem.get("line") if isinstance(problem.get("line"), int) else None
    kind = "test-error" if problem.get("kind") == "error" else "test-failure"
    message = f"{problem.get('test', 'a test')}: {str(problem.get('message', ''))[:500]}"
    return Finding(stage="dynamic", file=file or "test_adapter.py", line=line, rule=kind, message=message)
