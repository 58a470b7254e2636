"""ToolsNode with a result budget: an oversized result becomes an artifact instead of a cut."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.graph import ToolsNode
from tools import LocalToolRegistry
from tools.artifacts import ArtifactStore, ResultBudget, register_artifact_tools

REPORT = "\n".join(f"{n:05d} payment to ACME Corp, 12.50 EUR, reference R-{n}" for n in range(5000))


def _registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()

    @registry.tool
    def statement() -> str:
        """The whole bank statement."""
        return REPORT

    @registry.tool
    def balance() -> dict[str, Any]:
        """The balance."""
        return {"balance": "12.50"}

    return registry


def _turn(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for n, (name, args) in enumerate(calls)
    ]
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": tool_calls}]}


def test_over_budget_result_is_an_artifact_the_model_reads_on(tmp_path: Path) -> None:
    registry = _registry()
    budget = ResultBudget(ArtifactStore(tmp_path / "artifacts"), max_tokens=1_000, preview_chars=1_500)
    register_artifact_tools(registry, budget)
    with ToolsNode(registry, budget=budget) as node:
        update = node(_turn(("statement", {}), ("balance", {})))
        big, small = (json.loads(m["content"]) for m in update["messages"])
        assert small == {"status": "success", "data": {"balance": "12.50"}}
        assert big["status"] == "success" and big["data"]["preview"] == REPORT[:1500]
        assert big["data"]["size_chars"] == len(REPORT)
        assert [r["truncated"] for r in update["tool_results"]] == [True, False]
        handle = big["data"]["artifact"]
        found = node(_turn(("search_artifact", {"handle": handle, "query": "R-4321"})))
        (match,) = json.loads(found["messages"][0]["content"])["data"]["matches"]
        page = node(_turn(("read_artifact", {"handle": handle, "offset": match["offset"], "limit": 60})))
        text = json.loads(page["messages"][0]["content"])["data"]["text"]
    assert text.startswith("04321 payment to ACME Corp, 12.50 EUR, reference R-4321")


def test_without_a_budget_the_cut_is_unchanged(tmp_path: Path) -> None:
    with ToolsNode(_registry(), max_output_chars=2_000) as node:
        content = node(_turn(("statement", {})))["messages"][0]["content"]
    body = json.loads(content)
    assert len(content) <= 2_000 and body["truncated"]["original_chars"] > 2_000
    assert "artifact" not in content and not (tmp_path / "artifacts").exists()
