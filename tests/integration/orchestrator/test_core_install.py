"""Issue 21, "done when", as a new user gets it: ``pip install tooldeck`` (no extras) in a fresh
virtualenv, an empty directory, nothing configured. The test environment has every extra, so
each distribution outside the core install (``install_requires`` and what those require) is
hidden from the child processes: importing it fails as it would in a fresh virtualenv.

The user writes the README's ``mytools.py``, runs ``python -m orchestrator --registry
mytools:build --model test "try my tools"``, sees every tool called as the README shows, then
``tooldeck runs show``; the README's first command answers too. (A module an extra provides,
imported on these paths, broke them: the PostgreSQL knowledge store's ``regex``, the MCP SDK
through the orchestrator's MCP handlers.)
"""

from __future__ import annotations

import configparser
import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.integration.orchestrator.test_onboarding import FENCE

ROOT = Path(__file__).resolve().parents[3]


def readme_walkthrough() -> tuple[str, list[str]]:
    """The README's ``mytools.py`` and the answer its console transcript shows (up to ``...``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    bodies = [(m.group("info").strip(), m.group("body")) for m in FENCE.finditer(text)]
    index = next(i for i, (info, body) in enumerate(bodies) if info == "python" and body.startswith("# mytools.py"))
    console = bodies[index + 1][1].splitlines()
    assert console[0] == '$ python -m orchestrator --registry mytools:build --model test "try my tools"'
    return bodies[index][1], console[1 : console.index("...")]


HIDE = textwrap.dedent(
    """
    import sys


    class _NotInstalled:
        \"\"\"Distributions a core install does not have: importing them fails.\"\"\"

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None


    sys.meta_path.insert(0, _NotInstalled())
    """
)


def core_distributions() -> set[str]:
    """The distributions ``pip install tooldeck`` brings: ``install_requires`` and, recursively,
    what they require (with the extras they ask for), for this interpreter."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    todo = [(Requirement(line), "") for line in config["options"]["install_requires"].splitlines() if line.strip()]
    seen: set[str] = {"tooldeck"}
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        asked = {canonicalize_name(e) for e in requirement.extras}
        if name in seen and not asked:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(requirement.name) or []
        except importlib.metadata.PackageNotFoundError:
            pytest.fail(f"{requirement.name}, a core requirement, is not installed in the test environment")
        for line in requires:
            inner = Requirement(line)
            for wanted in ("", *asked):
                if inner.marker is None or inner.marker.evaluate({"extra": wanted}):
                    todo.append((inner, wanted))
                    break
    return seen


def hidden_modules() -> set[str]:
    """Top-level modules installed here by distributions outside the core install."""
    core = core_distributions()
    return {
        module
        for module, dists in importlib.metadata.packages_distributions().items()
        if not any(canonicalize_name(d) in core for d in dists) and module not in {"tools", "shared", "orchestrator"}
    }


@pytest.fixture(scope="module")
def hidden() -> set[str]:
    modules = hidden_modules()
    # The guard guards something: the extras' modules the test environment has are hidden.
    assert {"mcp", "psycopg", "fastapi"} <= modules
    assert not {"pydantic", "requests", "rich", "re2", "typer"} & modules
    return modules


def core_only_env(tmp_path: Path, hidden: set[str]) -> dict[str, str]:
    """The environment of a fresh virtualenv with only the core install (``hidden`` unimportable)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"HIDDEN = {sorted(hidden)!r}\n{HIDE}")
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "LANG": "C.UTF-8",
    }


@pytest.fixture
def fresh(tmp_path: Path, hidden: set[str]) -> tuple[Path, dict[str, str]]:
    """An empty directory and the environment of a fresh virtualenv with only the core install."""
    project = tmp_path / "empty"
    project.mkdir()
    return project, core_only_env(tmp_path, hidden)


def sh(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False
    )


def test_the_hiding_works(fresh: tuple[Path, dict[str, str]]) -> None:
    project, env = fresh
    probe = sh(project, env, "-c", "import mcp")  # the mcp extra's SDK
    assert probe.returncode == 1 and "No module named 'mcp'" in probe.stderr


def test_the_tooldeck_command_starts_with_the_core_install_only(fresh: tuple[Path, dict[str, str]]) -> None:
    project, env = fresh
    helped = sh(project, env, "-m", "tools.cli", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "adopt" in helped.stdout


def test_write_a_tool_try_it_and_see_the_run_with_the_core_install_only(fresh: tuple[Path, dict[str, str]]) -> None:
    """The README's walkthrough, pasted: its mytools.py, its command, the answer it shows."""
    project, env = fresh
    mytools, answer = readme_walkthrough()
    (project / "mytools.py").write_text(mytools)
    tried = sh(project, env, "-m", "orchestrator", "--registry", "mytools:build", "--model", "test", "try my tools")
    assert tried.returncode == 0, tried.stderr
    assert tried.stdout.split("\n\ntrace:")[0].splitlines() == answer
    match = re.search(r"^run (run_[0-9a-f]{32}) recorded: tooldeck runs show \1$", tried.stdout, re.MULTILINE)
    assert match, tried.stdout

    shown = sh(project, env, "-m", "tools.cli", "runs", "show")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f"run {match.group(1)} (main agent): answered"
    assert '  1. add {"a": 1, "b": 1} -> success, ' in shown.stdout


def test_the_readme_s_first_command_answers_with_the_core_install_only(fresh: tuple[Path, dict[str, str]]) -> None:
    project, env = fresh
    asked = sh(project, env, "-m", "orchestrator", "What is 12*(3+4)? Remember that my dentist is Dr. Lee.")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("12 * (3 + 4) = 84.\nNoted: your dentist is Dr. Lee.\n")
