"""Serve a directory of subprocess tool binaries as tools: :class:`ToolExecutorService`.

The service scans ``bin_dir`` at :meth:`~ToolExecutorService.start` (asking every executable
for ``--schema`` concurrently, with answers cached by path, size and mtime), then polls the
directory every ``poll_interval`` seconds for added, changed and removed binaries. Every call
is its own process with a per-call timeout; :meth:`~ToolExecutorService.stop` kills the process
group of every running child. The binary contract is described in
:mod:`tools.external._binary_contract`.

Binaries get the environment every external child gets (:mod:`tools.external._environment`):
the parent's base variables (``PATH``, ``HOME``, locale, ``TZ``) and ``pass_env``, then
``TOOLDECK_TOOL_MODE=subprocess``, then the binary's own secrets (``secret_env``, or the
``auth`` variable of a config given to :meth:`~ToolExecutorService.add_tool`); ``--schema``
probes get no secret. Their output, errors and metadata are masked of those secrets and of
every secret-looking value of the parent.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from tools.errors import ToolDefinitionError
from tools.external._binary_contract import (
    MODE_VALUE,
    MODE_VARIABLE,
    BinaryState,
    OutputChecker,
    Probe,
    call_binary,
    derive_name,
    probe_binary,
)
from tools.external._environment import ChildEnvironment
from tools.external._process import ProcessRunner, RunnerClosedError
from tools.external._schema_cache import Key, SchemaCache
from tools.external.binary_tool import BinaryTool
from tools.external.config import ActionSpec, ToolConfig
from tools.result import ToolResult

if TYPE_CHECKING:
    from tools.registry import LocalToolRegistry

logger = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT = 300.0


@dataclass(frozen=True)
class BinaryStatus:
    """The state of one binary as the service sees it.

    Attributes:
        name: Tool name (from ``--schema`` or the file name).
        path: Absolute path of the executable.
        state: ``ready`` (schema known), ``schema-unknown`` (runnable with free-form
            arguments), ``missing-binary`` (the file is gone) or ``broken`` (cannot run, bad
            ``--schema`` document, or a name clash).
        message: Why, for the last three states.
        calls: Calls made to this tool since the service was built (any path: the tool,
            the adapter, a registry).
        failures: How many of those returned an error.
        last_error: ``"<type>: <message>"`` of the latest failed call, cut to 300 characters.
        avg_duration_ms: Mean wall-clock time of a call (None before the first).
    """

    name: str
    path: str
    state: BinaryState
    message: str | None = None
    calls: int = 0
    failures: int = 0
    last_error: str | None = None
    avg_duration_ms: float | None = None


@dataclass(frozen=True)
class ScanChanges:
    """What one scan found, by absolute path."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


@dataclass
class _Entry:
    path: str
    key: Key | None
    probe: Probe
    name: str
    state: BinaryState
    message: str | None = None
    tool: BinaryTool | None = None
    checker: OutputChecker | None = None


@dataclass
class _Stats:
    """Per-tool call counts, kept by the service itself (no metrics store needed)."""

    calls: int = 0
    failures: int = 0
    total_ms: float = 0.0
    last_error: str | None = None

    def record(self, result: ToolResult, elapsed_ms: float) -> None:
        self.calls += 1
        self.total_ms += elapsed_ms
        if result.error is not None:
            self.failures += 1
            self.last_error = f"{result.error.type}: {result.error.message}"[:300]


