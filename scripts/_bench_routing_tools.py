"""The tools ``scripts/bench_routing.py`` routes: the coding tools with realistic schemas, and
tooldeck's own builtin tools as ``OrchestratorService`` registers them.

:class:`SchemaTool` (a tool defined by name, description and schema) and the schema helpers
``obj``, ``s`` and ``i`` also build the generated service tools of
``scripts/_bench_routing_services.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tools import BaseTool, LocalToolRegistry
from tools.routing import CODING_TOOL_MANUALS_BY_NAME, DEFAULT_AGENT_PROFILES


class SchemaTool(BaseTool[dict[str, Any], dict[str, Any]]):
    """A tool defined by name, description and JSON schema (stands in for real implementations)."""

    def __init__(self, name: str, description: str, parameters: dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters

    def execute_internal(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}


def obj(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def i(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


#: The coding tools with realistic descriptions and schemas (opencode-like).
CODING_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "read": (
        "Read a file from the workspace. Returns the lines with line numbers. By default reads up to 2000 "
        "lines from the start; pass offset and limit for long files. Use it before editing a file.",
        obj(
            ["file_path"],
            file_path=s("Path of the file, relative to the workspace root."),
            offset=i("Line number to start reading from (1-based).", minimum=1),
            limit=i("Most lines to read.", minimum=1, maximum=2000),
        ),
    ),
    "glob": (
        "Find files by glob pattern, e.g. 'src/**/*.py'. Returns matching paths sorted by modification time. "
        "Use it to locate files by name; use grep to search their contents.",
        obj(["pattern"], pattern=s("Glob pattern."), path=s("Directory to search in (default: workspace root).")),
    ),
    "grep": (
        "Search file contents with a regular expression. Returns matching files (or lines with include_lines). "
        "Filter files with include, e.g. '*.ts'.",
        obj(
            ["pattern"],
            pattern=s("Regular expression (Python syntax)."),
            path=s("Directory to search in."),
            include=s("Glob of files to search, e.g. '*.py'."),
            include_lines=s("Return matching lines, not only file names.", enum=["yes", "no"]),
        ),
    ),
    "edit": (
        "Replace an exact string in a file with another. old_string must match the file exactly, including "
        "indentation, and be unique unless replace_all is set. Read the file first.",
        obj(
            ["file_path", "old_string", "new_string"],
            file_path=s("Path of the file to change."),
            old_string=s("The exact text to replace."),
            new_string=s("The text to put instead."),
            replace_all=s("Replace every occurrence.", enum=["yes", "no"]),
        ),
    ),
    "write": (
        "Write a file, creating it or overwriting it completely. Prefer edit for changes to existing files; "
        "never write files the user did not ask for.",
        obj(["file_path", "content"], file_path=s("Path of the file."), content=s("The whole new content.")),
    ),
    "patch": (
        "Apply a unified diff to one or more files of the workspace. Fails without changing anything when a "
        "hunk does not apply.",
        obj(["patch"], patch=s("The unified diff, with ---/+++ headers and @@ hunks.")),
    ),
    "bash": (
        "Run a shell command in the workspace and return stdout, stderr and the exit code. Commands time out "
        "after 2 minutes unless timeout is set. Use it for tests, builds and git; do not use it to read or "
        "search files (use read, glob and grep).",
        obj(
            ["command"],
            command=s("The command line."),
            timeout=i("Seconds before the command is killed.", minimum=1, maximum=600),
            description=s("Five to ten words saying what the command does."),
        ),
    ),
    "webfetch": (
        "Fetch a URL and return its content as markdown, text or HTML. Use it to read documentation pages.",
        obj(
            ["url"],
            url=s("The http(s) URL."),
            format=s("Format of the returned content.", enum=["markdown", "text", "html"]),
            timeout=i("Seconds to wait.", minimum=1, maximum=120),
        ),
    ),
    "websearch": (
        "Search the web and return titles, URLs and snippets of the best results.",
        obj(["query"], query=s("Search query."), limit=i("Number of results.", minimum=1, maximum=20)),
    ),
    "task": (
        "Launch a sub-agent for a multi-step task and return its final answer. Choose the agent type that fits "
        "(explore for finding code, coder for implementing, reviewer for reviewing); give it a complete, "
        "self-contained prompt, because it does not see this conversation.",
        obj(
            ["description", "prompt", "subagent_type"],
            description=s("Three to five words describing the task."),
            prompt=s("The full task for the sub-agent."),
            subagent_type=s("The agent type.", enum=list(DEFAULT_AGENT_PROFILES)),
        ),
    ),
    "skill": (
        "Load a skill: step-by-step instructions for a kind of task (code review, test generation, validation).",
        obj(["name"], name=s("The skill's name.")),
    ),
    "todowrite": (
        "Replace the session's todo list. Use it to plan multi-step work and to mark items done as you go.",
        obj(
            ["todos"],
            todos={
                "type": "array",
                "description": "The whole list.",
                "items": obj(
                    ["content", "status"],
                    content=s("What to do."),
                    status=s("Its state.", enum=["pending", "in_progress", "completed"]),
                ),
            },
        ),
    ),
    "todoread": ("Read the session's todo list.", obj([])),
    "lsp": (
        "Ask the language server about code: go to definition, find references, list document symbols or get "
        "diagnostics for a position in a file.",
        obj(
            ["operation", "file_path"],
            operation=s("What to ask.", enum=["definition", "references", "symbols", "diagnostics"]),
            file_path=s("The file."),
            line=i("Line (1-based).", minimum=1),
            character=i("Column (1-based).", minimum=1),
        ),
    ),
}


def register_coding_tools(registry: LocalToolRegistry) -> None:
    for name, (description, parameters) in CODING_SCHEMAS.items():
        registry.register(SchemaTool(name, description, parameters), manual=CODING_TOOL_MANUALS_BY_NAME[name])


def register_builtin_tools(registry: LocalToolRegistry) -> list[Callable[[], None]]:
    """tooldeck's own tools, as ``OrchestratorService`` registers them; returns their closers."""
    from tools.builtin import (
        CodeExecutorTool,
        ContextBridge,
        KnowledgeSearchTool,
        KnowledgeStoreTool,
        MathSolverTool,
        SqliteKnowledgeStore,
        UserContextTool,
        WebTool,
    )
    from tools.builtin.legacy import legacy_tools

    math, code, store = MathSolverTool(), CodeExecutorTool(), SqliteKnowledgeStore(":memory:")
    context = UserContextTool(context_bridge=ContextBridge("http://127.0.0.1:9"))
    web = WebTool()
    tools: list[BaseTool[Any, Any]] = [math, KnowledgeStoreTool(store=store), KnowledgeSearchTool(store=store), code]
    tools += [web, context, *legacy_tools(web=web, user_context=context)]
    for tool in tools:
        registry.register(tool)
    return [math.close, code.close, store.close]
