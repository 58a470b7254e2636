"""Module worker benchmark: what running a module out of process costs per call.

Run: ``python scripts/bench_modules.py [--runs 200] [--starts 5]``. Prints medians and ratios
against baselines measured in the same run (the same adapter called in this process, which
is what the boundary replaced); no assertions.

* ``normalize_for_tools`` on 20 records: in process vs. a call into the module's sandboxed
  worker (one long-lived process; per launcher);
* ``fetch`` of a local JSON API: the adapter with a plain ``requests`` session in process
  vs. ``ModuleAdapter.fetch`` through the worker, the HTTP forwarded to the host (api_url
  check, credential placeholders, the address policy, a pinned connection);
* the start of a worker (sandbox, interpreter, imports, loading the module), paid once per
  enabled module and after a restart.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

from shared.modules import ModuleManifest, ModuleWorkers, WorkerSpec  # noqa: E402
from shared.modules.runtime import module_adapter_class  # noqa: E402
from tools.builtin.code_executor.local import LauncherChoice  # noqa: E402
from tools.builtin.modules import sandboxed_workers  # noqa: E402

SOURCE = """
from shared.adapters.base import AdapterError, BaseAdapter


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        answer = self.http_session().get(
            config["base_url"], headers={"X-API-Key": config["credentials"]["api_key"]}, timeout=10
        )
        if answer.status_code != 200:
            raise AdapterError(f"HTTP {answer.status_code}")
        return answer.json()["runs"]

    def transform(self, raw):
        return [{"date": run["date"], "km": float(run["km"])} for run in raw]

    @classmethod
    def normalize_for_tools(cls, data):
        return {"runs": len(data), "total_km": round(sum(r["km"] for r in data), 1)}
"""
RECORDS = [{"date": f"2026-11-{day:02d}", "km": 5.0 + day / 10} for day in range(1, 21)]
KEY = "bench-key-0123456789"


class _Api(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"runs": RECORDS if self.headers.get("X-API-Key") == KEY else []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _in_process_class() -> Any:
    namespace: dict[str, Any] = {"__name__": "bench_module"}
    exec(compile(SOURCE, "<bench module>", "exec"), namespace)  # the in-process baseline the boundary replaced
    return namespace["Adapter"]


def _median(samples: list[float]) -> float:
    return round(statistics.median(samples), 3)


def _round_robin(calls: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(runs):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            samples[name].append((time.perf_counter() - start) * 1000.0)
    return {name: _median(values) for name, values in samples.items()}


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="calls timed per figure")
    parser.add_argument("--starts", type=int, default=5, help="worker starts timed per launcher")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    api = f"http://127.0.0.1:{server.server_address[1]}/api/runs"
    manifest = ModuleManifest(
        id="bench",
        name="Bench",
        category="fitness",
        api_url=api,
        auth_type="api_key",
        required_credentials=("api_key",),
    )
    spec = WorkerSpec("bench", "v1", SOURCE, "Adapter", api)
    inner = _in_process_class()
    session = requests.Session()
    local = inner(session=session)
    calls: dict[str, Callable[[], object]] = {
        "normalize in process": lambda: inner.normalize_for_tools(RECORDS),
        "fetch in process": lambda: local.fetch({"base_url": api, "credentials": {"api_key": KEY}}),
    }
    starts: dict[str, float] = {}
    pools: list[ModuleWorkers] = []
    launchers: tuple[LauncherChoice, ...] = ("bwrap", "namespaces")
    for launcher in launchers:
        workers = sandboxed_workers(hidden_dirs=[], allow_hosts=["127.0.0.1"], launcher=launcher)
        pools.append(workers)
        times = []
        for _ in range(args.starts):
            start = time.perf_counter()
            worker = workers.start(spec)
            times.append((time.perf_counter() - start) * 1000.0)
            worker.stop()
        starts[launcher] = _median(times)
        cls = module_adapter_class(manifest, "v1", workers.start(spec), lambda: {"api_key": KEY})
        calls[f"normalize in worker ({launcher})"] = lambda cls=cls: cls.normalize_for_tools(RECORDS)  # type: ignore[misc]
        calls[f"fetch in worker ({launcher})"] = lambda cls=cls: cls().fetch({})  # type: ignore[misc]
    try:
        figures = _round_robin(calls, args.runs)
    finally:
        for workers in pools:
            workers.close()
        server.shutdown()
    print(f"module worker benchmark ({args.runs} calls each, medians in ms)")
    for name, value in figures.items():
        kind = name.split()[0]
        baseline = figures[f"{kind} in process"]
        ratio = "" if "in process" in name else f"  ({value / baseline:.1f}x in process, +{value - baseline:.3f} ms)"
        print(f"  {name:<32} {value:>8.3f}{ratio}")
    for name, value in starts.items():
        print(f"  {f'worker start ({name})':<32} {value:>8.1f}  (once per enabled module, and per restart)")


if __name__ == "__main__":
    main()
