"""Run records: every agent run and pipeline run, kept so people can see them again.

The orchestrator writes a `RunRecord` when a run starts, pauses and ends; ``tooldeck runs
list`` / ``tooldeck runs show`` and the console read them; ``python -m orchestrator
--resume ID`` finds a paused run by its id. Records live behind the small `RunStore`
interface: `FileRunStore` (JSON files in the data directory, the default), or
`PostgresRunStore` (one PostgreSQL table every replica shares, ``TOOLDECK_DATABASE_URL``);
`run_store_from_env` picks one. Records are redacted (`redacted`) before they are stored.
"""

from tools.runs._redact import redacted
from tools.runs.model import (
    MAX_RESULT_CHARS,
    MAX_TOOL_CALLS,
    RUN_STATUSES,
    RecordedApproval,
    RecordedStep,
    RecordedToolCall,
    RunKind,
    RunRecord,
    RunStatus,
    bounded_arguments,
    bounded_text,
)
from tools.runs.postgres_store import PostgresRunStore
from tools.runs.store import (
    DEFAULT_MAX_AGE,
    DEFAULT_MAX_RUNS,
    FileRunStore,
    RunStore,
    RunStoreError,
    data_dir_from_env,
    run_store_from_env,
)

__all__ = [
    "DEFAULT_MAX_AGE",
    "DEFAULT_MAX_RUNS",
    "MAX_RESULT_CHARS",
    "MAX_TOOL_CALLS",
    "RUN_STATUSES",
    "FileRunStore",
    "PostgresRunStore",
    "RecordedApproval",
    "RecordedStep",
    "RecordedToolCall",
    "RunKind",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "RunStoreError",
    "bounded_arguments",
    "bounded_text",
    "data_dir_from_env",
    "redacted",
    "run_store_from_env",
]
