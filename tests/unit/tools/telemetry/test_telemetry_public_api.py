"""Pins the public import paths of tools.telemetry (the lead may fold this into test_public_api)."""

from __future__ import annotations

from pathlib import Path

import tools.telemetry
import tools.telemetry.report

PUBLIC = [
    "DEFAULT_METRICS_PATH",
    "LATENCY_BOUNDS_MS",
    "HourBucket",
    "MetricsHistory",
    "ToolSummary",
    "percentile",
    "summarize",
    "OVERFLOW_BUCKET",
    "UNKNOWN_TOOL_BUCKET",
    "MetricsFileError",
    "MetricsStore",
    "MetricsBackend",
    "PostgresMetricsStore",
    "open_metrics_store",
    "StatsRow",
    "ToolSpan",
    "ToolTracer",
    "TracingUnavailableError",
    "gen_ai_tool_type",
    "inject_trace_context",
    "log_tool_failure",
    "redact_data",
    "redact_text",
    "render_stats_table",
    "stats_rows",
    "success_rate_style",
    "summarize_error",
]


def test_public_names() -> None:
    assert sorted(tools.telemetry.__all__) == sorted(PUBLIC)
    assert all(hasattr(tools.telemetry, name) for name in PUBLIC)


def test_report_module_path_for_the_cli() -> None:
    assert tools.telemetry.report.stats_rows is tools.telemetry.stats_rows
    assert tools.telemetry.report.render_stats_table is tools.telemetry.render_stats_table


def test_sink_contract(tmp_path: Path) -> None:
    from tools.metrics import MetricsSink

    store = tools.telemetry.MetricsStore(tmp_path / "metrics.json", flush_interval=None)
    try:
        assert isinstance(store, MetricsSink)
    finally:
        store.close()  # nothing recorded: nothing written
