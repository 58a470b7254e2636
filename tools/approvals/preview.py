"""Approval previews: what a call would change, shown to the person asked to approve it.

An id and an attestation say nothing to a person; the code a call installs does. A tool, or
one action of a :class:`~tools.composite.CompositeTool`, shows it by defining a method::

    class PromoteDraft(ActionStrategy[DraftIdRequest]):
        def approval_preview(self, request: DraftIdRequest) -> str | None:
            return "unified diff of the draft against the active version"

``request`` is exactly what the call would run with (the tool's validated request; for a
composite tool, the chosen action's). The hook reads, never writes; ``None`` means nothing
to show. No import of this package is needed to provide one.

:func:`approval_preview` finds and runs the hook. Its :class:`Preview` travels in the
:class:`~tools.approvals.ApprovalRequest` (``preview``, ``preview_hash``): the terminal
prompt, a paused run's state (signed), ``python -m orchestrator``'s pending list and the MCP
server's messages show it. An approval is bound to the preview's hash: when an approved call
runs, the preview is made again and the call is refused if it differs (what would be
installed changed after the person looked), or if the approval was given without the
preview the tool now shows (edited arguments, an ``ApprovedCall`` made by hand).
"""

from __future__ import annotations

import difflib
import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.base import BaseTool

logger = logging.getLogger(__name__)

#: The name of the hook a tool or an action strategy defines.
PREVIEW_HOOK = "approval_preview"
#: Longest preview shown; a longer one is cut with a note (its hash covers the whole text).
MAX_PREVIEW_CHARS = 200_000


@dataclass(frozen=True)
class Preview:
    """What a call would change, as shown.

    Attributes:
        text: The preview (cut to :data:`MAX_PREVIEW_CHARS` with a note).
        digest: SHA-256 (hex) of the whole preview, before any cut: what an approval binds.
    """

    text: str
    digest: str


def preview_digest(text: str) -> str:
    """SHA-256 (hex) of a preview's text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def approval_preview(
    tool: BaseTool[Any, Any], arguments: Mapping[str, Any], *, preset: Mapping[str, Any] | None = None
) -> Preview | None:
    """The preview of a call of ``tool`` with ``arguments`` (None: the tool shows none).

    Arguments that do not validate give no preview (the call itself will be refused for
    them). A hook that raises gives a preview saying so, never an exception: the person is
    told that nothing could be shown, and the same failure again is the same preview.

    Args:
        tool: The tool.
        arguments: The call's decoded arguments.
        preset: Arguments its registration fixes (they win, as when the call runs).
    """
    found = _hook(tool)
    if found is None:
        return None
    merged = {**arguments, **(preset or {})}
    try:
        request = tool.validate_input(**merged)
    except Exception:
        return None
    hook = getattr(getattr(request, "strategy", None), PREVIEW_HOOK, None) if found == "action" else found
    if not callable(hook):
        return None
    target = getattr(request, "request", request) if found == "action" else request
    try:
        text = hook(target)
    except Exception as exc:
        logger.warning("approval preview of %s failed: %s", tool.name, type(exc).__name__)
        text = f"(no preview: making it failed with {type(exc).__name__}: {str(exc)[:300]})"
    if text is None:
        return None
    text = str(text)
    digest = preview_digest(text)
    if len(text) > MAX_PREVIEW_CHARS:
        text = text[:MAX_PREVIEW_CHARS] + f"\n[preview cut: {len(text) - MAX_PREVIEW_CHARS} more characters]\n"
    return Preview(text, digest)


def _hook(tool: BaseTool[Any, Any]) -> Any:
    """The tool's own hook, ``"action"`` when some of its actions have one, else None."""
    own = getattr(tool, PREVIEW_HOOK, None)
    if callable(own):
        return own
    actions = getattr(tool, "actions", None)
    if isinstance(actions, Mapping) and any(callable(getattr(a, PREVIEW_HOOK, None)) for a in actions.values()):
        return "action"
    return None


def files_diff(old: Mapping[str, bytes] | None, new: Mapping[str, bytes], *, label: str = "") -> str:
    """A unified diff of two sets of files (path -> content); ``old`` None: every file is new.

    Files that are not UTF-8 text are named, not shown. ``label`` heads the diff.
    """
    before = old or {}
    chunks = [label.rstrip("\n") + "\n"] if label else []
    for path in sorted({*before, *new}):
        was, now = before.get(path), new.get(path)
        if was == now:
            continue
        source = f"a/{path}" if was is not None else "/dev/null"
        target = f"b/{path}" if now is not None else "/dev/null"
        old_lines, new_lines = _text_lines(was), _text_lines(now)
        if old_lines is None or new_lines is None:
            chunks.append(f"Binary file {path} differs\n")
            continue
        chunks.extend(difflib.unified_diff(old_lines, new_lines, fromfile=source, tofile=target))
    if len(chunks) == (1 if label else 0):
        chunks.append("(no file changes)\n")
    return "".join(chunks)


def _text_lines(data: bytes | None) -> list[str] | None:
    if data is None:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\0" in text:
        return None
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines
