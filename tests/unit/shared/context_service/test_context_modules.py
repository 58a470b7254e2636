"""ContextAggregator with modules: enabled modules are served per category (each running in
its worker), follow enable and disable without a restart, and one that fails to load is an
error status, not a crash."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from shared.context_service import ContextAggregator, ServiceConfig
from shared.modules import ModuleAdapters, ModuleLayout
from tests.unit.shared.modules.store_support import SIGNER, manifest, put_version, set_index
from tests.unit.shared.modules.worker_support import subprocess_workers

NOW = datetime(2026, 11, 26, 9, 0, tzinfo=timezone.utc)
ADAPTER = """
from shared.adapters.base import BaseAdapter


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        return [{"km": 5.0}, {"km": 7.5}]

    def transform(self, raw):
        return list(raw)
"""


def files(adapter: str = ADAPTER, **changes: Any) -> dict[str, str]:
    return {"manifest.json": manifest(**changes), "adapter.py": adapter}


@pytest.fixture
def layout(tmp_path: Path) -> ModuleLayout:
    layout = ModuleLayout(tmp_path / "store")
    put_version(layout, "runs", "v1", files())
    put_version(layout, "broken", "v1", files("raise ImportError('nope')\n", module_id="broken", category="health"))
    put_version(layout, "cal", "v1", files(module_id="cal", category="calendar"))
    return layout


Aggregator = Callable[..., ContextAggregator]


@pytest.fixture
def aggregator() -> Iterator[Aggregator]:
    """Makes aggregators over a store, their modules run by subprocess workers."""
    workers = subprocess_workers()
    made: list[ModuleAdapters] = []

    def make(layout: ModuleLayout, adapters: list[dict[str, Any]] | None = None) -> ContextAggregator:
        config = ServiceConfig.model_validate({"users": {"default": {"adapters": adapters or []}}})
        made.append(ModuleAdapters(layout, signer=SIGNER, workers=workers))
        return ContextAggregator(config, modules=made[-1], clock=lambda: NOW, max_workers=2)

    yield make
    for modules in made:
        modules.close()
    workers.close()


def test_an_enabled_module_is_served_and_disabling_it_needs_no_restart(
    layout: ModuleLayout, aggregator: Aggregator
) -> None:
    service = aggregator(layout)
    try:
        assert service.context("default", ["fitness"])["categories"]["fitness"]["status"] == "not_configured"
        set_index(layout, {"runs": ("v1", "fitness", True)}, generation=1)
        fitness = service.context("default", ["fitness"])["categories"]["fitness"]
        assert (fitness["status"], fitness["platforms"], fitness["data"]) == (
            "ok",
            ["runs"],
            [{"km": 5.0}, {"km": 7.5}],
        )
        set_index(layout, {"runs": ("v1", "fitness", False)}, generation=2)
        assert service.context("default", ["fitness"])["categories"]["fitness"]["status"] == "not_configured"
    finally:
        service.close()


def test_a_module_that_fails_to_load_is_reported_in_its_category(layout: ModuleLayout, aggregator: Aggregator) -> None:
    set_index(layout, {"runs": ("v1", "fitness", True), "broken": ("v1", "health", True)})
    service = aggregator(layout)
    try:
        categories = service.context("default")["categories"]
        assert categories["fitness"]["status"] == "ok"
        assert categories["health"]["status"] == "error"
        assert (
            categories["health"]["reason"]
            == "module broken could not be loaded: importing adapter.py raised ImportError"
        )
        assert categories["calendar"]["status"] == "not_configured"
    finally:
        service.close()


def test_a_category_the_user_configured_keeps_its_own_sources(
    layout: ModuleLayout, tmp_path: Path, aggregator: Aggregator
) -> None:
    ics = tmp_path / "cal.ics"
    ics.write_text("BEGIN:VCALENDAR\nVERSION:2.0\nEND:VCALENDAR\n")
    set_index(layout, {"cal": ("v1", "calendar", True)})
    service = aggregator(layout, [{"category": "calendar", "platform": "ics", "path": str(ics)}])
    try:
        assert service.context("default", ["calendar"])["categories"]["calendar"]["platforms"] == ["ics"]
    finally:
        service.close()


def test_health_lists_loaded_modules(layout: ModuleLayout, aggregator: Aggregator) -> None:
    set_index(layout, {"runs": ("v1", "fitness", True)})
    service = aggregator(layout)
    try:
        platforms = [a["platform"] for a in service.health()["adapters"]]
        assert platforms[-1] == "runs"
    finally:
        service.close()
