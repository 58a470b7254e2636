"""ModuleAdapter: what the context service runs for a module, its code in the module's worker.

Credentials never reach the worker (it gets per-call placeholders the host swaps for the
values in requests to the module's own API), never come back in results or logs; failures
are reported by type; the class hooks run in the worker only when the module defines them.
The worker is a plain subprocess here (``worker_support``); the HTTP egress is a small
hand-written fake that records what the host would send.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone

import pytest

from shared.modules import EgressRequest, EgressResponse, ModuleManifest, ModuleWorkers, WorkerSpec
from shared.modules.runtime import ModuleAdapter, module_adapter_class
from tests.unit.shared.modules.worker_support import subprocess_workers

SECRET = "sk-live-0123456789"
API = "http://api.example.test/v1"
MANIFEST = ModuleManifest(
    id="runs",
    name="Runs",
    category="fitness",
    api_url=API,
    auth_type="api_key",
    required_credentials=("api_key",),
)
MODULE = """
from typing import Any
from shared.adapters.base import AdapterError, BaseAdapter


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        mode = config.get("mode")
        key = config["credentials"]["api_key"]
        if mode == "leak":
            return [{"token": key}]
        if mode == "leak-escaped":
            return [{"token": '"' + key + '"'}]
        if mode == "error":
            raise AdapterError("the API refused key " + key)
        if mode == "crash":
            raise ValueError("bad key " + key)
        if mode == "http":
            session = self.http_session()
            answer = session.get(
                config["base_url"] + "/items", params={"key": key}, headers={"X-API-Key": key},
                auth=("me", key), timeout=5,
            )
            adapter = type(session.get_adapter(config["base_url"])).__name__
            return [{"status": answer.status_code, "body": answer.json(), "adapter": adapter}]
        if mode == "outside":
            try:
                self.http_session().get("http://api.example.test/v2/admin", headers={"X-API-Key": key}, timeout=5)
            except Exception as exc:
                return [{"refused": type(exc).__name__, "message": str(exc)}]
        return [{"n": 1, "config": sorted(config), "key_shape": key[:20]}]

    def transform(self, raw):
        return list(raw)

    @classmethod
    def normalize_for_tools(cls, data):
        if data == "explode":
            raise ZeroDivisionError
        if data == "list":
            return ["not", "a", "dict"]
        if data == "key":
            return {}["missing"]
        return {"count": len(data)}

    @classmethod
    def context_payload(cls, records, *, now, options):
        return {"records": len(records), "day": now.date().isoformat(), "options": dict(options)}
"""


@dataclass
class FakeEgress:
    """Records each request the host would send and answers with the API's echo of it."""

    sent: list[EgressRequest] = field(default_factory=list)
    answer: Callable[[EgressRequest], bytes] = field(default=lambda request: b"{}")

    def send(self, request: EgressRequest) -> EgressResponse:
        self.sent.append(request)
        return EgressResponse(200, "OK", (("Content-Type", "application/json"),), self.answer(request), request.url)


@pytest.fixture(scope="module")
def egress() -> FakeEgress:
    return FakeEgress()


@pytest.fixture(scope="module")
def workers(egress: FakeEgress) -> Iterator[ModuleWorkers]:
    started = subprocess_workers(egress)
    yield started
    started.close()


@pytest.fixture(scope="module")
def cls(workers: ModuleWorkers) -> type[ModuleAdapter]:
    worker = workers.start(WorkerSpec("runs", "v3", MODULE, "Adapter", API))
    return module_adapter_class(MANIFEST, "v3", worker, lambda: {"api_key": SECRET})


@pytest.fixture(autouse=True)
def _clear(egress: FakeEgress) -> None:
    egress.sent.clear()
    egress.answer = lambda request: json.dumps({"echo": request.url}).encode()


def test_a_fetch_gets_the_base_url_and_placeholders_not_credentials(cls: type[ModuleAdapter]) -> None:
    adapter = cls(session=object(), http_timeout=2.0)  # an injected session is ignored
    result = adapter.fetch({"mode": "ok"})
    assert result.success, result.error
    assert result.data == [{"n": 1, "config": ["base_url", "credentials", "mode"], "key_shape": "tooldeck-credential-"}]
    assert result.metadata == {"module_id": "runs", "version_id": "v3"}
    assert SECRET not in repr(vars(adapter))
    assert adapter.cache_token({}) == ("module", "runs", "v3")


