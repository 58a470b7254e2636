"""Where a metrics contract test keeps its figures: a metrics file, or a PostgreSQL database.

`MetricsPlace.open` builds store objects over that one place (as several processes would);
`stored` and `stored_hours` read back what was written, as another process reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.telemetry import MetricsBackend, MetricsStore, PostgresMetricsStore, open_metrics_store

#: Options only the file store has (its lock and its log).
FILE_ONLY = ("compact_bytes", "lock_timeout")


@dataclass
class MetricsPlace:
    """One metrics file or one database, and the stores opened over it."""

    backend: str
    path: Path
    url: str | None
    made: list[MetricsBackend] = field(default_factory=list)

    def open(self, **options: Any) -> MetricsBackend:
        """A new store over this place (no background flusher unless ``flush_interval`` is given)."""
        options.setdefault("flush_interval", None)
        if self.url is not None:
            options = {k: v for k, v in options.items() if k not in FILE_ONLY}
        store = open_metrics_store(self.path, database_url=self.url, **options)
        self.made.append(store)
        return store

    def stored(self, **options: Any) -> dict[str, dict[str, Any]]:
        """Every entry's figures as written (not this process's unwritten ones), as dicts."""
        reader = self.open(**options)
        try:
            if isinstance(reader, PostgresMetricsStore):
                figures = reader.read_database()
            else:
                assert isinstance(reader, MetricsStore)
                figures = reader.read_file() if self.path.exists() else {}
            return {name: stats.to_dict() for name, stats in figures.items()}
        finally:
            reader.close()

    def stored_hours(self, tool: str) -> list[str]:
        """The hour keys kept for ``tool`` (past the retention too, until they are pruned)."""
        if self.url is None:
            import json

            return sorted(json.loads(self.path.read_text())["series"].get(tool, {}))
        import psycopg

        with psycopg.connect(self.url) as conn:
            rows = conn.execute(
                "SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24') FROM tooldeck_metrics_hours "
                "WHERE tool = %s ORDER BY hour",
                (tool,),
            ).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        for store in self.made:
            store.close()
