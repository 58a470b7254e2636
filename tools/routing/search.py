"""Tool search: ``ToolIndex`` (BM25 over names, descriptions and manuals) and ``ToolSearchTool``.

With hundreds of tools, sending every definition on every model call costs tens of
thousands of prompt tokens. A view in search mode (``ToolView.with_tool_search``) sends a
few pinned tools plus ``tool_search``; the model searches by what it wants to do, gets the
best matches with their parameter schemas, and calls them; found tools stay loaded in the
view for later turns.

Ranking is BM25 from `bm25s <https://github.com/xhluca/bm25s>`_ (the ``search`` extra:
``pip install -e '.[search]'``), with English stop words and Snowball stemming
(PyStemmer) so that "searching issues" finds ``search_issues``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.manual import ToolCategory, ToolManual

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MAX_QUERY = 500
# Words people use for the usual actions of tool names (``create_x`` is asked for as "add a
# new x", ``update_x`` as "change x"), added to a tool's document so that BM25 matches them.
_ACTION_WORDS: dict[str, str] = {
    "create": "new add make open post send upload start",
    "write": "save store create",
    "update": "change edit modify set move rename restart",
    "delete": "remove cancel drop close",
    "list": "show all recent which",
    "get": "show read fetch view one",
    "read": "show view open get",
    "search": "find query look lookup",
    "find": "search query look",
    "run": "execute start launch",
}


def _words(text: str) -> str:
    """``text`` with identifiers split into words (``search_issues`` -> ``search issues``)."""
    return " ".join(_WORD.findall(text))


def _document(manual: ToolManual, description: str) -> str:
    name_words = _words(manual.name)
    actions = [_ACTION_WORDS[w] for w in dict.fromkeys(name_words.lower().split()) if w in _ACTION_WORDS]
    parts = [
        name_words,
        *actions,
        _words(manual.display_name),
        description,
        manual.description if manual.description != description else "",
        " ".join(_words(c.value) for c in manual.categories),
        " ".join(_words(c) for c in manual.capabilities),
        _words(manual.server or ""),
    ]
    return " ".join(part for part in parts if part)


def _bm25() -> Any:
    try:
        import bm25s  # type: ignore[import-untyped, unused-ignore]
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ImportError(
            "tool search needs the bm25s package: pip install -e '.[search]' (bm25s and PyStemmer)"
        ) from None
    return bm25s


def _stemmer() -> Any:
    try:
        import Stemmer  # type: ignore[import-not-found, unused-ignore]
    except ImportError:  # pragma: no cover - stemming is optional
        return None
    return Stemmer.Stemmer("english")


class ToolIndex:
    """A BM25 index over tools: their names (split into words), descriptions, categories,
    capability tags and servers.

    Args:
        tools: ``(manual, description)`` per tool; the description is the one the model
            sees (the registration's), the manual adds categories and capabilities.

    Raises:
        ImportError: bm25s is not installed (the message says which extra to install).
    """

    def __init__(self, tools: Sequence[tuple[ToolManual, str]]) -> None:
        self._bm25s = _bm25()
        self._stemmer = _stemmer()
        self._names = [manual.name for manual, _ in tools]
        self._retriever: Any = None
        self._lock = threading.Lock()
        if self._names:
            corpus = [_document(manual, description) for manual, description in tools]
            tokens = self._bm25s.tokenize(corpus, stopwords="en", stemmer=self._stemmer, show_progress=False)
            retriever = self._bm25s.BM25()
            retriever.index(tokens, show_progress=False)
            self._retriever = retriever

    def __len__(self) -> int:
        return len(self._names)

    def search(self, query: str, limit: int = 5) -> list[tuple[str, float]]:
        """The best matching tool names with their BM25 scores, best first.

        Tools that share no word with the query are left out, so the list may be shorter
        than ``limit`` (or empty).
        """
        if self._retriever is None or limit < 1:
            return []
        text = _words(query[:_MAX_QUERY])
        tokens = self._bm25s.tokenize(
            [text], stopwords="en", stemmer=self._stemmer, return_ids=False, show_progress=False
        )
        if not tokens or not tokens[0]:
            return []
        k = min(limit, len(self._names))
        with self._lock:
            ids, scores = self._retriever.retrieve(tokens, k=k, show_progress=False, n_threads=0)
        return [
            (self._names[int(i)], round(float(s), 4)) for i, s in zip(ids[0], scores[0], strict=True) if float(s) > 0.0
        ]


class ToolSearcher(Protocol):
    """What :class:`ToolSearchTool` searches through (a :class:`~tools.routing.ToolView`)."""

    def search_tools(self, query: str, limit: int) -> dict[str, Any]:
        """Search the tools the agent may use, load the matches, describe them."""
        ...


class ToolSearchRequest(BaseModel):
    """Arguments of ``tool_search``."""

    query: str = Field(
        min_length=1,
        max_length=_MAX_QUERY,
        description="What you want to do, in a few words, e.g. 'create a github issue' or 'read a file'.",
    )
    limit: int = Field(default=5, ge=1, le=20, description="How many tools to return, best first.")


class ToolSearchTool(BaseTool[ToolSearchRequest, dict[str, Any]]):
    """Lets the model find tools by query; the matches become callable and stay loaded.

    Args:
        searcher: The view whose tools are searched (only the agent's own tools).
    """

    name = "tool_search"
    description = (
        "Find tools for a task. More tools exist than are listed: search by what you want to "
        "do and you get the best matching tools with their parameters; then call them by name."
    )
    version = "1.0.0"
    manual = ToolManual(
        name="tool_search",
        display_name="Tool search",
        description=(
            "Finds the agent's own tools by query and makes them callable: it reads the tool list "
            "and changes nothing outside this view, so it is safe."
        ),
        category=ToolCategory.SEARCH,
        risk="safe",
        mutating=False,
        capabilities=("tool_search",),
    )

    def __init__(self, searcher: ToolSearcher) -> None:
        self._searcher = searcher

    def execute_internal(self, request: ToolSearchRequest) -> dict[str, Any]:
        """Search and describe the matches."""
        return self._searcher.search_tools(request.query, request.limit)
