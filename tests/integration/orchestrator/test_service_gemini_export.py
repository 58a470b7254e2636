"""Every tool the orchestrator registers exports a Gemini declaration that google-genai's own
models accept: the builtins, their old names, the workspace tools and the artifact tools."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from google.genai import types

from orchestrator import OrchestratorService, Settings
from orchestrator.service import result_budget
from tests.unit.tools.test_gemini_export import check_gemini_shape


@pytest.mark.parametrize("agent", [None, "coder"])
def test_every_registered_tool_is_a_valid_gemini_declaration(
    agent: str | None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings.from_env(
        {}, data_dir=str(tmp_path / "data"), context_url="http://127.0.0.1:9", agent=agent, freedom="high"
    )
    with (
        caplog.at_level(logging.WARNING, logger="tools.schema.export"),
        OrchestratorService(settings, workspace=tmp_path, budget=result_budget(settings)) as service,
    ):
        names = list(service.registry)
        declarations = service.registry.to_gemini_tools(include_hidden=True)
    assert [d["name"] for d in declarations] == names
    assert {"read_artifact", "search_artifact", "math_solver", "web_search"} <= set(names)
    if agent == "coder":
        assert {"read", "grep", "edit", "bash"} <= set(names)
    for declaration in declarations:
        check_gemini_shape(declaration)
    types.Tool.model_validate({"function_declarations": declarations})  # as google-genai takes them
    # What Gemini cannot express is named, tool and field, in a WARNING (never silently).
    for record in caplog.records:
        assert "exported for Gemini with losses:" in record.getMessage()
