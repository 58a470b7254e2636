"""Writing a module store by hand (with shared primitives only) for the loader tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shared.modules import ModuleIndex, ModuleLayout, Signer, VersionRecord, files_hash

SIGNER = Signer(b"test-signing-key-" * 2)
BASE = "http://127.0.0.1:9/api/runs"


def manifest(module_id: str = "runs", category: str = "fitness", **changes: Any) -> str:
    data = {"id": module_id, "name": module_id.title(), "category": category, "api_url": BASE, **changes}
    return json.dumps(data)


def put_version(
    layout: ModuleLayout,
    module_id: str,
    version_id: str,
    files: Mapping[str, str],
    *,
    signer: Signer = SIGNER,
) -> None:
    """A version folder with a signed record, as install writes it."""
    folder = layout.version_files(module_id, version_id)
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    encoded = {p: t.encode() for p, t in files.items()}
    record = VersionRecord(
        module_id=module_id, version_id=version_id, files_hash=files_hash(encoded), created_at="t", source="test"
    )
    record = record.model_copy(update={"signature": signer.sign("version", record.signed_fields())})
    (layout.version_dir(module_id, version_id) / "version.json").write_text(record.model_dump_json())


def set_index(layout: ModuleLayout, entries: Mapping[str, tuple[str, str, bool]], generation: int = 1) -> None:
    """``index.json`` with ``{module_id: (version, category, enabled)}``, replaced atomically."""
    index = ModuleIndex.model_validate(
        {
            "generation": generation,
            "modules": {m: {"active_version": v, "category": c, "enabled": e} for m, (v, c, e) in entries.items()},
        }
    )
    tmp = layout.root / "index.json.tmp"
    layout.root.mkdir(parents=True, exist_ok=True)
    tmp.write_text(index.model_dump_json())
    tmp.replace(layout.index_path)


def layout_at(root: Path) -> ModuleLayout:
    return ModuleLayout(root)
