"""HTTPAdapter against a real loopback server: mapping, retries, Retry-After, auth, limits."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from email.utils import format_datetime
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.external import AuthConfig, ExternalTool, HTTPAdapter, ToolConfig

TOKEN = "tok-SECRET-1234567890"


def _config(url: str, **endpoint: Any) -> ToolConfig:
    ep = {"path": "/items/{item_id}", "description": "Fetch one item.", **endpoint}
    return ToolConfig.model_validate(
        {
            "id": "shop",
            "name": "shop",
            "adapter_type": "http",
            "description": "Shop API.",
            "auth": {"env_var": "SHOP_TOKEN"},
            "config": {
                "base_url": url,
                "endpoints": {"item": ep},
                "headers": {"X-Client": "tooldeck-tests"},
                "timeout": 2.0,
                "max_attempts": 3,
                "retry_after_cap": 5.0,
            },
        }
    )


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def adapter_for(ext_http_server: Any, sleeps: Sleeps) -> Iterator[Any]:
    made: list[HTTPAdapter] = []

    def make(**endpoint: Any) -> HTTPAdapter:
        adapter = HTTPAdapter(
            [_config(ext_http_server.url, **endpoint)],
            env={"SHOP_TOKEN": TOKEN},
            sleep=sleeps,
            clock=lambda: 1_000_000.0,
        )
        made.append(adapter)
        return adapter

    yield make
    for adapter in made:
        adapter.close()


def _json(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def test_success_json_with_auth_headers_and_markdown(ext_http_server: Any, adapter_for: Any) -> None:
    ext_http_server.script("GET /items/a%2Fb", (200, {}, _json({"id": "a/b", "price": 3})))
    result = adapter_for().execute("shop", "item", {"item_id": "a/b", "expand": "yes"})
    assert result.ok, result
    assert result.data == {"id": "a/b", "price": 3}
    assert result.metadata == {
        "http_status": 200,
        "action": "item",
        "markdown": "- **id**: a/b\n- **price**: 3",
        "http_attempts": 1,
    }
    (req,) = ext_http_server.seen
    assert req.path == "/items/a%2Fb?expand=yes"  # path value quoted, cannot add segments
    assert req.headers["Authorization"] == f"Bearer {TOKEN}"
    assert req.headers["X-Client"] == "tooldeck-tests"


def test_text_output(ext_http_server: Any, adapter_for: Any) -> None:
    ext_http_server.script("GET /items/1", (200, {"Content-Type": "text/plain"}, b"hello\n"))
    result = adapter_for().execute("shop", None, {"item_id": 1})
    assert result.data == "hello\n"


def test_post_body_mapping(ext_http_server: Any, adapter_for: Any) -> None:
    ext_http_server.script("POST /items/7", (201, {}, _json({"ok": True})))
    adapter = adapter_for(method="POST", query=["dry_run"], body=["name", "tags"])
    result = adapter.execute("shop", "item", {"item_id": 7, "name": "x", "tags": ["a"], "dry_run": 1})
    assert result.ok
    (req,) = ext_http_server.seen
    assert req.path == "/items/7?dry_run=1"
    assert json.loads(req.body) == {"name": "x", "tags": ["a"]}
    unknown = adapter.execute("shop", "item", {"item_id": 7, "colour": "red"})
    assert unknown.error is not None
    assert unknown.error.type == "validation_error"
    assert "colour" in unknown.error.message


def test_429_honours_retry_after_seconds(ext_http_server: Any, adapter_for: Any, sleeps: Sleeps) -> None:
    ext_http_server.script(
        "GET /items/1",
        (429, {"Retry-After": "2"}, _json({"message": "slow down"})),
        (200, {}, _json({"id": 1})),
    )
    result = adapter_for().execute("shop", "item", {"item_id": 1})
    assert result.ok
    assert result.metadata["http_attempts"] == 2
    assert sleeps.calls == [2.0]


def test_retry_after_http_date_is_capped(ext_http_server: Any, adapter_for: Any, sleeps: Sleeps) -> None:
    later = format_datetime(datetime.fromtimestamp(1_000_000 + 3600, timezone.utc), usegmt=True)
    ext_http_server.script("GET /items/1", (503, {"Retry-After": later}, b""), (200, {}, _json({"id": 1})))
    assert adapter_for().execute("shop", "item", {"item_id": 1}).ok
    assert sleeps.calls == [5.0]  # one hour asked, retry_after_cap=5


def test_500_then_success_uses_backoff(ext_http_server: Any, adapter_for: Any, sleeps: Sleeps) -> None:
    ext_http_server.script("GET /items/1", (500, {}, b"oops"), (502, {}, b"oops"), (200, {}, _json({"id": 1})))
    result = adapter_for().execute("shop", "item", {"item_id": 1})
    assert result.ok
    assert result.metadata["http_attempts"] == 3
    assert len(sleeps.calls) == 2
    assert all(0 < s <= 8 for s in sleeps.calls)


def test_persistent_5xx_is_retryable_upstream_error(ext_http_server: Any, adapter_for: Any) -> None:
    ext_http_server.script("GET /items/1", (503, {}, _json({"error": {"message": "maintenance"}})))
    result = adapter_for().execute("shop", "item", {"item_id": 1})
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == ("upstream_error", True)
    assert "HTTP 503" in result.error.message
    assert "maintenance" in result.error.message
    assert len(ext_http_server.seen) == 3


@pytest.mark.parametrize(
    ("status", "etype"),
    [
        (401, "permission_denied"),
        (403, "permission_denied"),
        (404, "validation_error"),
        (400, "validation_error"),
        (422, "validation_error"),
        (409, "upstream_error"),
    ],
)
def test_client_errors_map_to_types_with_server_message(
    ext_http_server: Any, adapter_for: Any, status: int, etype: str
) -> None:
    # A hostile server echoes the credential back: it must never reach the result.
    body = _json({"message": f"bad item, your header was Bearer {TOKEN}"})
    ext_http_server.script("GET /items/9", (status, {}, body))
    result = adapter_for().execute("shop", "item", {"item_id": 9})
    assert result.error is not None
    assert result.error.type == etype
    assert result.error.retryable is False
    assert "bad item" in result.error.message
    assert TOKEN not in json.dumps(result.to_dict())
    assert len(ext_http_server.seen) == 1


def test_timeout_maps_to_timeout(ext_http_server: Any, adapter_for: Any) -> None:
    def slow(_: Any) -> Any:
        time.sleep(1.0)
        return 200, {}, b"{}"

    ext_http_server.routes["GET /items/1"] = slow
    result = adapter_for().execute("shop", "item", {"item_id": 1}, timeout=0.2)
    assert result.error is not None
    assert result.error.type == "timeout"


def test_connection_refused_is_upstream_error(sleeps: Sleeps) -> None:
    adapter = HTTPAdapter([_config("http://127.0.0.1:9")], env={"SHOP_TOKEN": TOKEN}, sleep=sleeps)
    result = adapter.execute("shop", "item", {"item_id": 1})
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == ("upstream_error", True)
    assert len(sleeps.calls) == 2


def test_missing_secret_and_bad_input(ext_http_server: Any) -> None:
    adapter = HTTPAdapter([_config(ext_http_server.url)], env={})
    assert not adapter.is_available(_config(ext_http_server.url))
    result = adapter.execute("shop", "item", {"item_id": 1})
    assert result.error is not None
    assert "not configured" in result.error.message
    assert ext_http_server.seen == []
    adapter = HTTPAdapter([_config(ext_http_server.url)], env={"SHOP_TOKEN": TOKEN})
    for params in ({}, {"item_id": ".."}, {"item_id": None}):
        bad = adapter.execute("shop", "item", params)
        assert bad.error is not None
        assert bad.error.type == "validation_error"
    unknown = adapter.execute("nope", None, {})
    assert unknown.error is not None
    assert unknown.error.type == "unknown_tool"
    action = adapter.execute("shop", "delete", {})
    assert action.error is not None
    assert action.error.type == "unknown_action"
    assert "item" in action.error.message


def test_oversized_json_is_refused_and_text_is_cut(ext_http_server: Any) -> None:
    config = _config(ext_http_server.url)
    small = config.model_copy(
        update={"config": config.config.model_copy(update={"max_response_bytes": 100})}  # type: ignore[union-attr]
    )
    adapter = HTTPAdapter([small], env={"SHOP_TOKEN": TOKEN})
    ext_http_server.script("GET /items/1", (200, {}, _json({"x": "y" * 500})))
    big = adapter.execute("shop", "item", {"item_id": 1})
    assert big.error is not None
    assert "larger than the configured limit" in big.error.message
    ext_http_server.script("GET /items/2", (200, {"Content-Type": "text/plain"}, b"z" * 500))
    cut = adapter.execute("shop", "item", {"item_id": 2})
    assert cut.ok
    assert cut.data == "z" * 100
    assert cut.metadata["truncated"] is True


def test_invalid_json_from_server(ext_http_server: Any, adapter_for: Any) -> None:
    ext_http_server.script("GET /items/1", (200, {}, b"{not json"))
    result = adapter_for().execute("shop", "item", {"item_id": 1})
    assert result.error is not None
    assert result.error.type == "upstream_error"


def test_through_the_registry(ext_http_server: Any, adapter_for: Any) -> None:
    ext_http_server.script("GET /items/5", (200, {}, _json({"id": 5})))
    adapter = adapter_for()
    registry = LocalToolRegistry()
    registry.register(ExternalTool(_config(ext_http_server.url), adapter=adapter))
    out = registry("shop", item_id="5")
    assert out["data"] == {"id": 5}
    # the adapter's metadata survives the envelope (it was dropped before)
    assert out["_metadata"]["http_status"] == 200
    assert out["_metadata"]["tool_name"] == "shop"
    assert "markdown" in out["_metadata"]
    bad = registry("shop")
    assert bad["error_type"] == "validation_error"
    assert "item_id" in bad["error"]


def test_redirects_followed_with_bearer_but_not_with_custom_secret_header(
    ext_http_server: Any,
) -> None:
    ext_http_server.script("GET /items/1", (302, {"Location": "/moved/1"}, b""))
    ext_http_server.script("GET /moved/1", (200, {}, _json({"id": 1})))
    bearer = HTTPAdapter([_config(ext_http_server.url)], env={"SHOP_TOKEN": TOKEN})
    assert bearer.execute("shop", "item", {"item_id": 1}).data == {"id": 1}
    custom = _config(ext_http_server.url).model_copy(
        update={"auth": AuthConfig(env_var="SHOP_TOKEN", kind="header", header="X-Api-Key")}
    )
    adapter = HTTPAdapter([custom], env={"SHOP_TOKEN": TOKEN})
    result = adapter.execute("shop", "item", {"item_id": 1})
    assert result.error is not None
    assert "redirected (HTTP 302)" in result.error.message
    assert ext_http_server.seen[-1].headers["X-Api-Key"] == TOKEN
    assert ext_http_server.seen[-1].path == "/items/1"


def test_no_retry_when_the_wait_would_exceed_the_call_budget(
    ext_http_server: Any, adapter_for: Any, sleeps: Sleeps
) -> None:
    ext_http_server.script("GET /items/1", (429, {"Retry-After": "5"}, b""))
    result = adapter_for().execute("shop", "item", {"item_id": 1}, timeout=1.0)
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == ("upstream_error", True)
    assert sleeps.calls == []
    assert len(ext_http_server.seen) == 1
