"""The CLI integration tests reuse the store fixtures (weather API, binaries, tooldeck runner)."""

from tests.integration.store.conftest import binaries, project, tooldeck, weather_api

__all__ = ["binaries", "project", "tooldeck", "weather_api"]
