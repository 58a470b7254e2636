"""Observability: the persisted learning loop (:class:`MetricsStore`, or
:class:`PostgresMetricsStore` for several replicas) and OpenTelemetry spans.

Importing this package imports neither ``opentelemetry`` nor ``rich``: spans need the
``otel`` extra only once a :class:`ToolTracer` is built, the stats table needs ``rich``
only when rendered.
"""

from tools._failure_log import log_tool_failure
from tools.metrics import OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET
from tools.telemetry._file import MetricsFileError
from tools.telemetry._redaction import redact_data, redact_text, summarize_error
from tools.telemetry.backend import MetricsBackend, open_metrics_store
from tools.telemetry.postgres_store import PostgresMetricsStore
from tools.telemetry.report import StatsRow, render_stats_table, stats_rows, success_rate_style
from tools.telemetry.series import (
    LATENCY_BOUNDS_MS,
    HourBucket,
    MetricsHistory,
    ToolSummary,
    percentile,
    summarize,
)
from tools.telemetry.store import DEFAULT_METRICS_PATH, MetricsStore
from tools.telemetry.tracing import (
    ToolSpan,
    ToolTracer,
    TracingUnavailableError,
    gen_ai_tool_type,
    inject_trace_context,
)

__all__ = [
    "DEFAULT_METRICS_PATH",
    "LATENCY_BOUNDS_MS",
    "OVERFLOW_BUCKET",
    "UNKNOWN_TOOL_BUCKET",
    "HourBucket",
    "MetricsBackend",
    "MetricsFileError",
    "MetricsHistory",
    "MetricsStore",
    "PostgresMetricsStore",
    "StatsRow",
    "ToolSpan",
    "ToolSummary",
    "ToolTracer",
    "TracingUnavailableError",
    "gen_ai_tool_type",
    "inject_trace_context",
    "log_tool_failure",
    "open_metrics_store",
    "percentile",
    "redact_data",
    "redact_text",
    "render_stats_table",
    "stats_rows",
    "success_rate_style",
    "summarize",
    "summarize_error",
]
