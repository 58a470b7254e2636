"""Knowledge tools: ``search_knowledge`` and ``store_knowledge`` over a ``KnowledgeStore``.

The embedded store is :class:`SqliteKnowledgeStore` (SQLite FTS5, standard library only);
:class:`PostgresKnowledgeStore` keeps the knowledge in PostgreSQL for several replicas
(extra ``postgres``).
"""

from tools.builtin.knowledge.postgres_store import PostgresKnowledgeStore
from tools.builtin.knowledge.query import build_match_expression
from tools.builtin.knowledge.sqlite_store import SqliteKnowledgeStore
from tools.builtin.knowledge.store import (
    FilterValue,
    KnowledgeHit,
    KnowledgeItem,
    KnowledgeStore,
    StoreOutcome,
)
from tools.builtin.knowledge.tool import (
    KnowledgeResult,
    KnowledgeSearchTool,
    KnowledgeStoreTool,
    SearchKnowledgeRequest,
    SearchKnowledgeResponse,
    StoreKnowledgeRequest,
    StoreKnowledgeResponse,
)

__all__ = [
    "FilterValue",
    "KnowledgeHit",
    "KnowledgeItem",
    "KnowledgeResult",
    "KnowledgeSearchTool",
    "KnowledgeStore",
    "KnowledgeStoreTool",
    "PostgresKnowledgeStore",
    "SearchKnowledgeRequest",
    "SearchKnowledgeResponse",
    "SqliteKnowledgeStore",
    "StoreKnowledgeRequest",
    "StoreKnowledgeResponse",
    "StoreOutcome",
    "build_match_expression",
]
