"""Fixtures for the telemetry integration tests: in-memory span export and a tracer."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tools.telemetry import ToolTracer

Arguments = str | bytes | Mapping[str, Any] | None


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def tracer(provider: TracerProvider) -> ToolTracer:
    return ToolTracer(provider)
