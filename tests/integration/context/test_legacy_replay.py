"""A stored conversation's old tool calls, replayed: every old name with its old arguments.

The conversation below was made against the 27 pre-1.0 functions (the module tools are a
later issue). Its tool calls are replayed through a ToolsNode, as the orchestrator does
when a stored conversation continues, against the real tools: the context service on a
loopback port, SQLite knowledge stores, the sympy workers, the local sandbox, and web pages
and a SearXNG-style search API on a loopback server. Each result must be what the new tool
gives for the mapped call, made by hand on a twin registry (its own knowledge store).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from orchestrator.graph import ToolsNode
from tools import LocalToolRegistry, ToolResult
from tools.builtin import (
    CodeExecutorTool,
    ContextBridge,
    KnowledgeSearchTool,
    KnowledgeStoreTool,
    MathSolverTool,
    SearxngSearchBackend,
    SqliteKnowledgeStore,
    UserContextTool,
    WebTool,
    legacy_tools,
)

pytest.importorskip("trafilatura")

KEY = "replay-key"
PARAGRAPH = (
    "<p>Paragraph {i}: solar panels turn sunlight into electricity with photovoltaic cells, "
    "and their output falls slowly over the decades of a typical installation.</p>"
)
LONG_PAGE = (
    "<html><head><title>Solar</title></head><body><article>"
    + "".join(PARAGRAPH.format(i=i) for i in range(120))
    + '<p>See <a href="/more">more</a>.</p></article></body></html>'
).encode()


class _Web(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.startswith("/search"):
            hits = [
                {"title": f"Solar {i}", "url": f"https://example.org/solar/{i}", "content": f"About solar {i}."}
                for i in range(8)
            ]
            body, kind = json.dumps({"results": hits}).encode(), "application/json"
        elif self.path == "/article":
            body, kind = LONG_PAGE, "text/html; charset=utf-8"
        else:
            body, kind = b"not found", "text/plain"
        self.send_response(200 if kind != "text/plain" else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def web_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Web)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


@dataclass
class Twins:
    """The registry the conversation replays on, and a twin for the hand-mapped calls."""

    old: LocalToolRegistry
    new: LocalToolRegistry


@pytest.fixture
def twins(
    tmp_path: Path,
    web_url: str,
    scripted: Any,
    start_service: Callable[..., Any],
    make_config: Callable[..., dict[str, Any]],
) -> Iterator[Twins]:
    service = start_service(make_config(scripted.url), api_key=KEY)
    math, code = MathSolverTool(), CodeExecutorTool()
    web = WebTool(search_backend=SearxngSearchBackend(web_url), allow_networks=["127.0.0.1/32"])
    context = UserContextTool(context_bridge=ContextBridge(service.url, api_key=KEY))
    stores = [SqliteKnowledgeStore(tmp_path / f"{side}.sqlite3") for side in ("old", "new")]
    registries = []
    for store in stores:
        registry = LocalToolRegistry()
        for tool in (math, code, web, context, KnowledgeStoreTool(store=store), KnowledgeSearchTool(store=store)):
            registry.register(tool)
        for alias in legacy_tools(web=web, user_context=context):
            registry.register(alias)
        registries.append(registry)
    yield Twins(*registries)
    math.close()
    code.close()
    for store in stores:
        store.close()


ARTICLE = "{web}/article"

#: One turn of the stored conversation: (old name, old arguments as stored, new name, mapped arguments).
Turn = list[tuple[str, dict[str, Any], str, dict[str, Any]]]

TURNS: list[Turn] = [
    [
        (
            "store_knowledge",
            {"text": "The tax return is due on 30 June.", "metadata": {"source": "letter", "tags": ["tax"]}},
            "store_knowledge",
            {"text": "The tax return is due on 30 June.", "source": "letter", "tags": ["tax"]},
        ),
        (
            "web_search",
            {"query": "solar panels", "num_results": 3},
            "web",
            {"action": "search", "query": "solar panels", "count": 3},
        ),
        ("load_web_page", {"url": ARTICLE}, "web", {"action": "load", "url": ARTICLE, "max_chars": 8000}),
        (
            "load_web_page",
            {"url": ARTICLE, "extract_links": True, "max_chars": 1000},
            "web",
            {"action": "load", "url": ARTICLE, "include_links": True, "max_chars": 1000},
        ),
        ("execute_code", {"code": "print(6 * 7)", "language": "python"}, "execute_code", {"code": "print(6 * 7)"}),
        (
            "get_user_context",
            {"categories": ["calendar", "weather"], "include_alerts": True, "destination": None},
            "user_context",
            {"category": ["calendar", "weather"]},
        ),
        ("get_user_context", {}, "user_context", {}),
        ("get_daily_briefing", {}, "user_context", {"category": "all", "action": "summary"}),
        (
            "get_commute_time",
            {"destination": "office"},
            "user_context",
            {"category": "commute", "destination": "office"},
        ),
        (
            "query_finance",
            {"action": "transactions", "category": "Groceries"},
            "user_context",
            {
                "category": "finance",
                "action": "query",
                "finance_action": "transactions",
                "transaction_category": "Groceries",
                "per_page": 10,
            },
        ),
        (
            "query_finance",
            {"action": "summary", "date_from": "2026-11-01", "date_to": "2026-11-30"},
            "user_context",
            {
                "category": "finance",
                "finance_action": "summary",
                "group_by": "category",
                "date_from": "2026-11-01",
                "date_to": "2026-11-30",
            },
        ),
        (
            "query_finance",
            {"action": "search", "search": "pingo doce", "sort": "amount", "sort_dir": "asc", "page": 2, "per_page": 2},
            "user_context",
            {
                "finance_action": "search",
                "search": "pingo doce",
                "sort": "amount",
                "sort_dir": "asc",
                "page": 2,
                "per_page": 2,
            },
        ),
        (
            "query_finance",
            {},
            "user_context",
            {"category": "finance", "finance_action": "transactions", "per_page": 10},
        ),
    ],
    [
        (
            "search_knowledge",
            {"query": "tax return", "top_k": 1},
            "search_knowledge",
            {"query": "tax return", "limit": 1},
        ),
        ("search_knowledge", {"query": "tax"}, "search_knowledge", {"query": "tax"}),
    ],
]

MATH_TURN: Turn = [
    ("math_solver", {"expression": "12*(3+4)"}, "math_solver", {"expression": "12*(3+4)", "show_steps": True}),
]

#: Keys whose values differ between two runs of the same call.
VOLATILE = {"duration_ms", "stored_at"}


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _fill(arguments: dict[str, Any], web: str) -> dict[str, Any]:
    return {k: v.format(web=web) if isinstance(v, str) and "{web}" in v else v for k, v in arguments.items()}


def _replay(twins: Twins, turns: list[Turn], web: str) -> None:
    node = ToolsNode(twins.old, max_parallel=4)
    try:
        for number, turn in enumerate(turns):
            calls = [
                {
                    "id": f"call_{number}_{i}",
                    "type": "function",
                    "function": {"name": old, "arguments": json.dumps(_fill(args, web))},
                }
                for i, (old, args, _, _) in enumerate(turn)
            ]
            update = node({"messages": [{"role": "assistant", "content": None, "tool_calls": calls}]})
            for message, (old, args, new, mapped) in zip(update["messages"], turn, strict=True):
                replayed = json.loads(message["content"])
                expected: ToolResult = twins.new.call_tool(new, **_fill(mapped, web))
                assert replayed["status"] == expected.status == "success", (old, args, replayed)
                assert _stable(replayed["data"]) == _stable(expected.data), (old, args)
    finally:
        node.close()


def test_every_old_call_gives_what_the_new_tool_gives_for_the_mapped_call(twins: Twins, web_url: str) -> None:
    _replay(twins, TURNS, web_url)


def test_math_solver_keeps_its_old_show_steps_default(twins: Twins, web_url: str) -> None:
    _replay(twins, [MATH_TURN], web_url)


def test_old_defaults_matter(twins: Twins, web_url: str) -> None:
    """The mapped calls above pass the old defaults; without them the new tool differs."""
    page = twins.old.call_tool("load_web_page", url=f"{web_url}/article")
    assert page.data["truncated"] is True
    assert len(page.data["text"]) <= 8000
    assert len(twins.new.call_tool("web", action="load", url=f"{web_url}/article").data["text"]) > 8000
    old = twins.old.call_tool("query_finance").data["result"]
    assert (old["per_page"], old["sort"]) == (10, "date")
    assert twins.new.call_tool("user_context", category="finance", action="query").data["result"]["per_page"] == 20


def test_old_metadata_keys_are_stored(twins: Twins) -> None:
    stored = twins.old.call_tool(
        "store_knowledge", text="Solar output falls slowly.", metadata={"topic": "energy", "tags": "solar"}
    )
    assert stored.error is None, stored.error
    (hit,) = twins.old.call_tool("search_knowledge", query="solar output", tag="solar").data["results"]
    assert hit["tags"] == ["solar"]
