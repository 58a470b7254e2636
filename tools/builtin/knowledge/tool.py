"""``search_knowledge`` and ``store_knowledge``: the model's long-term notes, as two tools.

Two tools rather than one composite: searching is read-only and safe to give every agent,
storing is a write that routing may keep from some agents.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from tools.base import BaseTool
from tools.builtin.knowledge.query import MAX_QUERY_CHARS
from tools.builtin.knowledge.sqlite_store import MAX_TEXT_CHARS
from tools.builtin.knowledge.store import FilterValue, KnowledgeHit, KnowledgeStore
from tools.errors import InvalidArgumentsError
from tools.manual import ToolCategory, ToolManual

Tag = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]
MAX_LIMIT = 20
MAX_TAGS = 16


class StoreKnowledgeRequest(BaseModel):
    """A text to save in the knowledge base, with optional title, source and tags."""

    text: str = Field(
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        description="The fact, note or passage to remember. Make it self-contained: it is "
        "found later by the words it contains.",
    )
    title: str | None = Field(default=None, max_length=200, description="A short title for the text.")
    source: str | None = Field(
        default=None,
        max_length=2_048,
        description="Where the text comes from (a URL or document name); searches can filter by it.",
    )
    tags: list[Tag] = Field(
        default_factory=list,
        max_length=MAX_TAGS,
        description="Topic labels such as ['tax', '2024']; searches can filter by tag.",
    )
    metadata: dict[str, Any] | None = Field(
        default=None,
        description="Older form of title, source and tags (kept for calls made before they "
        "existed): a JSON object stored with the text; its 'title', 'source' and 'tags' keys "
        "work like those arguments. Prefer the arguments.",
    )


class StoreKnowledgeResponse(BaseModel):
    """Outcome of ``store_knowledge``."""

    id: str
    duplicate: bool
    message: str


class SearchKnowledgeRequest(BaseModel):
    """A full-text search over the saved texts, optionally filtered by tag or source."""

    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description='Words to look for; all must appear. Use "double quotes" for an exact '
        "phrase, OR between alternatives (solar OR wind), and a trailing * for a prefix "
        "(tax*).",
    )
    limit: int = Field(default=5, ge=1, le=MAX_LIMIT, description="How many results to return (1-20).")
    top_k: int | None = Field(
        default=None,
        description="Older name of limit (kept for calls made before it was renamed); used "
        "when limit is not given, brought into 1-20. Prefer limit.",
    )
    tag: str | None = Field(default=None, max_length=64, description="Only texts stored with this tag.")
    source: str | None = Field(default=None, max_length=2_048, description="Only texts stored with this exact source.")


class KnowledgeResult(BaseModel):
    """One stored text that matched."""

    id: str
    score: float
    snippet: str
    text: str
    text_truncated: bool = False
    title: str | None = None
    source: str | None = None
    tags: list[str] = Field(default_factory=list)
    stored_at: str


class SearchKnowledgeResponse(BaseModel):
    """Results of ``search_knowledge``, best first."""

    query: str
    results: list[KnowledgeResult]
    note: str | None = None


class KnowledgeStoreTool(BaseTool[StoreKnowledgeRequest, StoreKnowledgeResponse]):
    """Remember a text for later searches (tool name ``store_knowledge``).

    Empty, whitespace-only or over-long texts (> 100,000 characters), more than 16 tags or
    unknown arguments are a ``validation_error``; control characters and lone surrogates
    are stored safely; an identical text is stored once and reported as a duplicate.

    Args:
        store: Where texts are kept, e.g. ``SqliteKnowledgeStore(path)``.
    """

    name = "store_knowledge"
    description = (
        "Save a fact, note or passage to the knowledge base so it can be found later with "
        "search_knowledge. Identical texts are stored once."
    )
    version = "1.0.0"
    manual = ToolManual(
        name="store_knowledge",
        display_name="Store knowledge",
        description=(
            "Saves a note in tooldeck's own knowledge base. Its effect stays inside tooldeck's data "
            "(nothing is sent anywhere, nothing of the user's is changed), so it is safe: it runs "
            "without asking at freedom level medium."
        ),
        category=ToolCategory.MEMORY,
        risk="safe",
        mutating=True,
        token_cost="low",  # noqa: S106 - a cost level, not a secret
        capabilities=("remember", "save_note", "knowledge_base"),
    )

    def __init__(self, *, store: KnowledgeStore) -> None:
        self._store = store

    def execute_internal(self, request: StoreKnowledgeRequest) -> StoreKnowledgeResponse:
        """Store the text with its title, source and tags (and any older ``metadata``)."""
        outcome = self._store.store(request.text, _metadata(request))
        message = (
            f"This text was already stored (id {outcome.id}); nothing new was saved."
            if outcome.duplicate
            else f"Stored with id {outcome.id}."
        )
        return StoreKnowledgeResponse(id=outcome.id, duplicate=outcome.duplicate, message=message)


class KnowledgeSearchTool(BaseTool[SearchKnowledgeRequest, SearchKnowledgeResponse]):
    """Full-text search over stored knowledge (tool name ``search_knowledge``).

    Any query text is safe: operators and punctuation are searched as literal words, never
    as FTS5 syntax; empty, over-long (> 500 characters, > 32 terms) or word-less queries
    are a ``validation_error`` explaining how to search; each result's text is cut at
    ``max_text_chars`` (flagged ``text_truncated``).

    Args:
        store: Where texts are kept, e.g. ``SqliteKnowledgeStore(path)``.
        max_text_chars: Each result's full text is cut to this many characters.
    """

    name = "search_knowledge"
    description = (
        "Search the knowledge base of saved facts and notes. Returns the best-matching texts "
        "with a highlighted snippet and a relevance score, best first."
    )
    version = "1.0.0"
    manual = ToolManual(
        name="search_knowledge",
        display_name="Search knowledge",
        description="Searches tooldeck's own knowledge base; reads only.",
        category=ToolCategory.MEMORY,
        risk="safe",
        mutating=False,
        token_cost="low",  # noqa: S106 - a cost level, not a secret
        capabilities=("recall", "search_notes", "knowledge_base"),
    )

    def __init__(self, *, store: KnowledgeStore, max_text_chars: int = 2_000) -> None:
        self._store = store
        self._max_text_chars = max_text_chars

    def execute_internal(self, request: SearchKnowledgeRequest) -> SearchKnowledgeResponse:
        """Search; a bad query is a validation error the model can fix."""
        filters: dict[str, FilterValue] = {}
        if request.tag:
            filters["tags"] = request.tag
        if request.source:
            filters["source"] = request.source
        limit = request.limit
        if request.top_k is not None and "limit" not in request.model_fields_set:
            limit = min(max(request.top_k, 1), MAX_LIMIT)
        hits = self._store.search(request.query, limit=limit, filters=filters)
        note = None
        if not hits:
            note = "Nothing stored matches. Try fewer words, OR between alternatives, or no filters."
        return SearchKnowledgeResponse(query=request.query, results=[self._result(hit) for hit in hits], note=note)

    def format_output(self, response: SearchKnowledgeResponse) -> Any:
        """The response without empty fields."""
        return response.model_dump(mode="json", exclude_none=True)

    def _result(self, hit: KnowledgeHit) -> KnowledgeResult:
        metadata = hit.metadata
        tags = metadata.get("tags")
        text = hit.text
        cut = len(text) > self._max_text_chars
        return KnowledgeResult(
            id=hit.id,
            score=hit.score,
            snippet=hit.snippet,
            text=text[: self._max_text_chars] + "…" if cut else text,
            text_truncated=cut,
            title=_str_or_none(metadata.get("title")),
            source=_str_or_none(metadata.get("source")),
            tags=[str(tag) for tag in tags] if isinstance(tags, list) else [],
            stored_at=hit.created_at.isoformat(),
        )


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _metadata(request: StoreKnowledgeRequest) -> dict[str, Any]:
    """The stored metadata: older ``metadata`` first, the arguments on top of it."""
    metadata: dict[str, Any] = dict(request.metadata or {})
    title = request.title or _str_or_none(metadata.pop("title", None))
    source = request.source or _str_or_none(metadata.pop("source", None))
    old_tags = metadata.pop("tags", None)
    if isinstance(old_tags, str):
        old_tags = [old_tags]
    tags = [*request.tags, *(t.strip() for t in old_tags or () if isinstance(t, str) and t.strip())]
    if len(tags) > MAX_TAGS:
        raise InvalidArgumentsError(
            f"At most {MAX_TAGS} tags can be stored with a text (tags and metadata['tags'] "
            f"together give {len(tags)}). Example: store_knowledge(text='...', tags=['tax', '2024'])"
        )
    if title:
        metadata["title"] = title
    if source:
        metadata["source"] = source
    if tags:
        metadata["tags"] = list(dict.fromkeys(tags))
    return metadata
