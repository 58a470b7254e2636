"""The adapter contract: :class:`BaseAdapter`, :class:`AdapterResult`, :class:`AdapterError`.

An adapter turns one user-owned data source (an ``.ics`` file, a bank statement, a weather
API) into a list of canonical records of one type ``T``:

``fetch_raw(config)`` reads the source, ``transform(raw)`` turns it into records, and
``fetch(config)`` runs both and wraps the outcome in an :class:`AdapterResult`; ``fetch``
never raises. ``normalize_for_tools(data)`` is a classmethod that turns the category's
context payload (JSON, as the context service serves it) into the compact dict a tool
shows the model, so a caller needs no per-category switch and no adapter instance.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import to_jsonable_python

if TYPE_CHECKING:
    import requests

__all__ = [
    "AdapterCapabilities",
    "AdapterError",
    "AdapterOptions",
    "AdapterResult",
    "BaseAdapter",
    "format_validation_error",
    "utc_now",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
OptionsT = TypeVar("OptionsT", bound="AdapterOptions")


def format_validation_error(exc: ValidationError) -> str:
    """One line per problem, ``field.path: message``, without pydantic's URLs or inputs."""
    problems = []
    for err in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def utc_now() -> datetime:
    """The current time as an aware UTC datetime (the default adapter clock)."""
    return datetime.now(timezone.utc)


class AdapterError(Exception):
    """An expected failure of a data source, with a message safe to show to users.

    Args:
        message: What is wrong, e.g. ``"amount 'abc' is not a number"``.
        source: The file name (never a full URL with credentials) the problem is in.
        line: The 1-based line number in ``source``, when known.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.message = message
        self.source = source
        self.line = line
        super().__init__(self.describe())

    def describe(self) -> str:
        """The message prefixed with ``"<source> line <n>: "`` where those are known."""
        where = self.source or ""
        if self.line is not None:
            where = f"{where} line {self.line}".strip()
        return f"{where}: {self.message}" if where else self.message


class AdapterOptions(BaseModel):
    """Base of every adapter's options model; unknown keys are rejected (typos surface)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class AdapterCapabilities:
    """What an adapter can do, for listings and health pages.

    Attributes:
        category: The context category the adapter feeds (``"calendar"``, ``"finance"``...).
        platform: The source kind (``"ics"``, ``"csv"``, ``"open-meteo"``...).
        description: One line about the source.
        offline: True when the adapter reads local files and needs no network.
        options: Names of the options the adapter accepts in its config.
    """

    category: str
    platform: str
    description: str
    offline: bool
    options: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict."""
        return {
            "category": self.category,
            "platform": self.platform,
            "description": self.description,
            "offline": self.offline,
            "options": list(self.options),
        }


@dataclass(frozen=True, slots=True)
class AdapterResult(Generic[T]):
    """The outcome of one :meth:`BaseAdapter.fetch`: records or an error, never an exception.

    Attributes:
        success: True when the source was read and transformed.
        category: The adapter's category.
        platform: The adapter's platform.
        data: The canonical records (empty on failure).
        fetched_at: When the fetch finished (aware UTC).
        error: A user-facing reason when ``success`` is False.
        raw_count: How many raw items the source held (rows, VEVENTs, transactions).
        transformed_count: How many records came out of ``transform``.
        metadata: Extra facts about the source (file name, account, time zone...).
    """

    success: bool
    category: str
    platform: str
    data: list[T] = field(default_factory=list)
    fetched_at: datetime = field(default_factory=utc_now)
    error: str | None = None
    raw_count: int = 0
    transformed_count: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict (Decimal -> string, datetime -> ISO 8601)."""
        out: dict[str, Any] = to_jsonable_python(
            {
                "success": self.success,
                "category": self.category,
                "platform": self.platform,
                "data": self.data,
                "fetched_at": self.fetched_at,
                "error": self.error,
                "raw_count": self.raw_count,
                "transformed_count": self.transformed_count,
                "metadata": self.metadata,
            }
        )
        return out