def test_the_host_puts_the_credentials_into_requests_to_the_api(cls: type[ModuleAdapter], egress: FakeEgress) -> None:
    egress.answer = lambda request: json.dumps({"echo": request.url, "key": SECRET}).encode()
    raw = cls().fetch_raw({"mode": "http"})
    (sent,) = egress.sent
    assert sent.url == f"{API}/items?key={SECRET}"
    headers = dict(sent.headers)
    assert headers["X-API-Key"] == SECRET
    assert base64.b64decode(headers["Authorization"].split()[1]).decode() == f"me:{SECRET}"
    (record,) = raw
    assert (record["status"], record["adapter"]) == (200, "PipeAdapter")
    # the API's answer holds the key: the worker sees its placeholder instead (and records
    # that carry one are not served, see below)
    assert record["body"]["key"].startswith("tooldeck-credential-")
    assert SECRET not in json.dumps(raw)


def test_a_request_outside_the_api_url_is_refused_before_anything_is_sent(
    cls: type[ModuleAdapter], egress: FakeEgress
) -> None:
    result = cls().fetch({"mode": "outside"})
    assert egress.sent == []
    assert result.data == [
        {
            "refused": "RefusedByHost",
            "message": f"the module may only reach URLs under its api_url ({API}); "
            "refused a request to http://api.example.test",
        }
    ]


def test_missing_credentials_say_how_to_store_them(workers: ModuleWorkers, cls: type[ModuleAdapter]) -> None:
    empty = module_adapter_class(MANIFEST, "v3", cls.worker, lambda: {})
    assert empty().fetch({}).error == (
        "module runs needs the credentials api_key; store them with "
        "module_admin(action='store_credentials', module_id='runs', ...)"
    )


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("leak", "the module runs put one of its credentials in its data; the data is withheld"),
        ("leak-escaped", "the module runs put one of its credentials in its data; the data is withheld"),
        ("http", "the module runs put one of its credentials in its data; the data is withheld"),
        ("error", "the API refused key [redacted]"),
        ("crash", "the module runs failed (ValueError)"),
    ],
)
def test_credentials_never_leave_in_results_or_logs(
    cls: type[ModuleAdapter], egress: FakeEgress, mode: str, error: str, caplog: pytest.LogCaptureFixture
) -> None:
    egress.answer = lambda request: json.dumps({"key": SECRET}).encode()
    caplog.set_level(logging.DEBUG)
    result = cls().fetch({"mode": mode})
    assert (result.success, result.error, result.data) == (False, error, [])
    assert SECRET not in str(result.to_dict())
    assert SECRET not in caplog.text and "tooldeck-credential-" not in caplog.text


def test_normalize_for_tools_failures_become_shape_errors(cls: type[ModuleAdapter]) -> None:
    assert cls.normalize_for_tools([1, 2]) == {"count": 2}
    with pytest.raises(ValueError, match=r"module runs could not summarise its data \(ZeroDivisionError\)"):
        cls.normalize_for_tools("explode")
    with pytest.raises(KeyError, match="KeyError"):
        cls.normalize_for_tools("key")
    with pytest.raises(TypeError, match="could not summarise its data"):
        cls.normalize_for_tools("list")


def test_class_hooks_run_in_the_worker_only_when_the_module_defines_them(cls: type[ModuleAdapter]) -> None:
    assert cls.worker.overrides == {"normalize_for_tools", "context_payload"}
    now = datetime(2026, 11, 26, 9, tzinfo=timezone.utc)
    payload = cls.context_payload([{"a": 1}, {"a": 2}], now=now, options={"days": 3})
    assert payload == {"records": 2, "day": "2026-11-26", "options": {"days": 3}}
    assert cls.merge_records([[1], [2, 3]]) == [1, 2, 3]  # BaseAdapter's default, run here


def test_the_class_describes_the_module(cls: type[ModuleAdapter]) -> None:
    capabilities = cls().get_capabilities()
    assert (capabilities.category, capabilities.platform, capabilities.offline) == ("fitness", "runs", False)
