"""RegistryStore: paths, merging, and registry files that are missing, corrupt or hostile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools._jsonpos import line_of
from tools.store import Registry, RegistryFileError, RegistryStore, user_config_dir
from tools.store.trust import file_sha256

from .conftest import http_config


def test_default_paths_honour_xdg(tmp_path: Path) -> None:
    assert user_config_dir({"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"}) == Path("/x/cfg/tooldeck")
    assert user_config_dir({"HOME": "/home/u"}) == Path("/home/u/.config/tooldeck")
    assert user_config_dir({"XDG_CONFIG_HOME": "relative", "HOME": "/home/u"}) == Path("/home/u/.config/tooldeck")
    store = RegistryStore.from_env({"XDG_CONFIG_HOME": str(tmp_path / "c")}, project_dir=tmp_path / "p")
    assert store.user_path == tmp_path / "c" / "tooldeck" / "registry.json"
    assert store.project_path == tmp_path / "p" / ".tooldeck" / "registry.json"


def test_missing_files_are_empty(store: RegistryStore) -> None:
    assert store.load_merged() == Registry()


def test_project_overrides_user(store: RegistryStore) -> None:
    store.update_user(lambda r: r.with_tool(http_config("weather", description="user")).with_tool(http_config("u")))
    store.save_project(Registry(tools={"weather": http_config("weather", description="project")}))
    merged = store.load_merged()
    assert sorted(merged.tools) == ["u", "weather"]
    assert merged.tools["weather"].description == "project"
    assert store.scope_of("weather") == "project" and store.scope_of("u") == "user" and store.scope_of("z") is None


def test_written_file_is_readable_json(store: RegistryStore) -> None:
    store.save_project(Registry(tools={"weather": http_config()}))
    text = store.project_path.read_text()
    assert text.startswith('{\n  "version": 1,')
    assert json.loads(text)["tools"]["weather"]["http"]["base_url"] == "http://127.0.0.1:9"


def _write(store: RegistryStore, text: str | bytes) -> None:
    """A hand-written project file the user trusted (``tooldeck trust``) as it is."""
    data = text if isinstance(text, bytes) else text.encode()
    store.project_path.parent.mkdir(parents=True, exist_ok=True)
    store.project_path.write_bytes(data)
    store.trust.trust(store.project_path, file_sha256(data))


def test_json_syntax_error_names_file_and_line(store: RegistryStore) -> None:
    _write(store, '{\n  "version": 1,\n  "tools": {\n    "a": {,}\n  }\n}\n')
    with pytest.raises(RegistryFileError) as info:
        store.load_project()
    assert info.value.line == 4
    assert f"{store.project_path}:4: is not valid JSON" in str(info.value)
    assert "fix or remove the file" in str(info.value)


def test_invalid_field_names_path_and_line(store: RegistryStore) -> None:
    doc: dict[str, Any] = {"version": 1, "tools": {"weather": http_config().model_dump(mode="json", exclude_none=True)}}
    doc["tools"]["weather"]["http"]["base_url"] = "ftp://nope"
    _write(store, json.dumps(doc, indent=2))
    with pytest.raises(RegistryFileError) as info:
        store.load_merged()
    message = str(info.value)
    assert "tools.weather.http.base_url" in message
    lines = store.project_path.read_text().splitlines()
    assert info.value.line is not None and '"base_url": "ftp://nope"' in lines[info.value.line - 1]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "is empty"),
        ("   \n", "is empty"),
        (b"\xff\xfe{}", "is not UTF-8"),
        ("[1, 2]", "(top level)"),
        ('{"version": 7, "tools": {}}', "newer than this tooldeck reads"),
        ('{"version": 1, "tools": {"a": 5}}', "tools.a"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_corrupt_files_are_clear_errors(store: RegistryStore, content: str | bytes, problem: str) -> None:
    _write(store, content)
    with pytest.raises(RegistryFileError, match="registry file") as info:
        store.load_project()
    assert problem in str(info.value)


def test_corrupt_file_is_never_overwritten(store: RegistryStore) -> None:
    _write(store, '{"version": 1, "tools": {oops}}')
    before = store.project_path.read_bytes()
    with pytest.raises(RegistryFileError):
        store.save_project(Registry(tools={"weather": http_config()}))
    with pytest.raises(RegistryFileError):
        store.update_project(lambda r: r.with_tool(http_config()))
    assert store.project_path.read_bytes() == before


def test_oversized_file_is_refused(store: RegistryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tools.store.registry_store.MAX_REGISTRY_BYTES", 100)
    _write(store, json.dumps({"version": 1, "tools": {}, "pad": "x" * 200}))
    with pytest.raises(RegistryFileError, match="larger than 100 bytes"):
        store.load_project()


def test_directory_instead_of_file(store: RegistryStore) -> None:
    store.project_path.mkdir(parents=True)
    with pytest.raises(RegistryFileError, match="is a directory"):
        store.load_project()


def test_line_of_paths() -> None:
    text = '{\n "a": [\n  1,\n  {"b": 2}\n ],\n "c": {"d": "x"}\n}'
    assert line_of(text, ["a", 1, "b"]) == 4
    assert line_of(text, ["c", "d"]) == 6
    assert line_of(text, ["c", "missing"]) == 6
    assert line_of(text, []) == 1
    assert line_of("{bad", ["a"]) is None
