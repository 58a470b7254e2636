"""ToolExecutorService with real binaries: scan, states, calls, faults, hot reload, shutdown."""

from __future__ import annotations

import json
import os
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.external import ScanChanges, ToolExecutorService

ECHO = """
import json, sys
if sys.argv[1:] == ["--schema"]:
    print(json.dumps({"name": "echo", "description": "Echo the text back.", "version": "1.0.0",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                         "required": ["text"], "additionalProperties": False},
        "output_schema": {"type": "object"}}))
    sys.exit(0)
print(json.dumps({"echo": json.load(sys.stdin)["text"]}))
"""

NO_SCHEMA = """
import json, os, sys
if len(sys.argv) > 1:
    sys.stderr.write("usage: plain (reads JSON on stdin)\\n")
    sys.exit(2)
args = json.load(sys.stdin)
print(json.dumps({"got": args, "mode": os.environ.get("TOOLDECK_TOOL_MODE"), "pid": os.getpid()}))
"""

BEHAVIOURS = """
import json, os, subprocess, sys, time
if sys.argv[1:] == ["--schema"]:
    sys.exit(1)
args = json.load(sys.stdin)
kind = args.get("kind")
if kind == "garbage":
    print("<html>not json</html>")
elif kind == "nothing":
    pass
elif kind == "huge":
    sys.stdout.write("[" + "1," * 5_000_000 + "1]")
elif kind == "exit":
    sys.stderr.write("disk on fire\\n")
    sys.exit(4)
elif kind == "sleep":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", args["marker"]])
    time.sleep(args.get("seconds", 60))
    print(json.dumps({"slept": True, "pid": os.getpid()}))
else:
    print(json.dumps({"kind": kind}))
"""

BROKEN_SCHEMA = """
import sys
if sys.argv[1:] == ["--schema"]:
    print('{"name": "broken_one", "input_schema": {"type": 5}}')
"""


def _service(bin_dir: Path, **kw: Any) -> ToolExecutorService:
    kw.setdefault("env", dict(os.environ))
    kw.setdefault("poll_interval", 0)
    return ToolExecutorService(bin_dir, **kw)


@pytest.fixture
def bin_dir(tmp_path: Path, make_script: Any) -> Path:
    folder = tmp_path / "bin"
    make_script("echo.py", ECHO, folder)
    make_script("plain", NO_SCHEMA, folder)
    make_script("behave", BEHAVIOURS, folder)
    make_script("broken.py", BROKEN_SCHEMA, folder)
    make_script("notes.txt", "not a tool", folder, mode=0o644)
    make_script("hidden", ECHO, folder / ".git")
    return folder


def test_scan_reports_every_state(bin_dir: Path) -> None:
    with _service(bin_dir) as service:
        status = {name: (s.state, s.message) for name, s in service.status().items()}
        assert status == {
            "echo": ("ready", None),
            "plain": ("schema-unknown", "--schema not supported (exit status 2)"),
            "behave": ("schema-unknown", "--schema not supported (exit status 1)"),
            "broken": ("broken", status["broken"][1]),
        }
        assert "invalid JSON schema" in (status["broken"][1] or "")
        assert [t.name for t in service.tools()] == ["behave", "echo", "plain"]
        echo = service.tool("echo")
        assert echo is not None
        assert (echo.description, echo.version) == ("Echo the text back.", "1.0.0")
        assert echo.output_schema() == {"type": "object"}


def test_calls_through_a_registry(bin_dir: Path) -> None:
    with _service(bin_dir) as service:
        registry = LocalToolRegistry()
        for tool in service.tools():
            registry.register(tool)
        assert registry("echo", text="hi")["data"] == {"echo": "hi"}
        bad = registry("echo", text=3)
        assert bad["error_type"] == "validation_error"
        plain = registry("plain", anything={"x": 1})
        assert plain["data"]["got"] == {"anything": {"x": 1}}
        assert plain["data"]["mode"] == "subprocess"
        names = [t["function"]["name"] for t in registry.to_openai_tools()]
        assert names == ["behave", "echo", "plain"]


@pytest.mark.parametrize(
    ("kind", "reason", "text"),
    [
        ("garbage", "invalid_output", "not JSON"),
        ("nothing", "empty_output", "printed nothing"),
        ("huge", "output_too_large", "more than 100000 bytes"),
        ("exit", "exit_status", "disk on fire"),
    ],
)
def test_faulty_outputs_become_errors(bin_dir: Path, kind: str, reason: str, text: str) -> None:
    with _service(bin_dir, max_output_bytes=100_000) as service:
        result = service.execute("behave", None, {"kind": kind})
        assert result.error is not None
        assert result.error.type == "execution_error"
        assert (result.error.details or {}).get("reason") == reason
        assert text in result.error.message


def test_timeout_kills_grandchildren(bin_dir: Path, live_pids: Any) -> None:
    marker = f"exec-sleep-{uuid.uuid4().hex}"
    with _service(bin_dir, call_timeout=0.5) as service:
        result = service.tool("behave").execute(kind="sleep", marker=marker)  # type: ignore[union-attr]
        assert result.error is not None
        assert result.error.type == "timeout"
    assert live_pids(marker) == []


def test_concurrent_calls_are_separate_processes(bin_dir: Path) -> None:
    with _service(bin_dir) as service:
        results: list[Any] = []
        threads = [
            threading.Thread(target=lambda i=i: results.append(service.execute("plain", None, {"i": i})))
            for i in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert all(r.ok for r in results)
        assert len(results) == 8
        assert sorted(r.data["got"]["i"] for r in results) == list(range(8))
        assert len({r.data["pid"] for r in results}) == 8


def test_stop_kills_calls_in_flight(bin_dir: Path, live_pids: Any, wait_for: Any) -> None:
    marker = f"exec-stop-{uuid.uuid4().hex}"
    service = _service(bin_dir).start()
    box: list[Any] = []
    thread = threading.Thread(
        target=lambda: box.append(service.execute("behave", None, {"kind": "sleep", "marker": marker}))
    )
    thread.start()
    assert wait_for(lambda: len(live_pids(marker)) == 1)  # the grandchild carries the marker
    service.stop()
    thread.join(10)
    assert box[0].error.type == "cancelled"
    assert live_pids(marker) == []
    assert service.running_calls == 0


def test_binary_deleted_while_being_called(bin_dir: Path, live_pids: Any, wait_for: Any) -> None:
    marker = f"exec-del-{uuid.uuid4().hex}"
    with _service(bin_dir) as service:
        tool = service.tool("behave")
        assert tool is not None
        box: list[Any] = []
        thread = threading.Thread(target=lambda: box.append(tool.execute(kind="sleep", marker=marker, seconds=0.5)))
        thread.start()
        assert wait_for(lambda: len(live_pids(marker)) == 1)  # the grandchild carries the marker
        (bin_dir / "behave").unlink()
        thread.join(10)
        assert box[0].ok
        assert box[0].data["slept"] is True
        after = tool.execute(kind="x")  # the watcher has not run: the call finds it gone
        assert after.error is not None
        assert (after.error.details or {})["reason"] == "missing-binary"
        assert service.status()["behave"].state == "missing-binary"
        assert "behave" not in [t.name for t in service.tools()]


def test_hot_add_change_and_remove(bin_dir: Path, make_script: Any, wait_for: Any) -> None:
    seen: list[ScanChanges] = []
    with _service(bin_dir, poll_interval=0.05, on_change=seen.append) as service:
        make_script("late.py", ECHO.replace('"name": "echo"', '"name": "late"'), bin_dir)
        assert wait_for(lambda: service.tool("late") is not None, 5)
        assert service.tool("late").execute(text="x").data == {"echo": "x"}  # type: ignore[union-attr]

        old = service.tool("late")
        make_script(
            "late.py",
            ECHO.replace('"name": "echo"', '"name": "late"').replace("Echo the", "Repeat the"),
            bin_dir,
        )
        assert wait_for(lambda: service.tool("late") is not old, 5)
        assert service.tool("late").description == "Repeat the text back."  # type: ignore[union-attr]

        (bin_dir / "late.py").unlink()
        assert wait_for(lambda: service.tool("late") is None, 5)
        assert service.status()["late"].state == "missing-binary"
    late = str(bin_dir / "late.py")
    assert [c.added for c in seen if c.added] == [[late]]
    assert [c.changed for c in seen if c.changed] == [[late]]
    assert [c.removed for c in seen if c.removed] == [[late]]


def test_name_clash_marks_the_later_binary_broken(bin_dir: Path, make_script: Any) -> None:
    make_script("zz_echo_copy.py", ECHO, bin_dir)
    with _service(bin_dir) as service:
        status = service.status()["echo"]
        assert status.path.endswith("echo.py")
        assert status.state == "ready"
        (bin_dir / "echo.py").unlink()
        service.rescan()
        assert service.status()["echo"].path.endswith("zz_echo_copy.py")
        assert service.tool("echo") is not None


def test_unknown_binary_via_adapter_protocol(bin_dir: Path) -> None:
    with _service(bin_dir) as service:
        result = service.execute("nope", None, {})
        assert result.error is not None
        assert result.error.type == "unknown_tool"
        assert "echo" in result.error.message


def test_missing_directory() -> None:
    with pytest.raises(NotADirectoryError):
        ToolExecutorService("/nonexistent/tooldeck-bin").start()


COUNTING = """
import json, sys
if sys.argv[1:] == ["--schema"]:
    with open(sys.argv[0] + ".probed", "a") as log:
        log.write("x")
    print(json.dumps({"description": "Tool NUM.", "input_schema": {"type": "object"}}))
    sys.exit(0)
print("{}")
"""


def test_hundred_binaries_and_warm_cache(tmp_path: Path, make_script: Any) -> None:
    folder = tmp_path / "many"
    for i in range(100):
        make_script(f"tool_{i:03d}", COUNTING.replace("NUM", str(i)), folder, flags="-S")
    cache = tmp_path / "schemas.json"
    with _service(folder, cache_path=cache) as service:
        assert len(service.tools()) == 100
        assert {s.state for s in service.status().values()} == {"ready"}
    probes = sorted(p.name for p in folder.glob("*.probed"))
    assert len(probes) == 100
    assert json.loads(cache.read_text())["format"] == 2
    for p in folder.glob("*.probed"):
        p.unlink()
    with _service(folder, cache_path=cache) as warm:
        assert len(warm.tools()) == 100
        assert warm.tool("tool_042").description == "Tool 42."  # type: ignore[union-attr]
    assert list(folder.glob("*.probed")) == []  # nothing was asked again


def test_bound_registry_follows_the_directory(bin_dir: Path, make_script: Any, wait_for: Any) -> None:
    registry = LocalToolRegistry()
    registry.register(lambda: "mine", name="plain")  # someone else's tool keeps its name
    with _service(bin_dir, poll_interval=0.05) as service:
        service.bind_registry(registry)
        assert sorted(registry.names()) == ["behave", "echo", "plain"]
        assert registry.get_tool("plain") is not service.tool("plain")
        make_script("fresh.py", ECHO.replace('"name": "echo"', '"name": "fresh"'), bin_dir)
        assert wait_for(lambda: "fresh" in registry, 5)
        assert registry("fresh", text="a")["data"] == {"echo": "a"}
        (bin_dir / "fresh.py").unlink()
        assert wait_for(lambda: "fresh" not in registry, 5)
        (bin_dir / "behave").unlink()
        gone = registry("behave", kind="x")  # noticed by the call itself, before the watcher
        assert gone["status"] == "error"
        assert wait_for(lambda: "behave" not in registry, 5)
    assert registry("plain")["data"] == "mine"


SERVED = """
import sys
sys.path.insert(0, ROOT)
from pydantic import BaseModel, Field
from tools import BaseTool, UpstreamError
from tools.external.binary import serve


class Req(BaseModel):
    city: str = Field(description="City name.")


class Weather(BaseModel):
    city: str
    celsius: float


class WeatherTool(BaseTool[Req, Weather]):
    name = "weather"
    description = "Current weather for a city."
    version = "3.0.0"

    def execute_internal(self, request: Req) -> Weather:
        if request.city == "Atlantis":
            raise UpstreamError("The weather service does not cover Atlantis.")
        return Weather(city=request.city, celsius=21.5)


sys.exit(serve(WeatherTool()))
"""


def test_a_served_tool_round_trips_through_the_executor(tmp_path: Path, make_script: Any) -> None:
    root = str(Path(__file__).resolve().parents[3])
    folder = tmp_path / "served"
    make_script("weather_bin.py", SERVED.replace("ROOT", repr(root)), folder)
    with _service(folder, schema_timeout=30) as service:
        tool = service.tool("weather")
        assert tool is not None, service.status()
        assert (tool.description, tool.version) == ("Current weather for a city.", "3.0.0")
        assert tool.input_schema()["required"] == ["city"]
        assert tool.output_schema() is not None
        ok = tool.execute(city="Lisbon")
        assert ok.data == {"city": "Lisbon", "celsius": 21.5}
        failed = tool.execute(city="Atlantis")
        assert failed.error is not None
        assert (failed.error.type, failed.error.retryable) == ("upstream_error", True)
        assert failed.error.message == "The weather service does not cover Atlantis."