class ToolExecutorService:
    """Binaries in a directory, exposed as :class:`BinaryTool` instances.

    Args:
        bin_dir: Directory to scan (non-recursive). Hidden files and files without the
            executable bit are ignored.
        env: The parent environment (pass ``os.environ`` at the entry point; default: only
            ``PATH=os.defpath``). Children get its base variables (``PATH``, ``HOME``,
            locale, ``TZ``) and ``pass_env``, ``TOOLDECK_TOOL_MODE=subprocess``, and their
            own secrets; its secret-looking values are masked in everything they return.
        pass_env: More variable names of ``env`` every binary gets (not secrets).
        secret_env: Tool name -> names of the variables of ``env`` holding that binary's
            secrets: only that binary gets them, and they are masked in its output.
        cache_path: JSON file caching ``--schema`` answers across runs (optional).
        call_timeout: Default seconds per call (5 minutes).
        schema_timeout: Seconds a binary gets to answer ``--schema``.
        poll_interval: Seconds between directory polls; 0 disables watching (call
            :meth:`rescan` yourself).
        scan_workers: Binaries probed in parallel.
        max_output_bytes: stdout cap per call; more is an error and kills the process.
        on_change: Called (from the watcher thread) with the :class:`ScanChanges` of every
            scan that changed something; exceptions are logged.
        runner: Process runner (injectable to share with other adapters).
    """

    adapter_type = "binary"

    def __init__(
        self,
        bin_dir: str | os.PathLike[str],
        *,
        env: Mapping[str, str] | None = None,
        pass_env: Collection[str] = (),
        secret_env: Mapping[str, Collection[str]] | None = None,
        cache_path: str | os.PathLike[str] | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        schema_timeout: float = 5.0,
        poll_interval: float = 0.5,
        scan_workers: int = 16,
        max_output_bytes: int = 10_000_000,
        on_change: Callable[[ScanChanges], None] | None = None,
        runner: ProcessRunner | None = None,
    ) -> None:
        self._dir = os.path.abspath(os.fspath(bin_dir))
        self._child = ChildEnvironment(env if env is not None else {"PATH": os.defpath}, pass_env=pass_env)
        self._secret_env = {name: frozenset(names) for name, names in (secret_env or {}).items()}
        self._probe_env = self._child.build({MODE_VARIABLE: MODE_VALUE})
        self._cache = SchemaCache(os.fspath(cache_path) if cache_path is not None else None)
        self._call_timeout = call_timeout
        self._schema_timeout = schema_timeout
        self._poll_interval = poll_interval
        self._workers = max(1, scan_workers)
        self._max_output = max_output_bytes
        self._on_change = on_change
        self._runner = runner or ProcessRunner()
        self._lock = threading.RLock()
        self._scan_lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._stats: dict[str, _Stats] = {}
        self._configs: dict[str, str] = {}
        self._config_secrets: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False
        self._bound: list[tuple[LocalToolRegistry, set[str]]] = []

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> ToolExecutorService:
        """Scan the directory (blocking) and start watching it; returns ``self``.

        Raises:
            NotADirectoryError: ``bin_dir`` is not a directory.
        """
        if not os.path.isdir(self._dir):
            raise NotADirectoryError(f"tool binary directory {self._dir!r} does not exist")
        with self._lock:
            if self._started:
                return self
            self._runner.reopen()
            self._stop.clear()
            self._started = True
        self._cache.load()
        self.rescan()
        if self._poll_interval > 0:
            self._thread = threading.Thread(target=self._watch, name="tooldeck-binary-watch", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching and kill the process group of every running call (idempotent)."""
        self._stop.set()
        self._runner.kill_all(close=True)
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(5.0)
        with self._lock:
            self._started = False
        self._cache.save()

    def __enter__(self) -> ToolExecutorService:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- queries ---------------------------------------------------------------------------

    def tools(self) -> list[BinaryTool]:
        """The runnable tools (``ready`` and ``schema-unknown``), sorted by name."""
        with self._lock:
            found = [e.tool for e in self._entries.values() if e.tool is not None]
        return sorted(found, key=lambda t: t.name)

    def tool(self, name: str) -> BinaryTool | None:
        """The runnable tool called ``name``, or None."""
        return next((t for t in self.tools() if t.name == name), None)

    def status(self) -> dict[str, BinaryStatus]:
        """The status of every binary seen since start, by tool name, with its call counts."""
        with self._lock:
            entries = list(self._entries.values())
            stats = {name: (s.calls, s.failures, s.total_ms, s.last_error) for name, s in self._stats.items()}
        out: dict[str, BinaryStatus] = {}
        for e in sorted(entries, key=lambda e: (e.state == "missing-binary", e.path)):
            if e.name in out:
                continue
            calls, failures, total_ms, last_error = stats.get(e.name, (0, 0, 0.0, None))
            average = total_ms / calls if calls else None
            out[e.name] = BinaryStatus(e.name, e.path, e.state, e.message, calls, failures, last_error, average)
        return out

    def bind_registry(self, registry: LocalToolRegistry) -> None:
        """Keep ``registry`` in step with the directory: register the runnable tools now and
        re-register, add or unregister them after every scan that changes something.

        Only names this service registered are ever replaced or removed; a clash with a tool
        registered by someone else is logged and that binary is left out.
        """
        with self._lock:
            self._bound.append((registry, set()))
        self._sync_bound()

    def _sync_bound(self) -> None:
        tools = {t.name: t for t in self.tools()}
        with self._lock:
            bound = list(self._bound)
        for registry, mine in bound:
            for name in sorted(mine - tools.keys()):
                registry.unregister(name)
                mine.discard(name)
            for name, tool in tools.items():
                if registry.get_tool(name) is tool:
                    continue
                if name in registry and name not in mine:
                    logger.warning("binary tool %r clashes with a registered tool; skipped", name)
                    continue
                registry.register(tool, replace=True)
                mine.add(name)

    @property
    def running_calls(self) -> int:
        """How many binary processes are running right now."""
        return self._runner.running

    # -- ToolAdapter -----------------------------------------------------------------------

    def add_tool(self, config: ToolConfig) -> None:
        """Know ``config``: calls with ``tool_id=config.id`` run the binary named
        ``config.id``, or else the one named ``config.name`` (binaries are found by
        scanning); that binary gets the ``config.auth`` variable as its secret."""
        with self._lock:
            self._configs[config.id] = config.name
            if config.auth is not None:
                self._config_secrets[config.id] = config.auth.env_var

    def action_specs(self, config: ToolConfig) -> list[ActionSpec]:
        """The binary's one action: its ``--schema`` description and ``input_schema``.

        Raises:
            ToolDefinitionError: no runnable binary is named ``config.id`` or ``config.name``.
        """
        tool = self.tool(config.id) or self.tool(config.name)
        if tool is None:
            known = ", ".join(t.name for t in self.tools()) or "none"
            raise ToolDefinitionError(
                f"no runnable tool binary named {config.id!r} or {config.name!r} in {self._dir}; "
                f"install it there and start the service (or rescan) first. Available: {known}."
            )
        return [ActionSpec("default", tool.description, tool.input_schema())]

    def execute(
        self,
        tool_id: str,
        action: str | None,
        params: Mapping[str, Any],
        timeout: float | None = None,
    ) -> ToolResult:
        """Run binary ``tool_id`` (its tool name, or the id of a config given to
        :meth:`add_tool`) with ``params``; ``action`` is ignored.

        Arguments are not validated against ``input_schema`` here (the :class:`BinaryTool`
        does that); see :func:`~tools.external._binary_contract.call_binary` for how output
        and failures map to results.
        """
        entry = self._runnable(tool_id)
        if entry is None:
            with self._lock:
                alias = self._configs.get(tool_id)
            entry = self._runnable(alias) if alias is not None else None
        if entry is None:
            known = sorted(t.name for t in self.tools())
            return ToolResult.failure(
                "unknown_tool",
                f"No binary tool named {tool_id!r}; available: {', '.join(known) or 'none'}.",
                details={"available": known},
            )
        return self._call(entry, dict(params), timeout)

    def _runnable(self, name: str) -> _Entry | None:
        with self._lock:
            return next((e for e in self._entries.values() if e.name == name and e.tool), None)

    def is_available(self, config: ToolConfig) -> bool:
        """True when a runnable binary is named ``config.id`` or ``config.name``."""
        names = {t.name for t in self.tools()}
        return config.id in names or config.name in names

    def _secrets_of(self, name: str) -> frozenset[str]:
        """The secret variables of the binary called ``name`` (``secret_env``, and the
        ``auth`` of the configs that run it)."""
        with self._lock:
            configs = [(i, self._configs[i], var) for i, var in self._config_secrets.items()]
        found = set(self._secret_env.get(name, ()))
        for tool_id, alias, variable in configs:
            if tool_id == name or (alias == name and self._runnable(tool_id) is None):
                found.add(variable)
        return frozenset(found)

    def _call(self, entry: _Entry, params: dict[str, Any], timeout: float | None) -> ToolResult:
        path, name, checker = entry.path, entry.name, entry.checker
        secrets = self._secrets_of(name)
        started = time.perf_counter()
        result = call_binary(
            path,
            params,
            runner=self._runner,
            env=self._child.build({MODE_VARIABLE: MODE_VALUE}, secrets),
            timeout=timeout if timeout is not None else self._call_timeout,
            max_output_bytes=self._max_output,
            label=name,
        )
        if checker is not None:
            result = checker.check(result, name)
        result = self._child.redactor(secrets).result(result)
        with self._lock:
            self._stats.setdefault(name, _Stats()).record(result, (time.perf_counter() - started) * 1000)
        if ((result.error and result.error.details) or {}).get("reason") == "missing-binary":
            self._mark_missing(path)
            self._sync_bound()
        return result

    # -- scanning --------------------------------------------------------------------------

    def _watch(self) -> None:
        while not self._stop.wait(self._poll_interval):
            try:
                changes = self.rescan()
            except Exception:
                logger.exception("scanning %s failed", self._dir)
                continue
            if not changes:
                continue
            if self._on_change is not None:
                try:
                    self._on_change(changes)
                except Exception:
                    logger.exception("on_change callback failed")

    def _list_dir(self) -> dict[str, Key]:
        found: dict[str, Key] = {}
        try:
            items = list(os.scandir(self._dir))
        except OSError as exc:
            logger.warning("cannot list %s: %s", self._dir, exc)
            return found
        for item in items:
            if item.name.startswith("."):
                continue
            try:
                st = item.stat()
            except OSError:
                continue
            if item.is_file() and os.access(item.path, os.X_OK):
                found[os.path.abspath(item.path)] = (st.st_size, st.st_mtime_ns)
        return found

    def rescan(self) -> ScanChanges:
        """Compare the directory with what is known and probe new or changed binaries.

        Calls in flight are never interrupted: they run their own process and keep it.
        """
        with self._scan_lock:
            current = self._list_dir()
            with self._lock:
                known = {p: e.key for p, e in self._entries.items() if e.state != "missing-binary"}
            added = sorted(p for p in current if p not in known)
            changed = sorted(p for p in current if p in known and known[p] != current[p])
            removed = sorted(p for p in known if p not in current)
            todo = [*added, *changed]
            probes = self._probe_all({p: current[p] for p in todo})
            with self._lock:
                for path in removed:
                    self._mark_missing(path)
                for path, (key, probe) in probes.items():
                    self._entries[path] = _Entry(path, key, probe, "", probe.state, probe.message)
                self._assign_names()
            self._cache.save()
            # Paths whose probe must be retried (busy files) do not count as seen yet.
            changes = ScanChanges([p for p in added if p in probes], [p for p in changed if p in probes], removed)
        if changes:
            self._sync_bound()
        return changes

    def _probe_all(self, todo: dict[str, Key]) -> dict[str, tuple[Key, Probe]]:
        results: dict[str, tuple[Key, Probe]] = {}
        pending: dict[str, Key] = {}
        for path, key in todo.items():
            cached = self._cache.get(path, key)
            if cached is not None:
                results[path] = (key, cached)
            else:
                pending[path] = key
        if not pending:
            return results
        workers = min(self._workers, len(pending))
        with ThreadPoolExecutor(workers, thread_name_prefix="tooldeck-probe") as pool:
            futures = {p: pool.submit(self._probe_one, p) for p in pending}
        for path, future in futures.items():
            probe = future.result()
            if probe is None:
                continue
            results[path] = (pending[path], probe)
            self._cache.put(path, pending[path], probe)
        return results

    def _probe_one(self, path: str) -> Probe | None:
        try:
            return probe_binary(path, self._runner, self._probe_env, self._schema_timeout)
        except FileNotFoundError:
            return None
        except RunnerClosedError:
            return None
        except OSError as exc:
            if exc.errno == errno.ETXTBSY:
                return None
            return Probe("broken", message=f"cannot execute: {exc}")

    def _mark_missing(self, path: str) -> None:
        with self._lock:
            entry = self._entries.get(path)
            if entry is None or entry.state == "missing-binary":
                return
            entry.state, entry.key, entry.tool = "missing-binary", None, None
            entry.message = "the file was removed"
        self._cache.drop(path)

    def _assign_names(self) -> None:
        """Give every live entry its name and tool; the later of two clashing paths is broken."""
        taken: dict[str, str] = {}
        for path in sorted(self._entries):
            entry = self._entries[path]
            if entry.state == "missing-binary":
                continue
            schema = entry.probe.schema
            name = (schema.name if schema and schema.name else None) or derive_name(os.path.basename(path))
            entry.name = name
            if name in taken:
                entry.state, entry.tool = "broken", None
                entry.message = f"tool name {name!r} is already used by {taken[name]}"
                continue
            taken[name] = path
            entry.state, entry.message = entry.probe.state, entry.probe.message
            if entry.state == "broken":
                entry.tool = None
            elif entry.tool is None or entry.tool.name != name:
                entry.tool = self._make_tool(entry)

    def _make_tool(self, entry: _Entry) -> BinaryTool:
        schema = entry.probe.schema
        output_schema = schema.output_schema if schema else None
        entry.checker = OutputChecker(output_schema) if output_schema is not None else None

        def invoke(params: dict[str, Any]) -> ToolResult:
            return self._call(entry, params, None)

        return BinaryTool(
            name=entry.name,
            description=schema.description if schema else "",
            version=schema.version if schema else "0.0.0",
            parameters=schema.input_schema if schema else None,
            output_schema=output_schema,
            invoke=invoke,
            path=entry.path,
            tags=schema.tags if schema else (),
        )
