"""Suite-wide fixtures: nothing here may touch the network or the user's files."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``) the real-LLM tests share one worker, so the
    llama.cpp server (a session fixture) starts once and CPU inference never runs twice at once."""
    for item in items:
        if item.get_closest_marker("llm") is not None:
            item.add_marker(pytest.mark.xdist_group("llm"))
