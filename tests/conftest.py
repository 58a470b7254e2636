"""Suite-wide fixtures: nothing here may touch the network or the user's files."""

from __future__ import annotations

from typing import Any

import pytest

#: Tests under this directory share one pytest-xdist worker (``--dist loadgroup``): the
#: llama.cpp server (a session fixture) starts once and CPU inference never runs twice at once.
LLM_TESTS = "tests/integration/llm/"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The real-LLM tests carry the ``xdist_group("llm")`` mark (what the scheduler below
    honours whatever the pytest version) and run first: the longest unit of work starts at
    once, while the other workers share everything else, instead of being the suite's tail."""
    for item in items:
        if item.get_closest_marker("llm") is not None:
            item.add_marker(pytest.mark.xdist_group("llm"))
    items.sort(key=lambda item: item.get_closest_marker("llm") is None)  # stable: the rest keep their order


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` that keeps the LLM tests on one worker.

    xdist groups by a suffix its workers add to each test id, which pytest 9.2 no longer lets
    them add (pytest-xdist issue 1386): the groups were silently ignored, two llama.cpp servers
    started and shared the two cores with everything else. This scheduler groups by the test's
    path instead; every other test is distributed on its own, as before.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling  # type: ignore[import-untyped]

    class _LlmTogether(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return "llm" if nodeid.startswith(LLM_TESTS) else str(super()._split_scope(nodeid))

    return _LlmTogether(config, log)
