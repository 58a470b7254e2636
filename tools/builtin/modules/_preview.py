"""The approval previews of ``install`` and ``promote_draft``: the code a person approves.

Both actions make a module's files the served code. A person asked to approve one is shown
the unified diff of those files against the module's active version, or every file of a
module installed for the first time (see :mod:`tools.approvals.preview`).
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.approvals.preview import files_diff
from tools.builtin.modules.store import ModuleStore
from tools.builtin.modules.versions import VersionManager


def code_change(
    store: ModuleStore, versions: VersionManager, module_id: str, files: Mapping[str, bytes], *, source: str
) -> str:
    """What making ``files`` the served code of ``module_id`` changes, as a headed diff.

    Args:
        store: The module store (its index names the active version).
        versions: The installed versions (the active one's files are verified).
        module_id: The module.
        files: The files that would be served.
        source: Where they come from, for the heading (``"the build area"``, ``"draft d_..."``).
    """
    entry = store.entry(module_id)
    if entry is None:
        label = f"First install of module {module_id!r} from {source}: the whole code ({len(files)} file(s))."
        return files_diff(None, files, label=label)
    active = versions.files(module_id, entry.active_version)
    changed = sorted(p for p in {*active, *files} if active.get(p) != files.get(p))
    label = (
        f"Module {module_id!r}: {source} against the active version {entry.active_version} "
        f"({len(changed)} file(s) changed: {', '.join(changed) or 'none'})."
    )
    return files_diff(active, files, label=label)
