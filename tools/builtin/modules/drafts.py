"""``DraftManager``: change an installed module safely, through a draft.

A draft is a copy of the module's active version (``drafts/<draft_id>/files``) that
``edit_draft`` changes file by file; ``diff_draft`` shows a unified diff against the
version it started from; ``validate_draft`` stores its validation report in
``draft.json``; ``promote_draft`` turns a validated draft into the module's next version
(see :class:`~tools.builtin.modules.versions.VersionManager` for why that is atomic).
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from shared.modules import StoreError, UnsafePathError, confined, read_tree
from shared.modules.layout import read_json
from tools._files import atomic_write_text
from tools.builtin.modules.store import ModuleStore, unsafe_path
from tools.builtin.modules.versions import VersionManager
from tools.errors import InvalidArgumentsError, ToolError

__all__ = ["DraftInfo", "DraftManager"]

MAX_DIFF_CHARS = 60_000
MAX_CONTENT_CHARS = 200_000


class DraftInfo(BaseModel):
    """``draft.json``: where a draft came from and its last validation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    draft_id: str
    module_id: str
    base_version: str
    created_at: str
    report: dict[str, Any] | None = None


class DraftManager:
    """Drafts of installed modules.

    Args:
        store: The module store.
        versions: The installed versions (drafts start from the active one).
    """

    def __init__(self, *, store: ModuleStore, versions: VersionManager) -> None:
        self._store = store
        self._versions = versions

    def create(self, module_id: str) -> DraftInfo:
        """A new draft holding the files of the module's active version.

        Raises:
            InvalidArgumentsError: The module is not installed.
        """
        self._store.check_id(module_id)
        active = self._versions.active(module_id)
        if active is None:
            raise InvalidArgumentsError(
                f"Module {module_id!r} is not installed, so there is nothing to draft from. Change its build "
                f"area with module_pipeline(action='write_code', module_id='{module_id}', ...) instead."
            )
        files = self._versions.files(module_id, active)
        draft_id = "d_" + os.urandom(6).hex()
        info = DraftInfo(draft_id=draft_id, module_id=module_id, base_version=active, created_at=self._store.clock())
        folder = self._store.layout.draft_dir(draft_id)
        with self._store.locked():
            for path, data in files.items():
                atomic_write_text(confined(folder / "files", path), data.decode("utf-8"))
            self._save(info)
        return info

    def info(self, draft_id: str) -> DraftInfo:
        """The draft's record.

        Raises:
            InvalidArgumentsError: No such draft.
        """
        layout = self._store.layout
        if not layout.is_draft_id(draft_id):
            raise InvalidArgumentsError(
                f"{draft_id[:40]!r} is not a draft id (drafts look like 'd_0123456789ab'). Create one with "
                "module_admin(action='create_draft', module_id=...)."
            )
        try:
            loaded = read_json(layout.draft_dir(draft_id) / "draft.json", "the draft", missing=None)
        except StoreError:
            loaded = None
        if not isinstance(loaded, dict):
            raise InvalidArgumentsError(
                f"There is no draft {draft_id!r} (it may have been promoted already). Create one with "
                "module_admin(action='create_draft', module_id=...)."
            )
        return DraftInfo.model_validate(loaded)

    def files(self, draft_id: str) -> dict[str, bytes]:
        """The draft's current files."""
        self.info(draft_id)
        try:
            return read_tree(self._store.layout.draft_dir(draft_id) / "files")
        except UnsafePathError as exc:
            raise unsafe_path(exc) from None

    def edit(self, draft_id: str, file_path: str, content: str) -> dict[str, Any]:
        """Write one file of the draft; returns what changed.

        Raises:
            InvalidArgumentsError: No such draft, or the content is too large.
            PermissionDeniedError: The path leaves the draft or breaks the file rules.
        """
        info = self.info(draft_id)
        if len(content) > MAX_CONTENT_CHARS:
            raise InvalidArgumentsError(f"content is longer than {MAX_CONTENT_CHARS} characters; split the module.")
        try:
            target = confined(self._store.layout.draft_dir(draft_id) / "files", file_path)
        except UnsafePathError as exc:
            raise unsafe_path(exc) from None
        existed = target.is_file()
        with self._store.locked():
            before = target.read_text(encoding="utf-8", errors="replace") if existed else None
            atomic_write_text(target, content)
            if info.report is not None:  # any edit invalidates the last validation
                self._save(info.model_copy(update={"report": None}))
        return {
            "draft_id": draft_id,
            "file_path": file_path,
            "created": not existed,
            "changed": before != content,
            "characters": len(content),
        }

    def diff(self, draft_id: str) -> dict[str, Any]:
        """A unified diff of the draft against the version it started from."""
        info = self.info(draft_id)
        base = self._versions.files(info.module_id, info.base_version)
        current = self.files(draft_id)
        chunks: list[str] = []
        changed: list[str] = []
        for path in sorted({*base, *current}):
            old, new = base.get(path), current.get(path)
            if old == new:
                continue
            changed.append(path)
            chunks.extend(
                difflib.unified_diff(
                    _lines(old),
                    _lines(new),
                    fromfile=f"a/{path}" if old is not None else "/dev/null",
                    tofile=f"b/{path}" if new is not None else "/dev/null",
                )
            )
        text = "".join(chunks)
        truncated = len(text) > MAX_DIFF_CHARS
        if truncated:
            text = text[:MAX_DIFF_CHARS] + "\n[diff cut: it is longer than the limit]\n"
        return {
            "draft_id": draft_id,
            "module_id": info.module_id,
            "base_version": info.base_version,
            "changed_files": changed,
            "diff": text,
            "truncated": truncated,
        }

    def save_report(self, draft_id: str, report: Mapping[str, Any]) -> None:
        """Keep the draft's last validation report."""
        info = self.info(draft_id)
        with self._store.locked():
            self._save(info.model_copy(update={"report": dict(report)}))

    def remove(self, draft_id: str) -> None:
        """Delete the draft."""
        self.info(draft_id)
        with self._store.locked():
            shutil.rmtree(self._store.layout.draft_dir(draft_id), ignore_errors=True)

    def remove_for(self, module_id: str) -> int:
        """Delete every draft of ``module_id``; returns how many."""
        folder = self._store.layout.drafts_dir()
        if not folder.is_dir():
            return 0
        removed = 0
        with self._store.locked():
            for child in folder.iterdir():
                if not self._store.layout.is_draft_id(child.name):
                    continue
                try:
                    info = self.info(child.name)
                except InvalidArgumentsError:
                    continue
                if info.module_id == module_id:
                    shutil.rmtree(child, ignore_errors=True)
                    removed += 1
        return removed

    def _save(self, info: DraftInfo) -> None:
        path = self._store.layout.draft_dir(info.draft_id) / "draft.json"
        try:
            atomic_write_text(path, json.dumps(info.model_dump(mode="json"), indent=1))
        except OSError as exc:
            raise ToolError(f"The draft could not be saved ({exc.strerror}).") from None


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines
