"""``read_artifact`` and ``search_artifact``: the model reads an oversized result in parts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from tools.artifacts._store import check_handle
from tools.base import BaseTool
from tools.manual import ToolCategory, ToolManual

if TYPE_CHECKING:
    from tools.artifacts.budget import ResultBudget
    from tools.registry import LocalToolRegistry

_HANDLE_HELP = "The artifact handle from a tool result, e.g. 'art_0123456789abcdef0123456789abcdef'."
#: Most matches ``search_artifact`` returns.
MAX_MATCHES = 50


class ReadArtifactRequest(BaseModel):
    handle: str = Field(description=_HANDLE_HELP)
    offset: int = Field(default=0, ge=0, description="Character offset to start at (0 = the beginning).")
    limit: int = Field(default=4_000, ge=1, description="How many characters to read.")


class SearchArtifactRequest(BaseModel):
    handle: str = Field(description=_HANDLE_HELP)
    query: str = Field(min_length=1, max_length=500, description="Text to find (case-insensitive).")
    max_matches: int = Field(default=20, ge=1, le=MAX_MATCHES, description="Most matches to return.")


class _ArtifactTool(BaseTool[Any, dict[str, Any]]):
    """Shared by the artifact tools: the budget (and its store) and a safe, read-only manual.

    Args:
        budget: The budget whose store holds the artifacts.
    """

    category: ToolCategory = ToolCategory.FILE_READ

    def __init__(self, budget: ResultBudget) -> None:
        self._budget = budget
        self.manual = ToolManual(
            name=self.name,
            description=self.description,
            category=self.category,
            source="builtin",
            risk="safe",
            mutating=False,
        )


class ReadArtifactTool(_ArtifactTool):
    """Read part of a stored oversized result (a slice of its text); a read is capped so that
    its own result stays within the budget."""

    RequestModel = ReadArtifactRequest

    name = "read_artifact"
    description = (
        "Read part of a large tool result that was stored as an artifact: give its handle, a "
        "character offset and a limit. The answer says where to continue (next_offset)."
    )

    def execute_internal(self, request: ReadArtifactRequest) -> dict[str, Any]:
        """The slice ``[offset, offset + limit)`` of the artifact's text."""
        artifact = self._budget.store.get(check_handle(request.handle))
        cap = self._budget.limit_chars(self.name) - 500  # room for the answer's own keys
        limit = min(request.limit, max(cap, 1))
        text = artifact.text[request.offset : request.offset + limit]
        end = request.offset + len(text)
        return {
            "handle": artifact.handle,
            "offset": request.offset,
            "text": text,
            "size_chars": len(artifact.text),
            "next_offset": end if end < len(artifact.text) else None,
        }


class SearchArtifactTool(_ArtifactTool):
    """Find text in a stored oversized result: matching lines with their offsets."""

    RequestModel = SearchArtifactRequest
    category = ToolCategory.SEARCH

    name = "search_artifact"
    description = (
        "Search a large tool result stored as an artifact for some text (case-insensitive): returns "
        "the matching lines with their character offsets, to read around with read_artifact."
    )

    def execute_internal(self, request: SearchArtifactRequest) -> dict[str, Any]:
        """Up to ``max_matches`` lines containing ``query``, each with its offset and number."""
        artifact = self._budget.store.get(check_handle(request.handle))
        needle = request.query.casefold()
        matches: list[dict[str, Any]] = []
        total = 0
        offset = 0
        for number, line in enumerate(artifact.text.splitlines(keepends=True), start=1):
            if needle in line.casefold():
                total += 1
                if len(matches) < request.max_matches:
                    shown = line.rstrip("\n")
                    matches.append({"line": number, "offset": offset, "text": shown[:300]})
            offset += len(line)
        return {"handle": artifact.handle, "query": request.query, "matches": matches, "total_matches": total}


def register_artifact_tools(registry: LocalToolRegistry, budget: ResultBudget) -> list[str]:
    """Register ``read_artifact`` and ``search_artifact`` over ``budget``'s store; returns their names."""
    tools: list[BaseTool[Any, Any]] = [ReadArtifactTool(budget), SearchArtifactTool(budget)]
    for tool in tools:
        registry.register(tool)
    return [tool.name for tool in tools]
