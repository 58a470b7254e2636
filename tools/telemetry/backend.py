"""`MetricsBackend`: what a persisted metrics store offers, whichever place keeps the figures.

Two implementations: :class:`~tools.telemetry.MetricsStore` (a JSON file and its append log,
the default) and :class:`~tools.telemetry.PostgresMetricsStore` (a PostgreSQL database shared
by several replicas, extra ``postgres``). A registry records into either (both are a
:class:`~tools.metrics.MetricsSink`); ``tooldeck stats`` and the console read either (both
are a :class:`~tools.telemetry.MetricsHistory`). :func:`open_metrics_store` picks one from the
setting ``TOOLDECK_DATABASE_URL`` (read by the entry point and handed in).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tools.metrics import ToolStats
    from tools.postgres import Database
    from tools.result import ToolResult
    from tools.telemetry.series import HourBucket, ToolSummary


@runtime_checkable
class MetricsBackend(Protocol):
    """A metrics store: records every call (cheaply, batched), keeps the figures across
    processes, and reads them back (all-time per tool, and hour by hour)."""

    def record(self, result: ToolResult) -> None:
        """Queue one finished call (thread-safe, no I/O, never raises)."""
        ...

    def flush(self) -> None:
        """Write every call recorded so far now (raises when it cannot; nothing is lost)."""
        ...

    def compact(self) -> None:
        """Write now and drop the hours past the retention and beyond the bound on buckets."""
        ...

    def close(self) -> None:
        """Write what is left and stop; idempotent, never raises."""
        ...

    def all_stats(self) -> dict[str, ToolStats]:
        """All-time figures of every tool (and bucket), by name."""
        ...

    def stats(self, tool_name: str) -> ToolStats:
        """One tool's figures (zeros for a tool never called)."""
        ...

    def get_degraded(self, threshold: float = 0.7, min_calls: int = 5) -> list[str]:
        """Tools with at least ``min_calls`` calls whose success rate is below ``threshold``."""
        ...

    def series(
        self, tool_name: str, *, since: datetime | None = None, until: datetime | None = None
    ) -> list[HourBucket]:
        """The tool's hours with calls in ``[since, until)``, oldest first."""
        ...

    def summary(self, tool_name: str, *, since: datetime | None = None) -> ToolSummary:
        """The tool's calls, failures and latency percentiles since ``since``."""
        ...

    def __enter__(self) -> MetricsBackend:
        """The store itself (`close` on exit)."""
        ...

    def __exit__(self, *exc_info: object) -> None:
        """`close`."""
        ...


def open_metrics_store(
    path: str | os.PathLike[str],
    *,
    database_url: str | None = None,
    database: Database | None = None,
    **options: Any,
) -> MetricsBackend:
    """The metrics store an entry point should use.

    Args:
        path: The metrics file used when no database is given (the project's
            ``.tooldeck/metrics.json``).
        database_url: ``TOOLDECK_DATABASE_URL`` as the entry point read it: set, the figures
            live in that PostgreSQL database (``path`` is not used); None, in the file.
        database: An open :class:`~tools.postgres.Database` to share (instead of the URL).
        **options: Passed to the store (``flush_interval``, ``max_tools``, ``redact``,
            ``retention``, ``max_buckets``, ``clock``...).

    Raises:
        ValueError: an option is out of range, or the URL is not ``postgresql://``.
    """
    if database is not None or database_url:
        from tools.telemetry.postgres_store import PostgresMetricsStore

        return PostgresMetricsStore(database_url, database=database, **options)
    from tools.telemetry.store import MetricsStore

    return MetricsStore(path, **options)
