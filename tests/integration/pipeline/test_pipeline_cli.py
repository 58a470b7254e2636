"""``python -m orchestrator --pipeline``: wired to the settings, the exit codes and the trace."""

from __future__ import annotations

import io
import json
from pathlib import Path

from orchestrator.cli import main


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    return tmp_path


def run(argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, env=env, stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_the_offline_model_cannot_implement_so_the_run_is_rejected_honestly(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    env = {"TOOLDECK_DATA_DIR": str(tmp_path / "data")}
    code, out, _ = run(["--pipeline", "fix add", "--workspace", str(workspace), "--max-cycles", "1", "--json"], env)
    assert code == 6  # rejected: never an approval by default
    pipeline_run = json.loads(out)
    assert pipeline_run["status"] == "rejected"
    assert pipeline_run["verdicts"][0]["decision"] == "REJECT"
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # nothing changed


def test_subagent_budget_is_a_setting_with_its_range_named(tmp_path: Path) -> None:
    workspace = str(_workspace(tmp_path))
    code, _, err = run(["--pipeline", "x", "--workspace", workspace, "--max-subagent-iterations", "11"], {})
    assert code == 2 and "--max-subagent-iterations" in err and "from 1 to 10" in err
    code, _, err = run(["--pipeline", "x", "--workspace", workspace], {"TOOLDECK_MAX_SUBAGENT_ITERATIONS": "zero"})
    assert code == 2 and "TOOLDECK_MAX_SUBAGENT_ITERATIONS" in err
    code, _, err = run(["--pipeline", "x", "a question too"], {})
    assert code == 2 and "pass no question" in err