class BaseAdapter(ABC, Generic[T]):
    """Base class of every data-source adapter, generic over its record type ``T``.

    Subclasses set ``category``, ``platform``, ``description``, ``offline`` and
    ``Options`` (a pydantic model of the config keys they accept), and implement
    :meth:`fetch_raw` and :meth:`transform`. Collaborators arrive by keyword.

    Args:
        session: The ``requests.Session`` used by adapters that speak HTTP (one is created
            lazily when omitted).
        clock: Returns the current aware datetime; tests pass a fixed one.
        sleep: Used between HTTP retries; tests pass a no-op.
        http_timeout: Seconds allowed for each HTTP request.
        max_attempts: HTTP attempts (first try included) for retryable failures.
    """

    category: ClassVar[str] = ""
    platform: ClassVar[str] = ""
    description: ClassVar[str] = ""
    offline: ClassVar[bool] = True
    Options: ClassVar[type[AdapterOptions]] = AdapterOptions

    def __init__(
        self,
        *,
        session: requests.Session | None = None,
        clock: Callable[[], datetime] = utc_now,
        sleep: Callable[[float], None] = time.sleep,
        http_timeout: float = 10.0,
        max_attempts: int = 3,
    ) -> None:
        self._session = session
        self._clock = clock
        self._sleep = sleep
        self._http_timeout = http_timeout
        self._max_attempts = max(1, max_attempts)

    # -- the pipeline -------------------------------------------------------------------

    @abstractmethod
    def fetch_raw(self, config: Mapping[str, Any]) -> Any:
        """Read the source described by ``config``; raise :class:`AdapterError` on failure."""

    @abstractmethod
    def transform(self, raw: Any) -> list[T]:
        """Turn what :meth:`fetch_raw` returned into records; raise :class:`AdapterError`."""

    def count_raw(self, raw: Any) -> int:
        """How many raw items ``raw`` holds (``len(raw)`` when it has one, else 0)."""
        try:
            return len(raw)
        except TypeError:
            return 0

    def fetch(self, config: Mapping[str, Any]) -> AdapterResult[T]:
        """Fetch and transform the source; never raises.

        Malformed sources (a broken file, an HTTP error, a bad option) come back as
        ``success=False`` with ``error`` naming the file and line where known. Any other
        exception is logged with its traceback and reported by type only, so that
        internals and secrets do not leak into results.
        """
        try:
            raw = self.fetch_raw(config)
            records = self.transform(raw)
        except AdapterError as exc:
            return self._failure(exc.describe())
        except ImportError as exc:
            return self._failure(
                f"the {self.platform} adapter needs the 'context' extra "
                f"(pip install -e '.[context]'); {exc.name or 'a parser'} is not installed"
            )
        except Exception as exc:
            logger.exception("adapter %s/%s failed", self.category, self.platform)
            return self._failure(f"the {self.platform} adapter failed unexpectedly ({type(exc).__name__})")
        return AdapterResult(
            success=True,
            category=self.category,
            platform=self.platform,
            data=records,
            fetched_at=self._clock(),
            raw_count=self.count_raw(raw),
            transformed_count=len(records),
            metadata=self.result_metadata(raw),
        )

    def result_metadata(self, raw: Any) -> dict[str, Any]:
        """Extra facts about a successful fetch for :attr:`AdapterResult.metadata`."""
        return {}

    def _failure(self, message: str) -> AdapterResult[T]:
        return AdapterResult(
            success=False,
            category=self.category,
            platform=self.platform,
            fetched_at=self._clock(),
            error=message,
        )

    # -- helpers for subclasses ---------------------------------------------------------

    def http_session(self) -> requests.Session:
        """The injected ``requests.Session``, or one created on first use."""
        if self._session is None:
            import requests

            self._session = requests.Session()
        return self._session

    def parse_options(self, config: Mapping[str, Any], model: type[OptionsT]) -> OptionsT:
        """Validate ``config`` against ``model``; raise :class:`AdapterError` naming the keys."""
        try:
            return model.model_validate(dict(config))
        except ValidationError as exc:
            raise AdapterError(
                f"invalid options for {self.category}/{self.platform}: {format_validation_error(exc)}"
            ) from None

    def cache_token(self, config: Mapping[str, Any]) -> Hashable | None:
        """A value that changes when the source changes (e.g. a file's mtime), or None.

        The context service keeps a cached result while the token is unchanged and its
        time-to-live has not run out; None means "rely on the time-to-live alone".
        """
        return None

    def get_capabilities(self) -> AdapterCapabilities:
        """What this adapter is and which options it takes."""
        return AdapterCapabilities(
            category=self.category,
            platform=self.platform,
            description=self.description,
            offline=self.offline,
            options=tuple(self.Options.model_fields),
        )

    # -- category hooks (classmethods: callable without an instance) --------------------

    @classmethod
    def merge_records(cls, batches: Sequence[Sequence[T]]) -> list[T]:
        """Merge the records of several adapters of this category (default: concatenate)."""
        return [record for batch in batches for record in batch]

    @classmethod
    def context_payload(cls, records: Sequence[T], *, now: datetime, options: Mapping[str, Any]) -> Any:
        """The JSON payload the context service serves for this category.

        Default: every record, JSON-compatible. Categories with many records override it
        to serve a bounded window plus precomputed totals.
        """
        return to_jsonable_python(list(records))

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        """Shape a category payload (as served by the context service) for a tool.

        Default: an empty dict. Each adapter family overrides it. Implementations accept
        any JSON value and raise ``ValueError``/``TypeError``/``KeyError`` on a payload
        of the wrong shape; callers turn that into an "unavailable" status.
        """
        return {}
