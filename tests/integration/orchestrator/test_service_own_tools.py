"""Your tools reach the agent (issue 21 items 1 and 3): ``OrchestratorService(tools=[...])`` beside
the builtins or alone, registries copied with their options; ``--agent`` gets the workspace tools
(read-only for read-only profiles) and a prompt naming exactly its tools; an agent left with no
tools is refused, saying why."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from orchestrator import OrchestratorService, ServiceConfigError, Settings
from orchestrator.agents.prompts import ROLES
from orchestrator.testing import TestModel
from tools import BaseTool, LocalToolRegistry, ToolCategory, ToolManual
from tools.registry_spec import RegistrySpecError, copy_registrations, load_registry


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # These tests are about tools reaching the agent, not approvals: undeclared tools (moderate) run.
    return Settings.from_env({}, data_dir=str(tmp_path / "data"), context_url="http://127.0.0.1:9", freedom="high")


class Echo(BaseModel):
    text: str


class EchoTool(BaseTool[Echo, str]):
    name = "echo"
    description = "Echo a text back."

    def execute_internal(self, request: Echo) -> str:
        return request.text


def shout(text: str) -> str:
    """Shout a text.

    Args:
        text: What to shout.
    """
    return text.upper()


def test_your_tools_join_the_builtins_and_every_one_is_called(settings: Settings) -> None:
    with OrchestratorService(settings, tools=[EchoTool(), shout], model=TestModel(call_tools=["echo", "shout"])) as s:
        names = s.registry.names()
        assert names[0] == "math_solver" and names[-2:] == ["echo", "shout"]
        run = s.ask("try my tools")
        assert [(r["name"], r["status"]) for r in run.tool_results] == [("echo", "success"), ("shout", "success")]
        assert all(name in prompt_of(s) for name in ("shout", "echo", "math_solver"))


def test_without_builtins_only_yours_remain(settings: Settings) -> None:
    with OrchestratorService(settings, tools=[EchoTool()], builtins=False, model=TestModel()) as service:
        assert service.registry.names() == ["echo"]
        assert service.system_prompt == (
            "You are a helpful assistant with tools. Your tools: echo. Use a tool whenever it can answer better than "
            "memory. Answer briefly from the tool results; if a tool fails, say so."
        )
        assert (
            service.ask("go").answer == 'I called 1 tool(s):\n- echo({"text": "text-example"}) -> success: text-example'
        )


def test_a_name_clash_with_a_builtin_is_an_error_naming_the_fix(settings: Settings) -> None:
    def math_solver(expression: str) -> str:
        """Mine.

        Args:
            expression: x.
        """
        return expression

    with pytest.raises(
        ServiceConfigError, match=r"your tool name\(s\) 'math_solver' are registered already .*--no-builtins"
    ):
        OrchestratorService(settings, tools=[math_solver])


def test_a_registry_is_copied_with_its_registration_options(settings: Settings) -> None:
    source = LocalToolRegistry()
    source.register(EchoTool(), preset={"text": "fixed by the application"}, timeout=7.5)
    source.register(shout, manual=ToolManual(name="shout", risk="safe", mutating=False, category=ToolCategory.COMPUTE))
    source.register(shout, name="old_shout", hidden=True)
    with OrchestratorService(settings, tools=[source], builtins=False) as service:
        registry = service.registry
        assert registry.names() == ["echo", "shout", "old_shout"]
        assert registry.call_tool("echo").data == "fixed by the application"  # the preset holds
        sent = registry.call_tool("echo", text="from the model")
        assert sent.error is not None and sent.error.type == "validation_error"  # preset keys stay closed
        exported = registry.to_openai_tools()
        assert [t["function"]["name"] for t in exported] == ["echo", "shout"]  # hidden stays hidden
        assert exported[0]["function"]["parameters"]["properties"] == {}
        manual = registry.get_manual("shout")
        assert manual is not None and (manual.risk, manual.mutating) == ("safe", False)
        assert registry._entries["echo"].timeout == 7.5


def test_copying_into_a_registry_that_has_the_name_registers_nothing() -> None:
    source, target = LocalToolRegistry(), LocalToolRegistry()
    source.register(EchoTool())
    source.register(shout)
    target.register(shout)
    with pytest.raises(Exception, match="'shout'"):
        copy_registrations(source, target)
    assert target.names() == ["shout"]


SPECS = '''
from tools import LocalToolRegistry

def echo(text: str) -> str:
    """Echo.

    Args:
        text: The text.
    """
    return text

def build():
    registry = LocalToolRegistry()
    registry.register(echo)
    return registry

def as_list():
    return [echo]

registry = build()
nothing = 42

def needs_arguments(x):
    return x
'''


@pytest.mark.parametrize(
    ("attribute", "names"), [("build", ["echo"]), ("as_list", ["echo"]), ("registry", ["echo"]), ("echo", ["echo"])]
)
def test_specs_name_a_factory_a_registry_a_list_or_a_tool(tmp_path: Path, attribute: str, names: list[str]) -> None:
    module = f"specs_{attribute}"
    (tmp_path / f"{module}.py").write_text(SPECS)
    assert load_registry(f"{module}:{attribute}", tmp_path).names() == names


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "expected 'module:attribute'"),
        ("specs_bad:missing", "has no attribute 'missing'"),
        ("specs_bad:nothing", "is (or returned) int, not a LocalToolRegistry, a tool or a list of tools"),
        ("no_such_module_xyz:build", "cannot import 'no_such_module_xyz'"),
    ],
)
def test_bad_specs_say_what_is_wrong(tmp_path: Path, spec: str, message: str) -> None:
    (tmp_path / "specs_bad.py").write_text(SPECS)
    with pytest.raises(RegistrySpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_registry(spec, tmp_path)


# ------------------------------------------------------------------ --agent


def test_a_read_only_agent_reads_the_workspace_and_cannot_write_it(settings: Settings, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("hello reviewer\n")
    reviewer = settings.model_copy(update={"agent": "reviewer"})
    with OrchestratorService(reviewer, workspace=workspace, model=TestModel(call_tools=["read"])) as service:
        assert service.tools.names() == ["read", "glob", "grep", "skill"]
        prompt = prompt_of(service)
        assert prompt.startswith("You are the reviewer: read-only.")
        listed = (
            "Your tools: read (to read a file), glob (to find files by name), grep (to search file contents), skill."
        )
        assert listed in prompt
        assert "Load the code-review skill first" in prompt
        read = service.tools.call_tool("read", path="README.md")
        assert read.ok and "hello reviewer" in json.dumps(read.data)
        write_tool = service.registry.get_tool("write")
        assert write_tool is not None  # registered, not offered; and its workspace is read-only anyway
        refused = write_tool.execute(path="x.txt", content="no")
        assert refused.error is not None and refused.error.type == "permission_denied"
        assert not (workspace / "x.txt").exists()


def test_a_writing_agent_gets_a_writable_workspace(settings: Settings, tmp_path: Path) -> None:
    coder = settings.model_copy(update={"agent": "coder"})
    with OrchestratorService(coder, workspace=tmp_path) as service:
        assert {"read", "edit", "write", "patch"} <= set(service.tools.names())
        assert "Load the approach-evaluation skill first" in prompt_of(service)
        wrote = service.tools.call_tool("write", path="new.txt", content="made\n")
        assert wrote.ok, wrote.error
        assert (tmp_path / "new.txt").read_text() == "made\n"


def test_an_agent_with_no_tools_is_refused_saying_why(settings: Settings, tmp_path: Path) -> None:
    config = tmp_path / "routing.toml"
    config.write_text('[profiles.reviewer]\ndeny_tools = ["read", "glob", "grep", "skill"]\n')
    reviewer = settings.model_copy(update={"agent": "reviewer", "routing_config": config})
    with pytest.raises(ServiceConfigError) as refused:
        OrchestratorService(reviewer, workspace=tmp_path)
    message = str(refused.value)
    assert message.startswith("the 'reviewer' agent would get no tools, so it is not started.")
    assert "1. profile: 'reviewer' (Reviews changes read-only and gives a verdict.)" in message
    assert "math_solver" in message  # each tool's decision is listed
    assert "deny" in message
    assert "Fix: pick another --agent" in message


def test_the_prompt_never_names_a_tool_the_agent_lacks(settings: Settings, tmp_path: Path) -> None:
    everyone = ["main", "plan", "explore", "debugger", "researcher", "docs-generator", "readme-generator", "coder",
                "test-writer", "reviewer"]  # fmt: skip
    for agent in everyone:
        with OrchestratorService(settings.model_copy(update={"agent": agent}), workspace=tmp_path) as service:
            names = set(service.tools.names())
            offered = {tool["function"]["name"] for tool in service.tools.to_openai_tools()}
            listed = prompt_of(service).split("Your tools: ")[1].split(". ")[0]
            named = {item.split(" (")[0] for item in re.split(r", (?![^()]*\))", listed)}
            assert named == offered, agent
            after_role = prompt_of(service).removeprefix(ROLES[agent])  # the role's verbs ("write") are not tools
            mentioned = set(_tool_words(after_role)) & _all_tool_names(service)
            assert mentioned <= names, (agent, mentioned - names)


def prompt_of(service: OrchestratorService) -> str:
    assert service.system_prompt is not None
    return service.system_prompt


def _tool_words(text: str) -> list[str]:
    return [word.strip(".,;:()'\"") for word in text.split()]


def _all_tool_names(service: Any) -> set[str]:
    return set(service.registry.names()) | {"edit", "write", "patch", "bash", "task", "todowrite", "skill"}


def test_several_registries_join_and_a_clash_between_them_is_an_error(settings: Settings) -> None:
    first, second = LocalToolRegistry(), LocalToolRegistry()
    first.register(EchoTool())
    second.register(shout)
    with OrchestratorService(settings, tools=[first, second], builtins=False) as service:
        assert service.registry.names() == ["echo", "shout"]
    again = LocalToolRegistry()
    again.register(shout)
    with pytest.raises(ServiceConfigError, match=r"your tool name\(s\) 'shout' are registered already"):
        OrchestratorService(settings, tools=[second, again], builtins=False)
