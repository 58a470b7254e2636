"""AdapterRegistry, @register_adapter, BaseAdapter.fetch never raising, places."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from shared.adapters import (
    AdapterError,
    AdapterRegistry,
    BaseAdapter,
    CsvFinanceAdapter,
    IcsCalendarAdapter,
    OfxFinanceAdapter,
    Place,
    register_adapter,
    resolve_place,
)


class _Steps(BaseAdapter[int]):
    def fetch_raw(self, config: Mapping[str, Any]) -> Any:
        if config.get("boom"):
            raise RuntimeError("secret token abc123 in a traceback")
        if config.get("fail"):
            raise AdapterError("broken on purpose", source="x.csv", line=3)
        return [1, 2, 3]

    def transform(self, raw: Any) -> list[int]:
        return [n * 10 for n in raw]


def test_decorator_tags_without_global_state() -> None:
    fresh = AdapterRegistry()
    tagged = register_adapter(category="health", platform="steps")(_Steps)
    assert (tagged.category, tagged.platform) == ("health", "steps")
    assert len(fresh) == 0
    assert len(AdapterRegistry()) == 0
    other = AdapterRegistry()

    @register_adapter(category="health", platform="sleep", registry=other)
    class Sleep(_Steps):
        pass

    assert other.get("health", "sleep") is Sleep
    assert fresh.get("health", "sleep") is None


def test_builtin_registry_and_lookup() -> None:
    registry = AdapterRegistry.with_builtin_adapters()
    assert registry.categories() == ["calendar", "finance", "weather", "commute"]
    assert registry.get("calendar", "ics") is IcsCalendarAdapter
    assert registry.for_category("finance") == [CsvFinanceAdapter, OfxFinanceAdapter]
    assert registry.normalizer("finance", "ofx") is OfxFinanceAdapter
    assert registry.normalizer("finance", "unknown") is CsvFinanceAdapter
    assert registry.normalizer("gaming") is None
    with pytest.raises(ValueError, match="already registered"):
        registry.add(type("Other", (CsvFinanceAdapter,), {}))
    with pytest.raises(ValueError, match="no category/platform"):
        AdapterRegistry([type("Bare", (_Steps,), {"category": "", "platform": ""})])


def test_fetch_wraps_success_and_errors() -> None:
    adapter = register_adapter(category="health", platform="steps")(_Steps)()
    ok = adapter.fetch({})
    assert (ok.success, ok.data, ok.raw_count, ok.transformed_count) == (True, [10, 20, 30], 3, 3)
    assert ok.to_dict()["data"] == [10, 20, 30]
    failed = adapter.fetch({"fail": True})
    assert (failed.success, failed.error, failed.data) == (
        False,
        "x.csv line 3: broken on purpose",
        [],
    )


def test_unexpected_exception_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    adapter = register_adapter(category="health", platform="steps")(_Steps)()
    result = adapter.fetch({"boom": True})
    assert result.error == "the steps adapter failed unexpectedly (RuntimeError)"
    assert "abc123" not in (result.error or "")
    assert "failed" in caplog.text  # the traceback goes to the log


def test_capabilities() -> None:
    caps = IcsCalendarAdapter().get_capabilities().to_dict()
    assert caps["category"] == "calendar"
    assert caps["offline"] is True
    assert {"path", "url", "timezone", "horizon_days"} <= set(caps["options"])


def test_resolve_place() -> None:
    places = {"office": Place(lat=38.7, lon=-9.1, label="Office")}
    assert resolve_place("OFFICE", places) == ("Office", places["office"])
    name, place = resolve_place(" 38.5, -9.25 ", places)
    assert (name, place.lat, place.lon) == ("38.5000,-9.2500", 38.5, -9.25)
    with pytest.raises(AdapterError, match=r"unknown place 'mars'; use one of the configured places \(office\)"):
        resolve_place("mars", places)
    with pytest.raises(AdapterError, match="unknown place"):
        resolve_place("95,200", places)
