"""README's extras table names what setup.cfg installs: the core row its ``install_requires``,
each runtime extra's row that extra's requirements, and ``all`` every runtime extra (the core
row once listed ``regex``, which nothing installs). Requirements limited to old Pythons by an
environment marker are not named in the table."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_RUNTIME = {"test", "dev", "all"}


def requirement_names(text: str) -> set[str]:
    """The distribution names of a setup.cfg requirement list, markers-limited ones left out."""
    names = set()
    for requirement in (line.strip() for line in text.strip().splitlines()):
        if not requirement or requirement.startswith("%(") or ";" in requirement:
            continue
        names.add(re.split(r"[\[<>=!~ ]", requirement, maxsplit=1)[0].lower())
    return names


def readme_rows() -> dict[str, set[str]]:
    """extra (``(core)`` for the core row) -> the names in its ``brings`` column."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Extras\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in {"extra", "---"}:
            continue
        brings = {re.sub(r"\[.*?\]|\(.*?\)", "", name).strip().lower() for name in cells[1].split(",")}
        rows[cells[0].strip("`")] = brings
    return rows


def test_the_core_row_and_every_runtime_extra_row_name_exactly_what_setup_cfg_installs() -> None:
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    extras = config["options.extras_require"]
    rows = readme_rows()
    assert rows["(core)"] == requirement_names(config["options"]["install_requires"])
    runtime = [name for name in extras if name not in NOT_RUNTIME]
    for extra in runtime:
        assert rows.get(extra) == requirement_names(extras[extra]), extra
    assert set(re.findall(r"%\((\w+)\)s", extras["all"])) == set(runtime)
