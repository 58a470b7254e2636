"""Aggregation of a user's enabled adapters per category, with caching (no HTTP here).

:class:`ContextAggregator` is what the HTTP app calls. It runs the adapters of the asked
categories in parallel, caches their results (per user, category and destination) while
the source is unchanged and the time-to-live lasts, reports each category's status on its
own (``ok``, ``partial``, ``error``, ``not_configured``, ``unknown_category``), and answers
finance queries from an index built once per cached snapshot.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from shared.adapters.base import AdapterResult, BaseAdapter, format_validation_error, utc_now
from shared.adapters.finance_query import FinanceIndex, FinanceQuery
from shared.adapters.registry import KNOWN_CATEGORIES, AdapterRegistry
from shared.context_service.config import AdapterEntry, ServiceConfig, UserConfig

if TYPE_CHECKING:
    from shared.modules import ModuleAdapters

__all__ = ["ContextAggregator", "UnknownUserError"]

logger = logging.getLogger(__name__)

AdapterClass = type[BaseAdapter[Any]]
MAX_CATEGORIES = 32


class UnknownUserError(LookupError):
    """No user by that id in the config; the message lists the known ids."""


@dataclass
class _Snapshot:
    cls: AdapterClass | None
    results: list[AdapterResult[Any]]
    records: list[Any]
    tokens: tuple[Hashable | None, ...]
    built_at: float
    ttl: float
    index: FinanceIndex | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class ContextAggregator:
    """Serves context per user and category from the configured adapters.

    Args:
        config: The validated service config.
        registry: Adapter classes by category/platform (default: the built-in ones).
        clock: Current aware datetime, used for "today" in payloads.
        monotonic: Seconds clock for cache ages.
        adapter_kwargs: Keyword arguments for every adapter constructor (``session``,
            ``sleep``, ``http_timeout``, ``max_attempts``).
        max_workers: Threads used to fetch categories in parallel.
        modules: Enabled modules (``shared.modules.ModuleAdapters``), served to every user
            in the categories where the user's config has no source; re-read from the
            module store on each request, so enabling or disabling needs no restart.
    """

    def __init__(
        self,
        config: ServiceConfig,
        *,
        registry: AdapterRegistry | None = None,
        clock: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
        adapter_kwargs: Mapping[str, Any] | None = None,
        max_workers: int = 8,
        modules: ModuleAdapters | None = None,
    ) -> None:
        self._config = config
        self._registry = registry if registry is not None else AdapterRegistry.with_builtin_adapters()
        self._modules = modules
        if modules is not None:
            self._registry = modules.registry_over(self._registry)
        self._clock = clock
        self._monotonic = monotonic
        self._adapter_kwargs = dict(adapter_kwargs or {})
        self._adapters: dict[AdapterClass, BaseAdapter[Any]] = {}
        self._cache: dict[tuple[str, str, str | None], _Snapshot] = {}
        self._key_locks: dict[tuple[str, str, str | None], threading.Lock] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="context")

    def close(self) -> None:
        """Stop the worker threads."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- public queries -----------------------------------------------------------------

    def user(self, user_id: str) -> UserConfig:
        """The config of ``user_id``.

        Raises:
            UnknownUserError: No such user.
        """
        user = self._config.users.get(user_id)
        if user is None:
            known = ", ".join(sorted(self._config.users)) or "none"
            raise UnknownUserError(f"unknown user_id {user_id[:64]!r}; known users: {known}")
        return self._with_modules(user)

    def _with_modules(self, user: UserConfig) -> UserConfig:
        """``user`` plus an entry per enabled module whose category the user has no source for."""
        if self._modules is None:
            return user
        configured = {entry.category for entry in user.adapters if entry.enabled}
        extra = [
            AdapterEntry(category=cls.category, platform=cls.platform)
            for cls in self._modules.adapters()
            if cls.category not in configured
        ]
        return user.model_copy(update={"adapters": [*user.adapters, *extra]}) if extra else user

    def context(
        self,
        user_id: str,
        categories: Sequence[str] | None = None,
        *,
        destination: str | None = None,
    ) -> dict[str, Any]:
        """Context for ``categories`` (default: every known and configured category).

        Unknown categories get ``unknown_category``, categories without an adapter get
        ``not_configured``; one failing adapter never fails the other categories.

        Raises:
            UnknownUserError: No such user.
        """
        user = self.user(user_id)
        wanted = list(dict.fromkeys(categories or self._all_categories(user)))[:MAX_CATEGORIES]
        now = self._clock()
        futures = {
            category: self._pool.submit(self._category, user_id, user, category, destination, now)
            for category in wanted
        }
        out: dict[str, Any] = {}
        for category, future in futures.items():
            try:
                out[category] = future.result()
            except Exception as exc:
                logger.exception("category %s failed for user %s", category, user_id)
                out[category] = _status("error", f"the {category} category failed ({type(exc).__name__})")
        return {
            "user_id": user_id,
            "generated_at": now,
            "timezone": user.timezone,
            "categories": out,
        }

    def finance_query(self, user_id: str, query: FinanceQuery) -> dict[str, Any]:
        """Answer a finance query over every enabled finance source of the user.

        Raises:
            UnknownUserError: No such user.
        """
        user = self.user(user_id)
        entries = _entries(user, "finance")
        if not entries:
            return _status("not_configured", "no finance source is configured for this user")
        snap = self._snapshot(user_id, user, "finance", entries, None)
        errors = _errors(snap.results)
        if len(errors) == len(snap.results):
            return {**_status("error", "; ".join(e["error"] for e in errors)), "errors": errors}
        with snap.lock:
            if snap.index is None:
                snap.index = FinanceIndex(snap.records)
            index = snap.index
        return {
            "status": "partial" if errors else "ok",
            "result": index.run(query),
            "errors": errors,
        }

    def warm_up(self) -> None:
        """Start reading every user's sources in the background, so first requests are fast.

        Parsing a large statement can take seconds; without this the first ``/context``
        call pays for it (and may exceed a client's timeout). Each source read logs one
        INFO summary line (records, file, time) or one WARNING with the reason it failed.
        Failures are only cached briefly, as for normal requests. Returns at once.
        """
        for user_id, user in self._config.users.items():
            for category in dict.fromkeys(entry.category for entry in user.adapters if entry.enabled):
                entries = _entries(user, category)
                self._pool.submit(self._snapshot, user_id, user, category, entries, None, log_level=logging.INFO)

    def check_config(self) -> list[str]:
        """Problems in the config that would only show at the first request, one per line.

        Every enabled adapter entry must name a platform the registry knows for its
        category, and its options (with the places and time zone the service adds) must
        be valid for that adapter. An empty list means the config is usable.
        """
        problems: list[str] = []
        for user_id, user in self._config.users.items():
            for index, entry in enumerate(user.adapters):
                if not entry.enabled:
                    continue
                where = f"users.{user_id}.adapters[{index}]"
                cls = self._registry.get(entry.category, entry.platform)
                if cls is None:
                    known = ", ".join(c.platform for c in self._registry.for_category(entry.category))
                    problems.append(
                        f"{where}: no {entry.platform!r} adapter for {entry.category}; available: {known or 'none'}"
                    )
                    continue
                try:
                    cls.Options.model_validate(self._options(entry, user, cls, None))
                except ValidationError as exc:
                    problems.append(f"{where} ({entry.category}/{entry.platform}): {format_validation_error(exc)}")
        return problems

    def health(self) -> dict[str, Any]:
        """Liveness plus the adapters the registry knows (no user data)."""
        return {
            "status": "ok",
            "users": len(self._config.users),
            "adapters": [cls(**self._adapter_kwargs).get_capabilities().to_dict() for cls in self._registry],
        }

    # -- internals ----------------------------------------------------------------------

    def _all_categories(self, user: UserConfig) -> list[str]:
        configured = [entry.category for entry in user.adapters if entry.enabled]
        return list(dict.fromkeys([*KNOWN_CATEGORIES, *configured]))

    def _category(
        self, user_id: str, user: UserConfig, category: str, destination: str | None, now: datetime
    ) -> dict[str, Any]:
        entries = _entries(user, category)
        if not entries:
            if category not in KNOWN_CATEGORIES and category not in self._registry.categories():
                known = ", ".join(KNOWN_CATEGORIES)
                return _status("unknown_category", f"unknown category {category[:40]!r}; known: {known}")
            return _status("not_configured", f"no {category} source is configured for this user")
        snap = self._snapshot(user_id, user, category, entries, destination)
        errors = _errors(snap.results)
        base: dict[str, Any] = {
            "platforms": [entry.platform for entry in entries],
            "fetched_at": max(result.fetched_at for result in snap.results),
            "record_count": len(snap.records),
            "errors": errors,
        }
        if len(errors) == len(snap.results) or snap.cls is None:
            return {**_status("error", "; ".join(e["error"] for e in errors)), **base}
        options = {
            "timezone": user.timezone,
            "days": user.calendar_days,
            "finance_days": user.finance_days,
            "large_expense": user.large_expense,
        }
        try:
            data = snap.cls.context_payload(snap.records, now=now, options=options)
        except Exception as exc:
            logger.exception("context payload of %s failed", category)
            return {
                **_status("error", f"cannot summarise {category} ({type(exc).__name__})"),
                **base,
            }
        status = "partial" if errors else "ok"
        reason = "; ".join(e["error"] for e in errors) if errors else None
        return {"status": status, "data": data, "reason": reason, **base}

    def _snapshot(
        self,
        user_id: str,
        user: UserConfig,
        category: str,
        entries: list[AdapterEntry],
        destination: str | None,
        *,
        log_level: int = logging.DEBUG,
    ) -> _Snapshot:
        classes = [self._registry.get(entry.category, entry.platform) for entry in entries]
        uses_destination = any(cls is not None and "destination" in cls.Options.model_fields for cls in classes)
        key = (
            user_id,
            category,
            (destination or user.default_destination) if uses_destination else None,
        )
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            configs = [
                self._options(entry, user, cls, destination) for entry, cls in zip(entries, classes, strict=True)
            ]
            tokens = tuple(
                self._adapter(cls).cache_token(config) if cls is not None else None
                for cls, config in zip(classes, configs, strict=True)
            )
            cached = self._cache.get(key)
            if cached is not None and cached.tokens == tokens and self._monotonic() - cached.built_at < cached.ttl:
                return cached
            results = []
            for entry, cls, config in zip(entries, classes, configs, strict=True):
                started = self._monotonic()
                results.append(self._run(entry, cls, config))
                _log_source(log_level, user_id, entry, results[-1], self._monotonic() - started)
            first = next((cls for cls in classes if cls is not None), None)
            ok_batches = [result.data for result in results if result.success]
            records = first.merge_records(ok_batches) if first is not None else []
            failed = any(not result.success for result in results)
            ttls = [entry.cache_ttl_seconds for entry in entries if entry.cache_ttl_seconds is not None]
            ttl = 0.0 if failed else min(ttls, default=self._config.cache_ttl_seconds)
            snap = _Snapshot(first, results, records, tokens, self._monotonic(), ttl)
            self._cache[key] = snap
            return snap

    def _adapter(self, cls: AdapterClass) -> BaseAdapter[Any]:
        with self._lock:
            adapter = self._adapters.get(cls)
            if adapter is None:
                adapter = self._adapters[cls] = cls(**self._adapter_kwargs)
            return adapter

    def _options(
        self,
        entry: AdapterEntry,
        user: UserConfig,
        cls: AdapterClass | None,
        destination: str | None,
    ) -> dict[str, Any]:
        options = dict(entry.options)
        if cls is None:
            return options
        fields = cls.Options.model_fields
        if "places" in fields and "places" not in options:
            options["places"] = self._config.places
        if "timezone" in fields and "timezone" not in options:
            options["timezone"] = user.timezone
        if "destination" in fields:
            chosen = destination or options.get("destination") or user.default_destination
            if chosen:
                options["destination"] = chosen
        return options

    def _run(self, entry: AdapterEntry, cls: AdapterClass | None, config: Mapping[str, Any]) -> AdapterResult[Any]:
        if cls is None:
            available = ", ".join(c.platform for c in self._registry.for_category(entry.category)) or "none"
            return AdapterResult(
                success=False,
                category=entry.category,
                platform=entry.platform,
                error=f"no {entry.platform!r} adapter for {entry.category}; available: {available}",
            )
        try:
            return self._adapter(cls).fetch(config)
        except Exception as exc:  # fetch must not raise; a broken adapter must not break others
            logger.exception("adapter %s/%s raised", entry.category, entry.platform)
            return AdapterResult(
                success=False,
                category=entry.category,
                platform=entry.platform,
                error=f"the {entry.platform} adapter failed unexpectedly ({type(exc).__name__})",
            )


