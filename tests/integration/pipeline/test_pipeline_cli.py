"""``python -m orchestrator --pipeline``: wired to the settings, the exit codes and the trace."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("model", [[], ["--model", "test"], ["--model", "smollm2"]])
def test_without_a_real_model_the_pipeline_refuses_to_start(tmp_path: Path, model: list[str]) -> None:
    """Issue 21 item 4: it ran three empty cycles with the offline model and exited "rejected"."""
    workspace = _workspace(tmp_path)
    env = {"TOOLDECK_DATA_DIR": str(tmp_path / "data")}
    code, out, err = run(["--pipeline", "fix add", "--workspace", str(workspace), "--max-cycles", "1", *model], env)
    assert (code, out) == (2, "")
    assert err.startswith("error: configuration: --pipeline needs a real model")
    assert "pass --base-url URL and --model NAME" in err
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # nothing ran
    assert not (tmp_path / "data" / "runs").exists()


def test_subagent_budget_is_a_setting_with_its_range_named(tmp_path: Path) -> None:
    workspace = str(_workspace(tmp_path))
    code, _, err = run(["--pipeline", "x", "--workspace", workspace, "--max-subagent-iterations", "11"], {})
    assert code == 2 and "--max-subagent-iterations" in err and "from 1 to 10" in err
    code, _, err = run(["--pipeline", "x", "--workspace", workspace], {"TOOLDECK_MAX_SUBAGENT_ITERATIONS": "zero"})
    assert code == 2 and "TOOLDECK_MAX_SUBAGENT_ITERATIONS" in err
    code, _, err = run(["--pipeline", "x", "a question too"], {})
    assert code == 2 and "pass no question" in err
