""":class:`ResultBudget`: what one call's result may cost the model's context, and what happens past it.

A budget is counted in tokens, estimated as characters / 4 of the JSON the model would be
shown. A result over its call's budget is stored in an :class:`ArtifactStore` and the model
receives its start, its size and a handle instead; the tools ``read_artifact`` and
``search_artifact`` (see :func:`register_artifact_tools`) read the rest. Nothing is lost,
and the context holds only what the model asks for.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tools.artifacts._store import ArtifactStore

logger = logging.getLogger(__name__)

#: Characters per token of the estimate (the usual rule of thumb for English and JSON).
CHARS_PER_TOKEN = 4
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True)
class ResultBudget:
    """The per-call result budget and the store that keeps what goes past it.

    Attributes:
        store: Where oversized results are kept.
        max_tokens: A call's budget in tokens (characters / 4), unless ``per_tool`` says
            otherwise; at least 128.
        preview_chars: Characters of an oversized result shown to the model (at most half
            the budget).
        per_tool: Budgets in tokens for some tools by name (e.g. a page reader that should
            show more).
    """

    store: ArtifactStore
    max_tokens: int = 5_000
    preview_chars: int = 4_000
    per_tool: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_tokens < 128 or any(tokens < 128 for tokens in self.per_tool.values()):
            raise ValueError("ResultBudget: budgets must be at least 128 tokens")
        if self.preview_chars < 1:
            raise ValueError("ResultBudget: preview_chars must be positive")

    def limit_chars(self, tool: str) -> int:
        """The most characters of a result of ``tool`` the model is shown as they are."""
        return self.per_tool.get(tool, self.max_tokens) * CHARS_PER_TOKEN

    def apply(self, view: Mapping[str, Any], tool: str) -> dict[str, Any] | None:
        """The model's view of a result over budget (start, size, handle), or None when it fits.

        ``view`` is the result as the model would see it (``status``, ``data``, ...). Only
        successful results are stored; an error's text is the tool's own and stays as it is.
        When the store cannot be written, None is returned (the caller cuts as before) and a
        WARNING says why.
        """
        limit = self.limit_chars(tool)
        if view.get("status") != "success":
            return None
        try:
            size = len(_ENCODER.encode(view))
        except (TypeError, ValueError, RecursionError):
            return None
        if size <= limit:
            return None
        data = view.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, indent=1)
        try:
            artifact = self.store.put(text, tool=tool)
        except OSError as exc:
            logger.warning("cannot store an oversized result of %r as an artifact (%s); cutting it", tool, exc)
            return None
        shown = min(self.preview_chars, limit // 2)
        total = len(artifact.text)
        handle = artifact.handle
        note = (
            f"This result is {total} characters (about {total // CHARS_PER_TOKEN} tokens), over this call's "
            f"budget of {limit // CHARS_PER_TOKEN} tokens, so only its first {min(shown, total)} characters are "
            f"shown. Read on with read_artifact(handle='{handle}', offset={min(shown, total)}, limit=...) "
            f"or find what you need with search_artifact(handle='{handle}', query='...')."
        )
        summary = {
            "preview": artifact.text[:shown],
            "artifact": handle,
            "size_chars": total,
            "approx_tokens": total // CHARS_PER_TOKEN,
            "note": note,
        }
        return {**{k: v for k, v in view.items() if k != "data"}, "data": summary}
