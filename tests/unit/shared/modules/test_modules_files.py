"""Manifests, module ids, path rules, reading a module folder, and the files' hash."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared.modules import (
    ManifestError,
    ModuleManifest,
    UnsafePathError,
    check_relative_path,
    confined,
    files_hash,
    module_id_for,
    read_tree,
)
from shared.modules.files import MAX_FILE_BYTES, MAX_FILES


def test_manifest_round_trip_and_errors() -> None:
    manifest = ModuleManifest(id="runs", name="Runs", category="fitness", api_url="https://api.example.com/v1")
    assert ModuleManifest.from_json(manifest.to_json()) == manifest
    for text, expected in [
        ("not json", "manifest.json is not valid JSON"),
        ("[1]", "must hold a JSON object"),
        ('{"id": "Runs!", "name": "x", "category": "fitness"}', "id: String should match pattern"),
        ('{"id": "runs", "name": "x", "category": "astrology"}', "unknown category 'astrology'"),
        ('{"id": "runs", "name": "x", "category": "fitness", "extra": 1}', "extra: Extra inputs are not permitted"),
        ('{"id": "runs", "name": "x", "category": "fitness", "api_url": "javascript:alert(1)"}', "http:// or https://"),
        ('{"id": "runs", "name": "x", "category": "fitness", "required_credentials": ["API KEY"]}', "lower_snake_case"),
        ("{" + " " * 20000 + "}", "larger than 16 KiB"),
    ]:
        with pytest.raises(ManifestError, match=None) as caught:
            ModuleManifest.from_json(text)
        assert expected in str(caught.value), text[:40]


@pytest.mark.parametrize(
    ("name", "module_id"),
    [("Strava Runs!", "strava_runs"), ("2048 scores", "m_2048_scores"), ("x", "x_module"), ("A" * 90, "a" * 40)],
)
def test_module_ids_from_names(name: str, module_id: str) -> None:
    assert module_id_for(name) == module_id


@pytest.mark.parametrize("name", ["É", "!!!", "   "])
def test_names_without_letters_or_digits_make_no_id(name: str) -> None:
    with pytest.raises(ValueError, match="cannot make a module id"):
        module_id_for(name)


@pytest.mark.parametrize(
    "path",
    [
        "../x.py",
        "/abs.py",
        "a/../b.py",
        "./a.py",
        "a\\b.py",
        "a\x00.py",
        "C:/x.py",
        ".env.py",
        "x.sh",
        "a//b.py",
        "a/b/c/d/e.py",
        "__pycache__/x.py",
        "",
        "x" * 201,
    ],
)
def test_unsafe_paths_are_refused(path: str) -> None:
    with pytest.raises(UnsafePathError):
        check_relative_path(path)


def test_safe_paths_are_kept() -> None:
    assert check_relative_path("fixtures/sample.json") == "fixtures/sample.json"
    assert check_relative_path("adapter.py") == "adapter.py"


def test_confined_refuses_symlinks_on_the_way(tmp_path: Path) -> None:
    root = tmp_path / "module"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "fixtures")
    os.symlink(tmp_path / "outside" / "x.py", root / "x.py")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        confined(root, "fixtures/a.json")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        confined(root, "x.py")
    assert confined(root, "adapter.py") == root / "adapter.py"


def test_read_tree_refuses_links_and_limits(tmp_path: Path) -> None:
    root = tmp_path / "module"
    (root / "fixtures").mkdir(parents=True)
    (root / "adapter.py").write_text("x = 1\n")
    (root / "fixtures" / "a.json").write_text("[]")
    assert read_tree(root) == {"adapter.py": b"x = 1\n", "fixtures/a.json": b"[]"}
    os.symlink("/etc/passwd", root / "passwd.txt")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        read_tree(root)
    (root / "passwd.txt").unlink()
    (root / "big.txt").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(UnsafePathError, match="larger than"):
        read_tree(root)
    (root / "big.txt").unlink()
    for i in range(MAX_FILES):
        (root / f"f{i}.txt").write_text("x")
    with pytest.raises(UnsafePathError, match="more than"):
        read_tree(root)


def test_read_tree_refuses_unexpected_files(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo")
    with pytest.raises(UnsafePathError, match="not allowed"):
        read_tree(tmp_path)
    with pytest.raises(UnsafePathError, match="not a module directory"):
        read_tree(tmp_path / "missing")


def test_files_hash_covers_names_and_contents_in_any_order() -> None:
    a = {"a.py": b"1", "b.py": b"2"}
    assert files_hash(a) == files_hash(dict(reversed(a.items())))
    assert files_hash(a) != files_hash({"a.py": b"12", "b.py": b""})
    assert files_hash(a) != files_hash({"a.py": b"1", "c.py": b"2"})
    assert files_hash(a).startswith("sha256:")
