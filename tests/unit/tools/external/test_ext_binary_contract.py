"""The --schema document, names, and the on-disk schema cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tools.external._binary_contract import (
    BinarySchema,
    Probe,
    derive_name,
    parse_schema_document,
)
from tools.external._schema_cache import SchemaCache

GOOD = {
    "name": "wc",
    "description": "Count words.",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "output_schema": {"type": "object"},
}


def test_valid_document_is_ready() -> None:
    probe = parse_schema_document(json.dumps(GOOD).encode())
    assert probe.state == "ready"
    assert probe.schema == BinarySchema.model_validate(GOOD)
    assert probe.schema.version == "0.0.0"


@pytest.mark.parametrize(
    ("stdout", "state", "message"),
    [
        (b"", "schema-unknown", "printed nothing"),
        (b"usage: tool [-h]\n", "schema-unknown", "not JSON"),
        (b"[1, 2]", "broken", "not an object"),
        (b'{"input_schema": {"type": "array"}}', "broken", "must describe an object"),
        (b'{"input_schema": {"type": 5}}', "broken", "invalid JSON schema"),
        (b'{"name": "bad name!", "input_schema": {}}', "broken", "invalid --schema document"),
        (b'{"input_schema": "nope"}', "broken", "invalid --schema document"),
    ],
)
def test_bad_documents(stdout: bytes, state: str, message: str) -> None:
    probe = parse_schema_document(stdout)
    assert probe.state == state
    assert message in (probe.message or "")


@pytest.mark.parametrize(
    ("filename", "name"),
    [
        ("word-count.py", "word-count"),
        ("my tool.sh", "my_tool"),
        (".hidden", "hidden"),
        ("x" * 80, "x" * 64),
    ],
)
def test_derive_name(filename: str, name: str) -> None:
    assert derive_name(filename) == name


def test_probe_json_round_trip() -> None:
    probe = Probe("ready", BinarySchema.model_validate(GOOD))
    assert Probe.from_json(json.loads(json.dumps(probe.to_json()))) == probe
    with pytest.raises(ValueError, match="state"):
        Probe.from_json({"state": "missing-binary"})


def test_cache_round_trip_through_disk(tmp_path: Path) -> None:
    path = str(tmp_path / "cache.json")
    cache = SchemaCache(path)
    probe = Probe("schema-unknown", message="no --schema")
    cache.put("/bin/x", (10, 20), probe)
    cache.save()
    assert [p.name for p in tmp_path.iterdir()] == ["cache.json"]  # no temp file left
    fresh = SchemaCache(path)
    assert fresh.load() == 1
    assert fresh.get("/bin/x", (10, 20)) == probe
    assert fresh.get("/bin/x", (10, 21)) is None  # mtime changed: stale
    fresh.drop("/bin/x")
    fresh.save()
    assert SchemaCache(path).load() == 0


@pytest.mark.parametrize(
    "content",
    ["{not json", '{"format": 99, "entries": {}}', "[]", '{"format": 1, "entries": {"a": 1}}'],
)
def test_corrupt_cache_is_ignored(tmp_path: Path, content: str) -> None:
    path = tmp_path / "cache.json"
    path.write_text(content)
    cache = SchemaCache(str(path))
    assert cache.load() == 0
    cache.put("/bin/y", (1, 1), Probe("broken", message="m"))
    cache.save()
    assert SchemaCache(str(path)).load() == 1


def test_memory_only_cache_writes_nothing(tmp_path: Path) -> None:
    cache = SchemaCache(None)
    cache.put("/bin/z", (1, 1), Probe("schema-unknown"))
    cache.save()
    assert cache.get("/bin/z", (1, 1)) is not None
    assert os.listdir(tmp_path) == []
