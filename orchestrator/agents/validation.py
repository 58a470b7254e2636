"""Code validation: detect a workspace's checks and run them in the sandbox.

=================  ==========================================  =============================
Check              Detected by                                 Runs (in the sandbox)
=================  ==========================================  =============================
``pytest``         ``pytest.ini``, ``conftest.py``, ``[tool.  ``pytest -q -p no:cacheprovider``
                   pytest...]`` in pyproject/setup.cfg/tox,    through ``python_path`` (the
                   ``test_*.py`` / ``*_test.py`` files         host's site-packages)
``ruff``           ``ruff.toml``, ``.ruff.toml``, ``[tool.     ``ruff check --no-cache .``
                   ruff]`` in pyproject.toml
``npm test``       ``package.json`` with a ``test`` script     ``npm test``
``cargo test``     ``Cargo.toml``                              ``cargo test --offline``
``go test``        ``go.mod``                                  ``go test ./...``
``make test``      ``Makefile`` with a ``test:`` target        ``make test``
=================  ==========================================  =============================

Every check runs with the workspace read-only to the host (``writable=False``), no network
and a time limit; each is reported ``pass``, ``fail`` or ``skipped`` (with the reason: the
tool is not installed, pytest collected nothing). A workspace with no checks is reported as
"no automated checks found", never as a pass.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tools.builtin.code_executor import SandboxClient
from tools.builtin.workspace.search import walk_files
from tools.errors import ToolError

_SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
_TAIL = 3000
_PYTEST = (
    "import os, sys\n"
    "sys.path.insert(0, os.getcwd())\n"
    "import pytest\n"
    "raise SystemExit(pytest.main(['-q', '-p', 'no:cacheprovider', '--color=no']))\n"
)
_NO_TESTS_COLLECTED = 5

CheckStatus = Literal["pass", "fail", "skipped"]


class CheckResult(BaseModel):
    """One check's outcome."""

    name: str
    command: str
    status: CheckStatus
    exit_code: int | None = None
    duration_ms: float = 0.0
    output: str = ""
    reason: str | None = None


class ValidationReport(BaseModel):
    """Every check's outcome and the summary (``passed``, ``failed``, ``skipped`` when every
    check was skipped, or ``no_checks``)."""

    summary: Literal["passed", "failed", "skipped", "no_checks"]
    message: str
    checks: list[CheckResult]


@dataclass(frozen=True)
class Check:
    """A detected check: ``code`` runs as ``language`` in the sandbox."""

    name: str
    command: str
    language: str
    code: str
    needs: str | None = None  # an executable that must be installed, or "pytest"


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return ""


def _has_tests(root: Path) -> bool:
    for count, path in enumerate(walk_files(root)):
        if count > 5000:
            return False
        name = path.name
        if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
            return True
    return False


def detect_checks(root: Path, *, ruff: str | None = None) -> list[Check]:
    """The checks of the workspace at ``root`` (the table in the module docstring)."""
    pyproject = _text(root / "pyproject.toml")
    config = pyproject + _text(root / "setup.cfg") + _text(root / "tox.ini")
    checks: list[Check] = []
    pytest_config = re.search(r"^\[(tool\.pytest|tool:pytest|pytest)", config, re.MULTILINE)
    if (root / "pytest.ini").exists() or (root / "conftest.py").exists() or pytest_config or _has_tests(root):
        checks.append(Check("pytest", "python -m pytest -q -p no:cacheprovider", "python", _PYTEST, "pytest"))
    if (root / "ruff.toml").exists() or (root / ".ruff.toml").exists() or "[tool.ruff" in pyproject:
        exe = ruff or "ruff"
        checks.append(Check("ruff", "ruff check --no-cache .", "bash", f"exec {exe} check --no-cache .", exe))
    package = _text(root / "package.json")
    if package:
        try:
            script = json.loads(package).get("scripts", {}).get("test", "")
        except (ValueError, AttributeError):
            script = ""
        if script and "no test specified" not in script:
            checks.append(Check("npm test", "npm test", "bash", "exec npm test", "npm"))
    if (root / "Cargo.toml").exists():
        checks.append(Check("cargo test", "cargo test --offline", "bash", "exec cargo test --offline", "cargo"))
    if (root / "go.mod").exists():
        checks.append(Check("go test", "go test ./...", "bash", "exec go test ./...", "go"))
    makefile = _text(root / "Makefile")
    if re.search(r"^test\s*:", makefile, re.MULTILINE):
        checks.append(Check("make test", "make test", "bash", "exec make test", "make"))
    return checks


