"""argv templates: no shell, no option injection, clear errors for the model."""

from __future__ import annotations

from typing import Any

import pytest

from tools import InvalidArgumentsError
from tools.external import CLIAction
from tools.external._argv import build_argv

LOG = CLIAction(args=["log", ["-n", "{count}"], "{stat:--stat}", "--format={fmt}", "{rev}"])


def test_fills_groups_flags_and_embedded_values() -> None:
    argv = build_argv(LOG, {"count": 3, "stat": True, "fmt": "%H", "rev": "main"})
    assert argv == ["log", "-n", "3", "--stat", "--format=%H", "main"]


def test_absent_optional_group_and_false_flag_are_dropped() -> None:
    assert build_argv(LOG, {"fmt": "x", "rev": "main", "stat": False}) == [
        "log",
        "--format=x",
        "main",
    ]


def test_missing_required_is_named() -> None:
    with pytest.raises(InvalidArgumentsError, match="'rev'"):
        build_argv(LOG, {"fmt": "x"})


@pytest.mark.parametrize(
    "hostile",
    ["-rf", "--output=/etc/passwd", "--upload-pack=touch /tmp/pwned", "-"],
)
def test_option_injection_in_positional_is_refused(hostile: str) -> None:
    with pytest.raises(InvalidArgumentsError, match="must not start with '-'") as info:
        build_argv(LOG, {"fmt": "x", "rev": hostile})
    assert info.value.details == {"field": "rev", "reason": "option_injection"}


def test_injection_in_a_group_value_is_refused() -> None:
    with pytest.raises(InvalidArgumentsError, match="'count'"):
        build_argv(LOG, {"fmt": "x", "rev": "main", "count": "--exec=sh"})


def test_value_glued_to_an_option_cannot_become_an_option() -> None:
    # "--format=" is literal, so a leading dash in the value is harmless.
    assert build_argv(LOG, {"fmt": "--all", "rev": "main"})[-2] == "--format=--all"


def test_after_double_dash_leading_dash_is_allowed() -> None:
    action = CLIAction(args=["rm", "--", "{*paths}"])
    assert build_argv(action, {"paths": ["-rf", "a b"]}) == ["rm", "--", "-rf", "a b"]


def test_spread_items_are_checked_before_double_dash() -> None:
    action = CLIAction(args=["cat", "{*paths}"])
    with pytest.raises(InvalidArgumentsError, match="paths"):
        build_argv(action, {"paths": ["ok", "--help"]})
    with pytest.raises(InvalidArgumentsError, match="list of strings"):
        build_argv(action, {"paths": "a"})


def test_shell_metacharacters_stay_literal() -> None:
    action = CLIAction(args=["echo", "{text}"])
    assert build_argv(action, {"text": "$(rm -rf /); `id` | cat > x"}) == [
        "echo",
        "$(rm -rf /); `id` | cat > x",
    ]


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"a": 1}, "string or a number"),
        (True, "string or a number"),
        ("a\x00b", "NUL"),
        ("x" * 100_001, "limit"),
    ],
)
def test_malformed_values(value: Any, match: str) -> None:
    with pytest.raises(InvalidArgumentsError, match=match):
        build_argv(CLIAction(args=["echo", "{text}"]), {"text": value})


def test_flag_needs_a_boolean() -> None:
    with pytest.raises(InvalidArgumentsError, match="true or false"):
        build_argv(LOG, {"fmt": "x", "rev": "r", "stat": "yes"})


def test_unknown_arguments_list_the_accepted_ones() -> None:
    with pytest.raises(InvalidArgumentsError, match=r"\['bogus'\].*count, fmt, rev, stat"):
        build_argv(LOG, {"fmt": "x", "rev": "r", "bogus": 1})


def test_escaped_braces_are_literal() -> None:
    assert build_argv(CLIAction(args=["{{literal}}-{x}"]), {"x": "1"}) == ["{literal}-1"]
