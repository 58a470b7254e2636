"""The pipeline end to end with a real local model (SmolLM2 through llama.cpp): wiring only.

The model is far too small to fix code; the test shows that every agent runs against a
real OpenAI-compatible endpoint with its routed tools, that the verdict parser and the
cycle limit hold, and that the run is JSON. Its output is not judged.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from orchestrator import OpenAIChatModel
from orchestrator.agents import ModelResolver, build_pipeline, format_pipeline_trace
from tools.builtin.code_executor import LocalSandbox, SandboxLimits

pytestmark = [pytest.mark.llm, pytest.mark.timeout(900)]


def test_the_pipeline_runs_with_a_real_model(llama_base_url: str, tmp_path: Path) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    root = Path(tempfile.mkdtemp(prefix="tooldeck-llm-pipeline-"))
    root.chmod(0o711)
    options = {"timeout": 300, "temperature": 0.0, "extra_body": {"max_tokens": 96}}
    with (
        OpenAIChatModel(llama_base_url, "smollm2", **options) as model,  # type: ignore[arg-type]
        LocalSandbox(limits=SandboxLimits(timeout_seconds=30), temp_root=str(root)) as sandbox,
    ):
        pipeline, tools = build_pipeline(ModelResolver(model), sandbox=sandbox, max_iterations=2, max_cycles=1)
        try:
            run = pipeline.run("Fix add() in calc.py so that add(2, 3) == 5.", ws)
        finally:
            tools.close()
    print(format_pipeline_trace(run))
    assert run.status in ("approved", "rejected", "validation_failed", "error")
    if run.status != "error":
        assert [s.agent for s in run.steps] == ["coder", "test-writer", "reviewer"]
        assert len(run.verdicts) == 1
    json.dumps(run.model_dump(mode="json"))
