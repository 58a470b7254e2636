"""ModuleAdapter: what the context service runs for a module. Credentials only for the
call, never in results or logs; failures reported by type; a confined session."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest

from shared.adapters.base import AdapterError, BaseAdapter
from shared.modules import ConfinedSession, ModuleManifest
from shared.modules.runtime import module_adapter_class

SECRET = "sk-live-0123456789"
MANIFEST = ModuleManifest(
    id="runs",
    name="Runs",
    category="fitness",
    api_url="http://127.0.0.1:9/api",
    auth_type="api_key",
    required_credentials=("api_key",),
)


class Inner(BaseAdapter[dict[str, Any]]):
    """Behaves as ``config["mode"]`` says."""

    seen: list[Mapping[str, Any]] = []

    def fetch_raw(self, config: Mapping[str, Any]) -> Any:
        Inner.seen.append(dict(config))
        mode = config.get("mode")
        key = config["credentials"]["api_key"]
        if mode == "leak":
            return [{"token": key}]
        if mode == "leak-escaped":
            return [{"token": f'"{key}"'}]
        if mode == "error":
            raise AdapterError(f"the API refused key {key}")
        if mode == "crash":
            raise ValueError(f"bad key {key}")
        return [{"n": 1, "session": type(self.http_session()).__name__}]

    def transform(self, raw: Any) -> list[dict[str, Any]]:
        return list(raw)

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        if data == "explode":
            raise ZeroDivisionError
        if data == "list":
            return ["not", "a", "dict"]  # type: ignore[return-value]
        return {"count": len(data)}


def adapter_class(credentials: Mapping[str, str] | None = None) -> Any:
    values = {"api_key": SECRET} if credentials is None else credentials
    return module_adapter_class(MANIFEST, "v3", Inner, lambda: values)


@pytest.fixture(autouse=True)
def _reset() -> None:
    Inner.seen = []


def test_a_fetch_gets_base_url_credentials_and_a_confined_session() -> None:
    cls = adapter_class()
    adapter = cls(session=object(), http_timeout=2.0)  # an injected session is replaced
    result = adapter.fetch({"mode": "ok"})
    assert result.success and result.data == [{"n": 1, "session": "ConfinedSession"}]
    assert Inner.seen == [{"mode": "ok", "base_url": "http://127.0.0.1:9/api", "credentials": {"api_key": SECRET}}]
    assert isinstance(adapter._module().http_session(), ConfinedSession)
    assert SECRET not in repr(vars(adapter))
    assert adapter.cache_token({}) == ("module", "runs", "v3")


def test_missing_credentials_say_how_to_store_them() -> None:
    result = adapter_class({})().fetch({})
    assert result.error == (
        "module runs needs the credentials api_key; store them with "
        "module_admin(action='store_credentials', module_id='runs', ...)"
    )
    assert Inner.seen == []


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("leak", "the module runs put one of its credentials in its data; the data is withheld"),
        ("leak-escaped", "the module runs put one of its credentials in its data; the data is withheld"),
        ("error", "the API refused key [redacted]"),
        ("crash", "the module runs failed (ValueError)"),
    ],
)
def test_credentials_never_leave_in_results_or_logs(mode: str, error: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    result = adapter_class()().fetch({"mode": mode})
    assert (result.success, result.error, result.data) == (False, error, [])
    assert SECRET not in str(result.to_dict())
    assert SECRET not in caplog.text


def test_normalize_for_tools_failures_become_shape_errors() -> None:
    cls = adapter_class()
    assert cls.normalize_for_tools([1, 2]) == {"count": 2}
    with pytest.raises(ValueError, match="module runs could not summarise its data"):
        cls.normalize_for_tools("explode")
    with pytest.raises(TypeError, match="must return a dict"):
        cls.normalize_for_tools("list")


def test_the_class_describes_the_module() -> None:
    cls = adapter_class()
    capabilities = cls().get_capabilities()
    assert (capabilities.category, capabilities.platform, capabilities.offline) == ("fitness", "runs", False)
