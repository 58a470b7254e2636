"""Result budgets: oversized tool results become artifacts the model reads in parts.

::

    store = ArtifactStore(data_dir / "artifacts")
    budget = ResultBudget(store, max_tokens=5_000)
    register_artifact_tools(registry, budget)          # read_artifact, search_artifact
    node = ToolsNode(registry, budget=budget)          # the graph applies the budget
"""

from tools.artifacts._store import MAX_ARTIFACT_CHARS, Artifact, ArtifactNotFoundError, ArtifactStore
from tools.artifacts.budget import CHARS_PER_TOKEN, ResultBudget
from tools.artifacts.tools import ReadArtifactTool, SearchArtifactTool, register_artifact_tools

__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_ARTIFACT_CHARS",
    "Artifact",
    "ArtifactNotFoundError",
    "ArtifactStore",
    "ReadArtifactTool",
    "ResultBudget",
    "SearchArtifactTool",
    "register_artifact_tools",
]