class WorkspaceValidator:
    """Runs a workspace's checks in a sandbox.

    Args:
        sandbox: The sandbox (network off; its limits bound each check).
        python_path: Directories for the sandboxed Python (the host's site-packages, so
            pytest and the project's dependencies import).
        ruff: The ruff executable (visible in the sandbox), if any.
        timeout_s: Wall-clock limit of one check (capped by the sandbox's own).
        which: Finds an executable on the sandbox's search path (injectable for tests).
    """

    def __init__(
        self,
        sandbox: SandboxClient,
        *,
        python_path: Sequence[str] = (),
        ruff: str | None = None,
        timeout_s: float = 300.0,
        which: Callable[[str], str | None] | None = None,
    ) -> None:
        self._sandbox = sandbox
        self._python_path = tuple(python_path)
        self._ruff = ruff
        self._timeout = timeout_s
        self._which = which or (lambda name: shutil.which(name, path=_SEARCH_PATH))

    def _missing(self, check: Check) -> str | None:
        if check.needs == "pytest":
            found = any(os.path.isdir(os.path.join(p, "pytest")) or os.path.isdir(os.path.join(p, "_pytest"))
                        for p in self._python_path)  # fmt: skip
            return None if found else "pytest is not importable in the sandbox (no python_path with pytest)"
        installed = os.path.isabs(check.needs or "") and os.access(check.needs or "", os.X_OK)
        if check.needs and not installed and self._which(check.needs) is None:
            return f"{check.needs} is not installed"
        return None

    def run_check(self, check: Check, root: Path) -> CheckResult:
        """Run one check; an unrunnable one is ``skipped`` with the reason."""
        missing = self._missing(check)
        if missing is not None:
            return CheckResult(name=check.name, command=check.command, status="skipped", reason=missing)
        try:
            result = self._sandbox.run(
                check.code, language=check.language, timeout_seconds=self._timeout,
                workspace=root, writable=False, python_path=self._python_path,
            )  # fmt: skip
        except ToolError as exc:
            return CheckResult(name=check.name, command=check.command, status="skipped", reason=exc.message)
        output = (result.stdout + ("\n" + result.stderr if result.stderr else "")).strip()
        if check.name == "pytest" and result.exit_code == _NO_TESTS_COLLECTED:
            return CheckResult(
                name=check.name, command=check.command, status="skipped", exit_code=result.exit_code,
                duration_ms=result.duration_ms, output=output[-_TAIL:], reason="pytest collected no tests",
            )  # fmt: skip
        passed = result.exit_code == 0 and not result.timed_out
        return CheckResult(
            name=check.name, command=check.command, status="pass" if passed else "fail",
            exit_code=result.exit_code, duration_ms=result.duration_ms, output=output[-_TAIL:],
            reason=result.note if not passed else None,
        )  # fmt: skip

    def validate(self, root: str | os.PathLike[str]) -> ValidationReport:
        """Detect and run every check of the workspace."""
        path = Path(root)
        checks = detect_checks(path, ruff=self._ruff)
        if not checks:
            return ValidationReport(summary="no_checks", message="no automated checks found", checks=[])
        results = [self.run_check(check, path) for check in checks]
        failed = [r.name for r in results if r.status == "fail"]
        passed = [r.name for r in results if r.status == "pass"]
        if failed:
            return ValidationReport(summary="failed", message=f"{', '.join(failed)} failed", checks=results)
        if passed:
            return ValidationReport(summary="passed", message=f"{', '.join(passed)} passed", checks=results)
        return ValidationReport(
            summary="skipped", message="every check was skipped; nothing was verified", checks=results
        )


def host_python_path(paths: Mapping[str, str]) -> list[str]:
    """The ``purelib``/``platlib`` directories of ``sysconfig.get_paths()`` (deduplicated)."""
    out: list[str] = []
    for key in ("purelib", "platlib"):
        value = paths.get(key)
        if value and value not in out and os.path.isdir(value):
            out.append(value)
    return out
