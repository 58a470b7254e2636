"""Benchmark the console's two heaviest pages, server-side.

Run: ``python scripts/bench_ui.py [--tools 500] [--runs 1000] [--repeat 15]``

Prints medians, each against a baseline measured in the same run on the same data:

* the Tools page with N tools (each with a manual and a week of hourly metrics) vs loading
  that data without rendering (the rows: manuals, where each came from, p50/p95 from the
  hourly buckets); target: the page in under 300 ms for 500 tools;
* the Runs page with M recorded runs (agent and pipeline runs, some paused) vs listing the
  records without rendering (``FileRunStore.list``); target: under 300 ms for 1,000 runs.

Pages are requested through the whole application (security middleware, routing, the
template) in process, over ASGI, so the figures are the server's time, not a network's. The
machine may be shared: the target is judged on the median CPU time of the process (the
server's threads included), measured in alternating rounds with the baseline; the wall time
(which a loaded machine stretches) is printed beside it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from orchestrator.ui import ConsoleSecurity, ConsoleSources, create_app  # noqa: E402
from orchestrator.ui._runs import run_list  # noqa: E402
from orchestrator.ui._tools import tool_rows  # noqa: E402
from tools import LocalToolRegistry, ToolResult  # noqa: E402
from tools.approvals import ApprovalPolicy, ApprovalsStore  # noqa: E402
from tools.manual import ToolCategory, ToolManual  # noqa: E402
from tools.runs import (  # noqa: E402
    FileRunStore,
    RecordedApproval,
    RecordedStep,
    RecordedToolCall,
    RunRecord,
    RunStatus,
)
from tools.telemetry import MetricsStore  # noqa: E402

TOKEN = "bench-token-of-some-length-0123456789"
TARGET_MS = 300.0
Figures = tuple[float, float]
_CATEGORIES = [c for c in ToolCategory if c is not ToolCategory.UNCLASSIFIED]
_RISKS = ("safe", "moderate", "dangerous")


def once(work: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one ``work()`` (CPU of the whole process: the server's threads too)."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def alternated(page: Callable[[], Any], baseline: Callable[[], Any], repeat: int) -> tuple[Figures, Figures]:
    """Medians (wall, CPU) of ``page`` and ``baseline``, measured in alternating rounds after
    a warm-up, so a load that drifts on a shared machine weighs on both alike."""
    page(), baseline()
    pages, bases = [], []
    for _ in range(repeat):
        pages.append(once(page))
        bases.append(once(baseline))
    return _medians(pages), _medians(bases)


def _medians(samples: list[tuple[float, float]]) -> Figures:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def make_registry(count: int, approvals: ApprovalsStore, metrics: MetricsStore) -> LocalToolRegistry:
    """``count`` function tools with declared manuals of every category and risk."""
    registry = LocalToolRegistry(policy=ApprovalPolicy(None, approvals), metrics=metrics)
    for i in range(count):

        def tool(query: str, limit: int = 10, exact: bool = False) -> dict[str, Any]:
            """Look something up in one of many places.

            Args:
                query: What to look for.
                limit: Most results.
                exact: Match exactly.
            """
            return {"query": query, "limit": limit, "exact": exact}

        name = f"tool_{i:04d}"
        manual = ToolManual(
            name=name,
            description=f"Tool number {i}: looks things up.",
            category=_CATEGORIES[i % len(_CATEGORIES)],
            risk=_RISKS[i % 3],  # type: ignore[arg-type]
            mutating=i % 2 == 0,
        )
        registry.register(tool, name=name, manual=manual)
    return registry


def fill_metrics(metrics: MetricsStore, names: list[str], now: datetime, rng: random.Random) -> int:
    """A week of hourly calls for every tool (a few per hour); returns how many were recorded."""
    recorded = 0
    for name in names:
        for hour in range(0, 7 * 24, 3):
            at = (now - timedelta(hours=hour)).isoformat()
            for _ in range(rng.randint(0, 3)):
                duration = rng.lognormvariate(3, 0.8)
                metadata = {"tool_name": name, "duration_ms": duration, "started_at": at}
                if rng.random() < 0.1:
                    metrics.record(ToolResult.failure("upstream_error", "HTTP 503", metadata=metadata))
                else:
                    metrics.record(ToolResult.success(1, metadata=metadata))
                recorded += 1
    metrics.flush()
    return recorded


def fill_runs(store: FileRunStore, count: int, now: datetime, rng: random.Random) -> None:
    """``count`` records: agent runs of every status and pipeline runs, a few tool calls each."""
    for i in range(count):
        started = now - timedelta(minutes=count - i)
        calls = [
            RecordedToolCall(call_id=f"call_{j}", name=f"tool_{rng.randint(0, 499):04d}", arguments={"query": f"q{j}"},
                             status="success" if rng.random() > 0.1 else "error", duration_ms=rng.uniform(1, 200))
            for j in range(rng.randint(1, 8))
        ]  # fmt: skip
        if i % 10 == 0:
            steps = [RecordedStep(cycle=1, agent=agent, turns=3, verdict="APPROVE" if agent == "reviewer" else None)
                     for agent in ("coder", "test-writer", "reviewer")]  # fmt: skip
            record = RunRecord(id=f"pipe_{i:05d}", kind="pipeline", status="approved", question=f"task {i}",
                               agent="pipeline", started_at=started, updated_at=started, steps=steps, cycles=1,
                               max_cycles=3, verdicts=["APPROVE"], tool_calls=calls)  # fmt: skip
        else:
            statuses: tuple[RunStatus, ...] = ("answered", "budget_exhausted", "paused", "failed")
            status = statuses[i % 4]
            approvals = (
                [RecordedApproval(call_id="call_0", tool=calls[0].name, risk="moderate", decision="pending")]
                if status == "paused" else []
            )  # fmt: skip
            record = RunRecord(id=f"run_{i:032x}", status=status, question=f"question number {i}", agent="main",
                               model="bench", started_at=started, updated_at=started, turns=len(calls) // 2 + 1,
                               tool_calls=calls, approvals=approvals,
                               answer=None if status == "paused" else f"answer {i}")  # fmt: skip
        store.save(record)


def report(label: str, figures: tuple[Figures, Figures]) -> None:
    page, loading = figures
    verdict = "within" if page[1] < TARGET_MS else "OVER"
    print(
        f"{label}: page cpu {page[1]:.1f} ms (wall {page[0]:.1f}) vs loading the same data cpu {loading[1]:.1f} ms "
        f"(wall {loading[0]:.1f}): ratio {page[1] / loading[1]:.2f} (cpu); {verdict} the {TARGET_MS:.0f} ms target"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=500)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    rng = random.Random(7)
    now = datetime.now(timezone.utc)
    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        root = Path(tmp)
        approvals = ApprovalsStore(root / "approvals.json")
        metrics = MetricsStore(root / "metrics.json", flush_interval=None)
        registry = make_registry(args.tools, approvals, metrics)
        calls = fill_metrics(metrics, registry.names(), now, rng)
        runs = FileRunStore(root / "runs", max_runs=max(args.runs, 1))
        fill_runs(runs, args.runs, now, rng)
        sources = ConsoleSources(registry=registry, metrics=metrics, runs=runs)
        security = ConsoleSecurity(token=TOKEN, port=8777)
        with TestClient(create_app(sources, security), base_url="http://127.0.0.1:8777") as client:
            client.get(f"/?token={TOKEN}")

            def page(path: str) -> Callable[[], None]:
                def get() -> None:
                    response = client.get(path)
                    if response.status_code != 200:
                        raise SystemExit(f"{path}: HTTP {response.status_code}")

                return get

            print(f"{args.tools} tools with {calls} calls in hourly buckets; {args.runs} run records")
            tools_figures = alternated(page("/tools"), lambda: tool_rows(sources), args.repeat)
            report(f"Tools page, {args.tools} tools", tools_figures)
            runs_figures = alternated(page("/runs"), lambda: run_list(sources), args.repeat)
            report(f"Runs page, {args.runs} runs", runs_figures)
        metrics.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
