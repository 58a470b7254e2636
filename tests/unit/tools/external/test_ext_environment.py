"""ChildEnvironment: the one environment scheme of every external child, and its redactor."""

from __future__ import annotations

from tools.external._environment import ChildEnvironment
from tools.result import ToolResult

PARENT = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/ada",
    "LANG": "C.UTF-8",
    "LC_ALL": "C",
    "TZ": "UTC",
    "TMPDIR": "/var/tmp",
    "OPENAI_API_KEY": "sk-proj-0123456789abcdef",
    "TOOL_TOKEN": "tool-token-0123456789",
    "EDITOR": "vim",
}


def test_a_child_gets_the_base_the_declared_and_its_own_secrets() -> None:
    child = ChildEnvironment(PARENT, pass_env=["TMPDIR", "NOT_SET"])
    assert child.build({"MODE": "fast", "PATH": "/opt/bin"}, ["TOOL_TOKEN", "UNSET_TOKEN"]) == {
        "PATH": "/opt/bin",  # what the config declares wins over the base
        "HOME": "/home/ada",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TZ": "UTC",
        "TMPDIR": "/var/tmp",
        "MODE": "fast",
        "TOOL_TOKEN": "tool-token-0123456789",
    }


def test_without_a_parent_only_what_is_declared() -> None:
    assert ChildEnvironment(None).build({"ONLY": "this"}, ["TOOL_TOKEN"]) == {"ONLY": "this"}


def test_the_redactor_masks_own_and_parent_secrets_in_a_whole_result() -> None:
    redactor = ChildEnvironment(PARENT).redactor(["TOOL_TOKEN"])
    leaked = "key sk-proj-0123456789abcdef and tool-token-0123456789"
    failure = ToolResult.failure("execution_error", leaked, details={leaked: [leaked]}, metadata={"stderr": leaked})
    masked = redactor.result(failure).to_dict()
    assert masked["error"] == "key *** and ***"
    assert masked["details"] == {"key *** and ***": ["key *** and ***"]}
    assert masked["_metadata"]["stderr"] == "key *** and ***"
    assert redactor.result(ToolResult.success({"out": leaked})).data == {"out": "key *** and ***"}
