"""The library never prints on its own (DESIGN section 12, issue 21 item 9).

An application that calls a tool many times with bad input, without configuring logging,
used to get one ``WARNING`` line on stderr per call (Python's last-resort handler prints
records of loggers with no handler). The ``tools``, ``shared`` and ``orchestrator`` loggers
carry a ``NullHandler``, so nothing reaches stderr until the application configures logging,
and then everything does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

APP = textwrap.dedent(
    """
    import logging, sys
    from tools import LocalToolRegistry
    import orchestrator, shared  # their loggers too

    registry = LocalToolRegistry()

    @registry.tool
    def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b

    for _ in range(2000):
        assert registry.call_tool("add", a="not a number", b=1).status == "error"
    for name in ("orchestrator.graph.tools_node", "shared.adapters", "tools.registry"):
        logging.getLogger(name).warning("a library warning from %s", name)
    if sys.argv[1:] == ["configured"]:
        logging.basicConfig(level=logging.WARNING)
        registry.call_tool("add", a="x", b=1)
    """
)


def run_app(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", APP, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_failed_calls_print_nothing_when_the_application_did_not_configure_logging() -> None:
    result = run_app()
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == ""


def test_an_application_that_configures_logging_sees_the_warnings() -> None:
    result = run_app("configured")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("WARNING:tools.registry:tool call failed: tool='add'")


def test_each_package_logger_has_a_null_handler() -> None:
    import logging

    import orchestrator
    import shared
    import tools

    for package in (tools, shared, orchestrator):
        handlers = logging.getLogger(package.__name__).handlers
        assert any(isinstance(h, logging.NullHandler) for h in handlers), package.__name__
