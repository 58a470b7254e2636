"""The PostgreSQL metrics tables: schema, the statements of a flush, rows to figures and back.

Three tables (component ``metrics`` of :mod:`tools.postgres.migrations`):

* ``tooldeck_metrics``: one row per tool (or bucket) with its all-time figures, the fields
  of :class:`~tools.metrics.ToolStats`; ``error_types`` is a ``jsonb`` object of counts.
* ``tooldeck_metrics_hours``: one row per (tool, UTC hour) with the fields of
  :class:`~tools.telemetry.HourBucket`; ``histogram`` is a ``bigint[]`` over
  :data:`~tools.telemetry.LATENCY_BOUNDS_MS` (and the slot of slower calls).
* ``tooldeck_metrics_flushes``: the id of every flush applied (a day long), so a flush
  retried after a commit whose answer was lost is not counted twice.

A flush adds its figures with ``INSERT ... ON CONFLICT DO UPDATE SET x = x + excluded.x``
(counts and histograms add, maxima and "last" fields keep the greater), rows in key order so
concurrent flushes take their row locks in the same order.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from tools.metrics import BUCKETS, UNKNOWN_TOOL_BUCKET, ToolStats
from tools.postgres import Migration
from tools.telemetry._buckets import Bucket, merge_series
from tools.telemetry._file import Figures
from tools.telemetry.series import HISTOGRAM_SLOTS, hour_key, hour_start

TOOLS = "tooldeck_metrics"
HOURS = "tooldeck_metrics_hours"
FLUSHES = "tooldeck_metrics_flushes"
#: ``pg_advisory_xact_lock`` key taken while new tools are admitted ("toolmtrc").
ADMISSION_LOCK_KEY = 0x746F6F6C6D747263
_NAME_LIMIT = 64
_STAMP_LIMIT = 64
_ERROR_LIMIT = 200
_FINITE = "{0} >= 0 AND {0} < 'Infinity'::float8"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

MIGRATIONS = (
    Migration(
        "per-tool figures, hourly buckets and applied flushes",
        f"""
        CREATE FUNCTION tooldeck_add_counts(a jsonb, b jsonb) RETURNS jsonb
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT coalesce(jsonb_object_agg(key, total), '{{}}'::jsonb)
            FROM (SELECT key, sum(value::bigint) AS total
                  FROM (SELECT * FROM jsonb_each_text(a) UNION ALL SELECT * FROM jsonb_each_text(b)) AS counts
                  GROUP BY key) AS summed
        $$;
        CREATE TABLE {TOOLS} (
            tool text COLLATE "C" PRIMARY KEY CHECK (char_length(tool) BETWEEN 1 AND {_NAME_LIMIT}),
            calls bigint NOT NULL CHECK (calls >= 0),
            successes bigint NOT NULL CHECK (successes >= 0),
            failures bigint NOT NULL CHECK (failures >= 0),
            total_duration_ms float8 NOT NULL CHECK ({_FINITE.format("total_duration_ms")}),
            success_duration_ms float8 NOT NULL CHECK ({_FINITE.format("success_duration_ms")}),
            error_types jsonb NOT NULL CHECK (jsonb_typeof(error_types) = 'object'),
            last_success text COLLATE "C" CHECK (char_length(last_success) <= {_STAMP_LIMIT}),
            last_failure text COLLATE "C" CHECK (char_length(last_failure) <= {_STAMP_LIMIT}),
            last_error text CHECK (char_length(last_error) <= {_ERROR_LIMIT}),
            last_error_type text CHECK (char_length(last_error_type) <= {_NAME_LIMIT}),
            updated_at timestamptz NOT NULL
        );
        CREATE TABLE {HOURS} (
            tool text COLLATE "C" NOT NULL CHECK (char_length(tool) BETWEEN 1 AND {_NAME_LIMIT}),
            hour timestamptz NOT NULL,
            calls bigint NOT NULL CHECK (calls >= 0),
            failures bigint NOT NULL CHECK (failures >= 0),
            duration_ms float8 NOT NULL CHECK ({_FINITE.format("duration_ms")}),
            max_ms float8 NOT NULL CHECK ({_FINITE.format("max_ms")}),
            error_types jsonb NOT NULL CHECK (jsonb_typeof(error_types) = 'object'),
            histogram bigint[] NOT NULL CHECK (cardinality(histogram) = {HISTOGRAM_SLOTS}),
            PRIMARY KEY (tool, hour)
        );
        CREATE INDEX {HOURS}_hour ON {HOURS} (hour);
        CREATE TABLE {FLUSHES} (
            id text PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX {FLUSHES}_applied_at ON {FLUSHES} (applied_at);
        """,  # noqa: S608 - constant names and numbers
    ),
)

_NEWER_FAILURE = (
    "excluded.last_failure IS NOT NULL AND (t.last_failure IS NULL OR excluded.last_failure >= t.last_failure)"
)
ADD_TOOLS = f"""
INSERT INTO {TOOLS} AS t (tool, calls, successes, failures, total_duration_ms, success_duration_ms, error_types,
                          last_success, last_failure, last_error, last_error_type, updated_at)
SELECT u.tool, u.calls, u.successes, u.failures, u.total, u.success, u.errors::jsonb,
       u.last_success, u.last_failure, u.last_error, u.last_error_type, now()
FROM unnest(%s::text[], %s::bigint[], %s::bigint[], %s::bigint[], %s::float8[], %s::float8[], %s::text[],
            %s::text[], %s::text[], %s::text[], %s::text[])
     AS u(tool, calls, successes, failures, total, success, errors, last_success, last_failure, last_error,
          last_error_type)
ORDER BY u.tool
ON CONFLICT (tool) DO UPDATE SET
    calls = t.calls + excluded.calls,
    successes = t.successes + excluded.successes,
    failures = t.failures + excluded.failures,
    total_duration_ms = t.total_duration_ms + excluded.total_duration_ms,
    success_duration_ms = t.success_duration_ms + excluded.success_duration_ms,
    error_types = tooldeck_add_counts(t.error_types, excluded.error_types),
    last_success = greatest(t.last_success, excluded.last_success),
    last_failure = greatest(t.last_failure, excluded.last_failure),
    last_error = CASE WHEN {_NEWER_FAILURE} THEN excluded.last_error ELSE t.last_error END,
    last_error_type = CASE WHEN {_NEWER_FAILURE} THEN excluded.last_error_type ELSE t.last_error_type END,
    updated_at = excluded.updated_at
"""  # noqa: S608 - constant table names
ADD_HOURS = f"""
INSERT INTO {HOURS} AS h (tool, hour, calls, failures, duration_ms, max_ms, error_types, histogram)
SELECT u.tool, u.hour, u.calls, u.failures, u.duration, u.slowest, u.errors::jsonb, u.histogram::bigint[]
FROM unnest(%s::text[], %s::timestamptz[], %s::bigint[], %s::bigint[], %s::float8[], %s::float8[], %s::text[],
            %s::text[])
     AS u(tool, hour, calls, failures, duration, slowest, errors, histogram)
ORDER BY u.tool, u.hour
ON CONFLICT (tool, hour) DO UPDATE SET
    calls = h.calls + excluded.calls,
    failures = h.failures + excluded.failures,
    duration_ms = h.duration_ms + excluded.duration_ms,
    max_ms = greatest(h.max_ms, excluded.max_ms),
    error_types = tooldeck_add_counts(h.error_types, excluded.error_types),
    histogram = ARRAY(
        SELECT coalesce(a, 0) + coalesce(b, 0)
        FROM unnest(h.histogram, excluded.histogram) WITH ORDINALITY AS slots(a, b, i)
        ORDER BY i
    )
"""  # noqa: S608 - constant table names
TOOL_COLUMNS = (
    "tool, calls, successes, failures, total_duration_ms, success_duration_ms, error_types, "
    "last_success, last_failure, last_error, last_error_type"
)
HOUR_COLUMNS = "hour, calls, failures, duration_ms, max_ms, error_types, histogram"
#: One tool's hours since a time, added up in the database: (hours, first hour, the sums).
WINDOW = f"""
WITH w AS (SELECT * FROM {HOURS} WHERE tool = %(tool)s AND hour >= %(low)s)
SELECT (SELECT count(*) FROM w), (SELECT min(hour) FROM w),
       (SELECT coalesce(sum(calls), 0)::bigint FROM w), (SELECT coalesce(sum(failures), 0)::bigint FROM w),
       (SELECT coalesce(sum(duration_ms), 0) FROM w), (SELECT coalesce(max(max_ms), 0) FROM w),
       (SELECT coalesce(jsonb_object_agg(k, n), '{{}}'::jsonb)
        FROM (SELECT e.key AS k, sum(e.value::bigint)::bigint AS n FROM w, jsonb_each_text(w.error_types) AS e
              GROUP BY e.key) AS errors),
       (SELECT array_agg(n ORDER BY i)
        FROM (SELECT s.i, sum(s.v)::bigint AS n FROM w, unnest(w.histogram) WITH ORDINALITY AS s(v, i)
              GROUP BY s.i) AS slots)
"""  # noqa: S608 - constant table names


class UnusableRowError(ValueError):
    """A row of the metrics tables holds something tooldeck never writes."""


def storable(figures: Figures) -> Figures:
    """``figures`` as the tables can hold them: every text valid UTF-8 without NUL and cut to
    its column's limit; a name no tool can have (too long, NUL, lone surrogates) counted as
    an unknown tool. ``figures`` itself when it is storable already (the common case)."""
    if all(_storable_stats(name, stats) for name, stats in figures.tools.items()) and all(
        _key(name) == name and all(_fits(kind, _NAME_LIMIT) for b in hours.values() for kind in b.error_types)
        for name, hours in figures.series.items()
    ):
        return figures
    out = Figures()
    for name, stats in figures.tools.items():
        key = _key(name)
        clean = ToolStats(
            calls=stats.calls,
            successes=stats.successes,
            failures=stats.failures,
            total_duration_ms=stats.total_duration_ms,
            success_duration_ms=stats.success_duration_ms,
            error_types=Counter({_text(kind, _NAME_LIMIT): count for kind, count in stats.error_types.items()}),
            last_success=_maybe(stats.last_success, _STAMP_LIMIT),
            last_failure=_maybe(stats.last_failure, _STAMP_LIMIT),
            last_error=_maybe(stats.last_error, _ERROR_LIMIT),
            last_error_type=_maybe(stats.last_error_type, _NAME_LIMIT),
        )
        out.tools.setdefault(key, ToolStats()).merge(clean)
    for name, hours in figures.series.items():
        cleaned: dict[str, Bucket] = {}
        for hour, bucket in hours.items():
            copy = Bucket()
            copy.merge(bucket)
            copy.error_types = {_text(kind, _NAME_LIMIT): n for kind, n in bucket.error_types.items()}
            cleaned[hour] = copy
        merge_series(out.series, {_key(name): cleaned})
    return out


def _storable_stats(name: str, stats: ToolStats) -> bool:
    limits = (
        (stats.last_success, _STAMP_LIMIT),
        (stats.last_failure, _STAMP_LIMIT),
        (stats.last_error, _ERROR_LIMIT),
        (stats.last_error_type, _NAME_LIMIT),
    )
    return (
        _key(name) == name
        and all(_fits(kind, _NAME_LIMIT) for kind in stats.error_types)
        and all(value is None or _fits(value, limit) for value, limit in limits)
    )


def _fits(value: str, limit: int) -> bool:
    return len(value) <= limit and not _UNSTORABLE.search(value)


def _key(name: str) -> str:
    if name in BUCKETS or (0 < len(name) <= _NAME_LIMIT and not _UNSTORABLE.search(name)):
        return name
    return UNKNOWN_TOOL_BUCKET


def _text(value: str, limit: int) -> str:
    return _UNSTORABLE.sub("\ufffd", value[:limit])


def _maybe(value: str | None, limit: int) -> str | None:
    return None if value is None else _text(value, limit)


def tool_columns(tools: Mapping[str, ToolStats]) -> list[list[Any]]:
    """The parameters of `ADD_TOOLS` (one array per column)."""
    names = sorted(tools)
    rows = [tools[name] for name in names]
    return [
        names,
        [s.calls for s in rows],
        [s.successes for s in rows],
        [s.failures for s in rows],
        [s.total_duration_ms for s in rows],
        [s.success_duration_ms for s in rows],
        [json.dumps(dict(s.error_types)) for s in rows],
        [s.last_success for s in rows],
        [s.last_failure for s in rows],
        [s.last_error for s in rows],
        [s.last_error_type for s in rows],
    ]


def hour_columns(series: Mapping[str, Mapping[str, Bucket]]) -> list[list[Any]]:
    """The parameters of `ADD_HOURS` (one array per column)."""
    keys = sorted((tool, hour) for tool, hours in series.items() for hour in hours)
    buckets = [series[tool][hour] for tool, hour in keys]
    starts = {hour: hour_start(hour) for hour in {hour for _, hour in keys}}  # a few, however many tools
    return [
        [tool for tool, _ in keys],
        [starts[hour] for _, hour in keys],
        [b.calls for b in buckets],
        [b.failures for b in buckets],
        [b.duration_ms for b in buckets],
        [b.max_ms for b in buckets],
        [json.dumps(b.error_types) for b in buckets],
        ["{" + ",".join(str(n) for n in b.histogram) + "}" for b in buckets],
    ]


def stats_from_row(row: Iterable[Any]) -> tuple[str, ToolStats]:
    """``(tool, figures)`` of a ``tooldeck_metrics`` row (`TOOL_COLUMNS`).

    Raises:
        UnusableRowError: the row's error counts are not counts.
    """
    tool, calls, successes, failures, total, success, errors, last_ok, last_bad, message, kind = row
    return tool, ToolStats(
        calls=calls,
        successes=successes,
        failures=failures,
        total_duration_ms=total,
        success_duration_ms=success,
        error_types=Counter(counts(errors, f"tool {str(tool)[:64]!r}")),
        last_success=last_ok,
        last_failure=last_bad,
        last_error=message,
        last_error_type=kind,
    )


def bucket_from_row(row: Iterable[Any], what: str) -> tuple[str, Bucket]:
    """``(hour key, bucket)`` of a ``tooldeck_metrics_hours`` row (`HOUR_COLUMNS`).

    Raises:
        UnusableRowError: its error counts or histogram are not counts.
    """
    hour, calls, failures, duration, slowest, errors, histogram = row
    bucket = Bucket()
    bucket.calls, bucket.failures, bucket.duration_ms, bucket.max_ms = calls, failures, duration, slowest
    bucket.error_types = counts(errors, what)
    bucket.histogram = slots(histogram, what)
    return hour_key(hour), bucket


def counts(value: object, what: str) -> dict[str, int]:
    """A ``jsonb`` object of counts as a dict (zero counts left out)."""
    if not isinstance(value, dict) or not all(type(n) is int and n >= 0 for n in value.values()):
        raise UnusableRowError(f"the error counts of {what} are not counts")
    return {str(kind): n for kind, n in value.items() if n > 0}


def slots(value: object, what: str) -> list[int]:
    """A histogram array as a list of :data:`HISTOGRAM_SLOTS` counts."""
    if isinstance(value, list) and len(value) == HISTOGRAM_SLOTS and all(type(n) is int and n >= 0 for n in value):
        return [int(n) for n in value]
    raise UnusableRowError(f"the latency histogram of {what} is not {HISTOGRAM_SLOTS} counts")


def utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (naive means UTC)."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
