"""ToolExecutorService with real binaries: tags kept, output checked, per-tool counts."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tools import LocalToolRegistry
from tools.external import ToolAdapterRegistry, ToolConfig, ToolExecutorService, build_external_tools

MakeScript = Callable[..., Path]


def _binary(name: str, *, output: str, tags: object = ("text", "stats"), output_schema: object = None) -> str:
    schema = {
        "name": name,
        "description": "Count words.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "output_schema": output_schema
        or {"type": "object", "properties": {"words": {"type": "integer"}}, "required": ["words"]},
        "tags": tags,
    }
    return f"""
import json, sys
if sys.argv[1:] == ["--schema"]:
    print(json.dumps({schema!r}))
    sys.exit(0)
text = json.load(sys.stdin)["text"]
if text == "fail":
    sys.stderr.write("cannot count that\\n")
    sys.exit(3)
print({output!r}.replace("N", str(len(text.split()))))
"""


GOOD = '{"words": N}'


def test_tags_are_kept_and_survive_the_schema_cache(tmp_path: Path, make_script: MakeScript) -> None:
    make_script("count", _binary("count", output=GOOD), tmp_path / "bin")
    cache = tmp_path / "cache.json"
    for _ in range(2):  # cold, then from the cache
        with ToolExecutorService(tmp_path / "bin", cache_path=cache, poll_interval=0) as service:
            tool = service.tool("count")
            assert tool is not None
            assert tool.tags == ("text", "stats")


def test_older_cache_without_tags_is_not_trusted(tmp_path: Path, make_script: MakeScript) -> None:
    path = make_script("count", _binary("count", output=GOOD), tmp_path / "bin")
    st = path.stat()
    probe = {"state": "ready", "schema": {"name": "count", "input_schema": {"type": "object"}}, "message": None}
    entry = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "probe": probe}
    cache = tmp_path / "cache.json"
    cache.write_text(json.dumps({"format": 1, "entries": {str(path.resolve()): entry}}))
    with ToolExecutorService(tmp_path / "bin", cache_path=cache, poll_interval=0) as service:
        tool = service.tool("count")
        assert tool is not None
        assert tool.tags == ("text", "stats")
        assert tool.input_schema()["required"] == ["text"]


@pytest.mark.parametrize("tags", ["text", [1, 2], ["x" * 65], ["t"] * 33])
def test_malformed_tags_make_the_binary_broken(tmp_path: Path, make_script: MakeScript, tags: object) -> None:
    make_script("count", _binary("count", output=GOOD, tags=tags), tmp_path / "bin")
    with ToolExecutorService(tmp_path / "bin", poll_interval=0) as service:
        status = service.status()["count"]
        assert status.state == "broken"
        assert status.message is not None and "tags" in status.message
        assert service.tool("count") is None


@pytest.mark.parametrize(
    ("output", "field", "problem"),
    [
        ('{"words": "N"}', "words", "is not of type 'integer'"),
        ('{"count": N}', "words", "missing"),
        ("[N]", "(output)", "is not of type 'object'"),
    ],
)
def test_output_that_breaks_the_output_schema_is_an_upstream_error(
    tmp_path: Path, make_script: MakeScript, output: str, field: str, problem: str
) -> None:
    make_script("count", _binary("count", output=output), tmp_path / "bin")
    with ToolExecutorService(tmp_path / "bin", poll_interval=0) as service:
        registry = LocalToolRegistry()
        service.bind_registry(registry)
        adapter_tool = build_external_tools(
            ToolConfig(id="count", name="count_ext", adapter_type="binary"), ToolAdapterRegistry([service])
        )[0]
        for result in (registry.call_tool("count", text="a b"), adapter_tool.execute(text="a b")):
            assert result.error is not None
            assert result.error.type == "upstream_error"
            assert not result.error.retryable
            assert "Tool 'count' returned output that does not match its declared output_schema" in result.error.message
            assert f"{field}: " in result.error.message and problem in result.error.message
            assert result.error.details is not None
            assert result.error.details["errors"][0]["field"] == field
            assert result.metadata["binary"] == "count"


def test_valid_output_passes_unchanged(tmp_path: Path, make_script: MakeScript) -> None:
    make_script("count", _binary("count", output=GOOD), tmp_path / "bin")
    with ToolExecutorService(tmp_path / "bin", poll_interval=0) as service:
        tool = service.tool("count")
        assert tool is not None
        assert tool.execute(text="one two").data == {"words": 2}


def test_status_counts_calls_failures_last_error_and_duration(tmp_path: Path, make_script: MakeScript) -> None:
    make_script("count", _binary("count", output=GOOD), tmp_path / "bin")
    make_script("idle", _binary("idle", output=GOOD), tmp_path / "bin")
    with ToolExecutorService(tmp_path / "bin", env=dict(os.environ), poll_interval=0) as service:
        registry = LocalToolRegistry()  # no metrics store anywhere
        service.bind_registry(registry)
        assert registry.call_tool("count", text="a b c").ok
        assert service.execute("count", None, {"text": "a"}).ok
        assert registry.call_tool("count", text="fail").error is not None
        status = service.status()
        count = status["count"]
        assert (count.calls, count.failures) == (3, 1)
        assert count.last_error is not None
        assert count.last_error.startswith("execution_error: Tool 'count' failed: cannot count that")
        assert count.avg_duration_ms is not None and count.avg_duration_ms > 0
        idle = status["idle"]
        assert (idle.calls, idle.failures, idle.last_error, idle.avg_duration_ms) == (0, 0, None, None)
        # bad arguments never reach the binary, so they are not calls of it
        assert registry.call_tool("count", text=3).error is not None
        assert service.status()["count"].calls == 3
