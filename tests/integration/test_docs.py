"""The documentation works as written (issue 21 item 11).

* Every ```python block of README.md and docs/*.md runs as written, in a fresh interpreter,
  in an empty temporary directory, with no network and a private HOME. A block that cannot
  (it is a program another program runs, say) carries a skip marker on the line before its
  fence, with the reason: ``<!-- doc-test: skip (a tool binary: it reads its call on stdin) -->``.
* No doc links a file that is not in the repository (markdown links, and repository paths
  named in backticks).
* Exit codes are stated once, where each command is documented, and agree with the code.
* Install blocks upgrade pip before installing anything (an old pip rebuilt llama-cpp-python
  for 24 minutes instead of reusing the cached wheel).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator._exit import exit_code_lines
from tests.integration.orchestrator.test_onboarding import FENCE, RUNNER
from tools.cli._context import EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON = {"python", "py", "python3"}
SKIP = re.compile(r"<!-- doc-test: skip \((?P<reason>[^)]*)\) -->\s*$")


def blocks(path: Path) -> list[tuple[int, str, str, str | None]]:
    """(line, info, code, skip reason) of every fenced block of ``path``."""
    text = path.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start("body")) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        out.append((line, match.group("info").strip(), match.group("body"), skip.group("reason") if skip else None))
    return out


PY_BLOCKS = [
    (path, line, code, skip)
    for path in DOCS
    for line, info, code, skip in blocks(path)
    if info and info.split()[0].lower() in PYTHON
]


def block_id(item: tuple[Path, int, str, str | None]) -> str:
    return f"{item[0].relative_to(ROOT)}:{item[1]}"


def test_every_python_block_is_found_and_skips_are_rare_and_justified() -> None:
    assert len(PY_BLOCKS) >= 30
    skipped = [(block_id(b), b[3]) for b in PY_BLOCKS if b[3] is not None]
    assert all(reason and len(reason) > 20 for _, reason in skipped), skipped
    assert len(skipped) <= 3, skipped


@pytest.mark.parametrize("item", PY_BLOCKS, ids=[block_id(b) for b in PY_BLOCKS])
def test_python_block_runs_as_written(item: tuple[Path, int, str, str | None], tmp_path: Path) -> None:
    _, _, code, skip = item
    if skip is not None:
        pytest.skip(f"marked in the doc: {skip}")
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NO_PROXY": "*",
    }
    work = tmp_path / "work"
    work.mkdir()
    name = block_id(item)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, name], input=code, env=env, cwd=work, capture_output=True, text=True,
        timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"the block at {name} failed:\n{done.stderr[-3000:]}"


# ---------------------------------------------------------------------------- links

LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
NAMED_PATH = re.compile(r"`(?P<path>(?:tools|orchestrator|shared|tests|docs|scripts|examples|\.ci)/[\w./-]+?)`")


def test_no_doc_links_a_file_that_is_not_in_the_repository() -> None:
    missing = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in LINK.finditer(text):
            target = match.group("target").split("#", 1)[0]
            if not target or re.match(r"^[a-z]+:", target):
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)}: link to {target}")
        for match in NAMED_PATH.finditer(text):
            named = match.group("path").rstrip(".")
            if any(ch in named for ch in "*{<") or "." not in named.rsplit("/", 1)[-1]:
                continue  # a pattern, or not a file name (MCP's `tools/list` is a method)
            if not (ROOT / named).exists():
                missing.append(f"{doc.relative_to(ROOT)}: names {named}")
    assert missing == []


# ---------------------------------------------------------------------------- exit codes

EXIT_PHRASE = re.compile(r"(?i)\bexit codes?\b")
LISTED = re.compile(r"[:;,]\s*(\d{1,3})\s+(?=[a-z(])")


def lists_exit_codes(paragraph: str) -> bool:
    """A statement of several codes ("exit codes: 0 success, 1 ..., 2 ..."), not a mention of one."""
    for match in EXIT_PHRASE.finditer(paragraph):
        if len(LISTED.findall(paragraph[match.end() : match.end() + 400])) >= 2:
            return True
    return False


def test_exit_codes_are_stated_once_and_agree_with_the_code() -> None:
    orchestrator_doc = (ROOT / "docs" / "orchestrator.md").read_text(encoding="utf-8")
    section = orchestrator_doc.split("### Exit codes", 1)[1]
    (table,) = [m.group("body") for m in FENCE.finditer(section)][:1]
    assert table.rstrip("\n").splitlines() == exit_code_lines()

    cli_doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    statement = cli_doc.split("**Exit codes.**", 1)[1].split("\n\n", 1)[0]
    stated = [int(n) for n in re.findall(r"(?<![\w.-])(\d{1,3})(?= [a-z])", statement)]
    assert stated == [EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, 130]

    assert lists_exit_codes(f"Exit codes: {statement}")  # the check recognises a real list
    elsewhere = []
    for doc in DOCS:
        if doc.name in ("orchestrator.md", "cli.md"):
            continue
        for paragraph in doc.read_text(encoding="utf-8").split("\n\n"):
            if lists_exit_codes(paragraph):
                elsewhere.append(f"{doc.relative_to(ROOT)}: {' '.join(paragraph.split())[:160]}")
    assert elsewhere == [], "state exit codes once (docs/orchestrator.md, docs/cli.md) and link there"


# ---------------------------------------------------------------------------- installs

PIP_INSTALL = re.compile(r"\bpip install\b(?P<rest>[^\n&|;]*)")


def test_install_blocks_upgrade_pip_first() -> None:
    wrong = []
    for doc in DOCS:
        for line, _, code, _ in blocks(doc):
            upgraded = False
            for match in PIP_INSTALL.finditer(code):
                words = match.group("rest").split()
                if "pip" in words and ("--upgrade" in words or "-U" in words):
                    upgraded = True
                elif not upgraded:
                    wrong.append(f"{doc.relative_to(ROOT)}:{line}: pip install{match.group('rest')}")
                    break
    assert wrong == [], "put `python -m pip install --upgrade pip` first in these blocks"