_RECORD_NOUNS = {"calendar": "events", "finance": "transactions", "weather": "forecasts", "commute": "routes"}


def _log_source(level: int, user_id: str, entry: AdapterEntry, result: AdapterResult[Any], seconds: float) -> None:
    """One line per source read: what it held, or why it failed (never the records)."""
    path, url = entry.options.get("path"), entry.options.get("url") or entry.options.get("base_url")
    # A file's name, or only a URL's host: feed URLs often carry private tokens.
    name = str(path).rsplit("/", 1)[-1] if path else (urlsplit(str(url)).hostname or "") if url else ""
    source = f"{entry.category}/{entry.platform}" + (f" ({name})" if name else "")
    if result.success:
        noun = _RECORD_NOUNS.get(entry.category, "records")
        logger.log(
            level,
            "source %s for user %s: %d %s in %.0f ms",
            source,
            user_id,
            result.transformed_count,
            noun,
            seconds * 1000,
        )
    else:
        logger.log(
            max(level, logging.WARNING),
            "source %s for user %s failed: %s",
            source,
            user_id,
            result.error,
        )


def _entries(user: UserConfig, category: str) -> list[AdapterEntry]:
    return [entry for entry in user.adapters if entry.category == category and entry.enabled]


def _errors(results: Sequence[AdapterResult[Any]]) -> list[dict[str, Any]]:
    return [
        {"platform": result.platform, "error": result.error or "failed"} for result in results if not result.success
    ]


def _status(status: str, reason: str) -> dict[str, Any]:
    return {"status": status, "data": None, "reason": reason}


def jsonable(body: Any) -> Any:
    """``body`` as JSON-compatible data (used by the HTTP layer)."""
    return to_jsonable_python(body)
