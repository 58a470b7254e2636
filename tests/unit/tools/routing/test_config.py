"""ToolRoutingConfig: JSON and TOML files, and every way a file can be wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import LocalToolRegistry
from tools.routing import (
    AgentToolOverride,
    ManualOverride,
    RoutingConfigError,
    ToolCategory,
    ToolRouter,
    ToolRoutingConfig,
)

TOML = """
global_deny = ["bash"]

[profiles.coder]
add_categories = ["web"]
remove_categories = ["execution"]
add_tools = ["lsp"]
deny_tools = ["patch"]

[manuals.grep]
category = "search"
capabilities = ["regex"]
"""

EXPECTED = ToolRoutingConfig(
    global_deny=("bash",),
    profiles={
        "coder": AgentToolOverride(
            add_categories=(ToolCategory.WEB,),
            remove_categories=(ToolCategory.EXECUTION,),
            add_tools=("lsp",),
            deny_tools=("patch",),
        )
    },
    manuals={"grep": ManualOverride(category=ToolCategory.SEARCH, capabilities=("regex",))},
)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_toml_and_json_files_load_the_same_config(tmp_path: Path) -> None:
    from_toml = ToolRoutingConfig.from_file(write(tmp_path, "routing.toml", TOML))
    data = EXPECTED.model_dump(mode="json")
    from_json = ToolRoutingConfig.from_file(str(write(tmp_path, "routing.json", json.dumps(data))))
    assert from_toml == EXPECTED
    assert from_json == EXPECTED
    assert from_toml.source.endswith("routing.toml")


def test_text_about_to_be_written_is_read_as_its_file_would_be(tmp_path: Path) -> None:
    data = json.dumps(EXPECTED.model_dump(mode="json"))
    assert ToolRoutingConfig.from_text(TOML, tmp_path / "routing.TOML") == EXPECTED
    assert ToolRoutingConfig.from_text(data, tmp_path / "routing.json") == EXPECTED
    with pytest.raises(RoutingConfigError, match=r"routing\.json: invalid JSON"):
        ToolRoutingConfig.from_text(TOML, tmp_path / "routing.json")
    with pytest.raises(RoutingConfigError, match=r"routing\.toml: invalid TOML"):
        ToolRoutingConfig.from_text(data, tmp_path / "routing.toml")
    with pytest.raises(RoutingConfigError, match="nosuch"):
        ToolRoutingConfig.from_text('{"nosuch": 1}', tmp_path / "routing.json")


def test_a_loaded_config_routes_through_the_view(tmp_path: Path, coding_registry: LocalToolRegistry) -> None:
    config = ToolRoutingConfig.from_file(write(tmp_path, "routing.toml", TOML))
    view = coding_registry.for_agent("coder", router=ToolRouter(config=config))
    assert view.names() == ["read", "glob", "grep", "edit", "write", "webfetch", "websearch", "skill", "lsp"]
    grep = view.get_manual("grep")
    assert grep is not None
    assert (grep.category, grep.capabilities) == (ToolCategory.SEARCH, ("regex",))
    assert coding_registry.for_agent("main", router=ToolRouter(config=config)).call_tool("bash").error is not None


def test_empty_file_is_the_empty_config(tmp_path: Path) -> None:
    assert ToolRoutingConfig.from_file(write(tmp_path, "r.toml", "")) == ToolRoutingConfig()
    assert ToolRoutingConfig.from_file(write(tmp_path, "r.json", "{}")) == ToolRoutingConfig()


def load_error(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = write(tmp_path, name, text)
    with pytest.raises(RoutingConfigError) as info:
        ToolRoutingConfig.from_file(path)
    message = str(info.value)
    assert message.startswith(str(path))
    return message[len(str(path)) :]


def test_unknown_category_names_the_file_the_key_and_the_allowed_values(tmp_path: Path) -> None:
    message = load_error(tmp_path, "r.toml", '[profiles.coder]\nadd_categories = ["web", "internet"]\n')
    assert message == (
        ": invalid routing config:\n  profiles.coder.add_categories[1]: 'internet' is not a category; allowed "
        "values: file-read, file-write, execution, web, planning, delegation, search, navigation, context, "
        "memory, compute, unclassified"
    )


def test_unknown_keys_list_the_allowed_keys(tmp_path: Path) -> None:
    message = load_error(tmp_path, "r.json", json.dumps({"globalDeny": ["x"], "profiles": {"coder": {"deny": []}}}))
    assert message == (
        ": invalid routing config:\n"
        "  profiles.coder.deny: unknown key; allowed keys here: add_categories, remove_categories, add_tools, "
        "deny_tools\n"
        "  globalDeny: unknown key; allowed keys here: global_deny, profiles, manuals"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"manuals": {"grep": {"risk": "extreme"}}}', "manuals.grep.risk: 'extreme' is not allowed; allowed values"),
        ('{"global_deny": ["rm -rf"]}', "global_deny[0]: 'rm -rf' is not a tool name"),
        ('{"profiles": {"bad agent": {}}}', "profiles.bad agent: 'bad agent' is not an agent type"),
        ('{"global_deny": "bash"}', "global_deny: Input should be a valid tuple"),
        (
            '{"profiles": {"coder": {"add_categories": ["web"], "remove_categories": ["web"]}}}',
            "profiles.coder: web is both in add_categories and remove_categories: keep it in one of them",
        ),
        (
            '{"profiles": {"coder": {"add_tools": ["x"], "deny_tools": ["x"]}}}',
            "profiles.coder: x is both in add_tools and deny_tools",
        ),
    ],
)
def test_bad_values(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in load_error(tmp_path, "r.json", text)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("r.json", "{not json", ": invalid JSON (Expecting property name"),
        ("r.json", "[1, 2]", ": the routing config must be an object (a TOML table), got list"),
        ("r.json", "[" * 100_000 + "]" * 100_000, ": invalid JSON"),
        ("r.toml", "global_deny = [", ": invalid TOML"),
        ("r.yaml", "global_deny: []", ": a routing config file must end in .json or .toml, not '.yaml'"),
        ("r.json", b"\xff\xfe{}", ": the routing config is not UTF-8 text"),
        ("r.json", "{}" + " " * (1 << 20), ": the routing config is larger than 1048576 bytes"),
    ],
)
def test_unusable_files(tmp_path: Path, name: str, text: str | bytes, expected: str) -> None:
    assert load_error(tmp_path, name, text).startswith(expected)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    with pytest.raises(RoutingConfigError, match=r"absent\.toml: cannot read the routing config"):
        ToolRoutingConfig.from_file(path)


def test_many_errors_are_capped(tmp_path: Path) -> None:
    data = {"global_deny": [f"bad name {i}" for i in range(50)]}
    message = load_error(tmp_path, "r.json", json.dumps(data))
    assert message.count("\n") == 11
    assert message.endswith("... and 40 more")


def test_from_mapping_rejects_non_mappings() -> None:
    with pytest.raises(RoutingConfigError, match="must be an object"):
        ToolRoutingConfig.from_mapping(["x"])  # type: ignore[arg-type]


def test_config_naming_unregistered_tools_fails_when_the_view_is_made(
    tmp_path: Path, coding_registry: LocalToolRegistry
) -> None:
    path = write(tmp_path, "routing.toml", '[profiles.reviewer]\nadd_tools = ["lps"]\n[manuals.gerp]\nrisk = "safe"\n')
    router = ToolRouter(config=ToolRoutingConfig.from_file(path))
    with pytest.raises(RoutingConfigError) as info:
        coding_registry.for_agent("reviewer", router=router)
    assert str(info.value) == (
        f"{path} names tools that are not registered: manuals.gerp (did you mean 'grep'?); "
        "profiles.reviewer.add_tools: 'lps' (did you mean 'lsp'?). Register those tools first, or remove the "
        "entries from the config."
    )


def test_config_is_frozen() -> None:
    config = ToolRoutingConfig()
    with pytest.raises(ValueError, match="frozen"):
        config.global_deny = ("x",)  # type: ignore[misc]
