"""max_subagent_iterations, per-agent models, the command's configuration errors."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agents import (
    ModelResolver,
    SubAgent,
    add_pipeline_arguments,
    agent_models_from_env,
    check_max_subagent_iterations,
    env_name,
    load_agent_models,
    run_pipeline_command,
    subagent_iterations,
)
from orchestrator.offline import OfflineModel
from tools import LocalToolRegistry


@pytest.mark.parametrize("value", [1, 3, 10, "7"])
def test_budgets_in_range(value: Any) -> None:
    assert check_max_subagent_iterations(value) == int(value)


@pytest.mark.parametrize("value", [0, 11, -1, "x", True, 2.5, None])
def test_budgets_out_of_range_name_the_setting_and_range(value: Any) -> None:
    with pytest.raises(ValueError, match=r"max_subagent_iterations .* from 1 to 10"):
        check_max_subagent_iterations(value)


def test_flag_wins_over_environment_and_default_is_three() -> None:
    env = {"TOOLDECK_MAX_SUBAGENT_ITERATIONS": "5"}
    assert subagent_iterations(None, {}) == 3
    assert subagent_iterations(None, env) == 5
    assert subagent_iterations(8, env) == 8
    with pytest.raises(ValueError, match="TOOLDECK_MAX_SUBAGENT_ITERATIONS"):
        subagent_iterations(None, {"TOOLDECK_MAX_SUBAGENT_ITERATIONS": "11"})
    with pytest.raises(ValueError, match="--max-subagent-iterations"):
        subagent_iterations(0, {})


def test_subagent_rejects_a_bad_budget_and_a_foreign_view() -> None:
    registry = LocalToolRegistry()
    with pytest.raises(ValueError, match="from 1 to 10"):
        SubAgent("coder", OfflineModel(), registry.for_agent("coder"), "x", 11)
    with pytest.raises(ValueError, match="for_agent"):
        SubAgent("coder", OfflineModel(), registry.for_agent("reviewer"), "x")


def test_per_agent_models_from_environment_and_file(tmp_path: Path) -> None:
    env = {"TOOLDECK_MODEL_TEST_WRITER": "small", "TOOLDECK_MODEL_REVIEWER": " big ", "TOOLDECK_MODEL": "main"}
    assert agent_models_from_env(env) == {"test-writer": "small", "reviewer": "big"}
    assert env_name("test-writer") == "TOOLDECK_MODEL_TEST_WRITER"
    settings = tmp_path / "agents.toml"
    settings.write_text('[models]\ncoder = "mid"\n')
    assert load_agent_models(settings) == {"coder": "mid"}
    settings.write_text("[models]\ncoder = 3\n")
    with pytest.raises(ValueError, match=r"agents\.toml"):
        load_agent_models(settings)


def test_resolver_builds_named_models_once_and_defaults_to_the_orchestrators() -> None:
    default, built = OfflineModel(), []

    def build(name: str) -> OfflineModel:
        built.append(name)
        return OfflineModel()

    resolver = ModelResolver(default, names={"coder": "x"}, build=build)
    assert resolver.for_agent("reviewer") is default
    assert resolver.for_agent("coder") is resolver.for_agent("coder")
    assert built == ["x"]


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    add_pipeline_arguments(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--pipeline", " "], {}, "the task is empty"),
        (["--pipeline", "x", "--max-subagent-iterations", "0"], {}, "--max-subagent-iterations"),
        (["--pipeline", "x"], {"TOOLDECK_MAX_SUBAGENT_ITERATIONS": "99"}, "TOOLDECK_MAX_SUBAGENT_ITERATIONS"),
        (["--pipeline", "x", "--workspace", "/nonexistent/dir"], {}, "is not a directory"),
        (["--pipeline", "x", "--max-cycles", "0"], {}, "max_cycles"),
    ],
)
def test_command_configuration_errors_exit_2(argv: list[str], env: dict[str, str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = run_pipeline_command(_args(*argv), env=env, model=OfflineModel(), stdout=out, stderr=err)
    assert code == 2
    assert message in err.getvalue()
