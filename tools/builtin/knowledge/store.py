"""The :class:`KnowledgeStore` protocol and the records it exchanges."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

#: Values a metadata filter may compare with.
FilterValue = str | int | float | bool


@dataclass(frozen=True, slots=True)
class KnowledgeItem:
    """A text to store, with optional JSON metadata (``{"source": ..., "tags": [...]}``)."""

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoreOutcome:
    """The result of storing one text.

    Attributes:
        id: The document id (the existing one when the text was already stored).
        duplicate: True when an identical text was already stored; nothing was written.
    """

    id: str
    duplicate: bool


@dataclass(frozen=True, slots=True)
class KnowledgeHit:
    """One search result, best first.

    Attributes:
        id: The document id.
        score: Relevance (higher is better; BM25 for the SQLite store).
        snippet: The best-matching passage, matches wrapped in the highlight markers.
        text: The full stored text.
        metadata: The metadata stored with the text.
        created_at: When the text was stored (UTC).
    """

    id: str
    score: float
    snippet: str
    text: str
    metadata: dict[str, Any]
    created_at: datetime


@runtime_checkable
class KnowledgeStore(Protocol):
    """Stores texts with metadata and finds them again by full-text search.

    Identical texts are stored once (the second store returns the first id with
    ``duplicate=True``). Implementations raise
    :class:`~tools.errors.InvalidArgumentsError` for input the caller can fix (empty text,
    bad query, bad metadata) and must be safe under concurrent writers.
    """

    def store(self, text: str, metadata: Mapping[str, Any] | None = None) -> StoreOutcome:
        """Store one text; return its id."""
        ...

    def store_many(self, items: Iterable[KnowledgeItem]) -> list[StoreOutcome]:
        """Store many texts in few transactions; outcomes in input order."""
        ...

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        filters: Mapping[str, FilterValue] | None = None,
    ) -> list[KnowledgeHit]:
        """Ranked hits for ``query`` whose metadata matches every filter (best first)."""
        ...
