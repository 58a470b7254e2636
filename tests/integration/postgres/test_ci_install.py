"""``.ci/run`` installs Debian's postgresql when it can (root and apt-get), and says why not
when it cannot: the PostgreSQL tests are then skipped, never silently."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.integration.orchestrator.test_onboarding import ci_run, restricted_path

MISSING = {"CI_POSTGRES_ROOT": "/nonexistent/postgresql"}


def test_an_installed_postgresql_is_found_off_path(tmp_path: Path) -> None:
    bindir = tmp_path / "pg" / "15" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "initdb").write_text("#!/bin/sh\n")
    (bindir / "initdb").chmod(0o755)
    result = ci_run({"CI_POSTGRES_ROOT": str(tmp_path / "pg")}, path=restricted_path(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"PostgreSQL is installed: {bindir}" in result.stdout


def test_ci_run_explains_why_postgresql_is_not_installed(tmp_path: Path) -> None:
    result = ci_run(MISSING, path=restricted_path(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    if os.geteuid() == 0:
        assert "PostgreSQL is missing and apt-get is not available, so it is not installed" in result.stdout
    else:
        assert "PostgreSQL is missing and this is not root, so it is not installed" in result.stdout
        assert "sudo apt-get install postgresql" in result.stdout
    assert "the PostgreSQL tests will be skipped" in result.stdout


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("apt-get") is None, reason="needs root and apt-get")
def test_ci_run_installs_postgresql_with_apt_as_root(tmp_path: Path) -> None:
    result = ci_run(MISSING, path=restricted_path(tmp_path, "apt-get"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(dry run) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql" in result.stdout
