"""The one WARNING line of a failed call: tool, request id, error type; nothing else."""

from __future__ import annotations

import logging

import pytest

from tools import LocalToolRegistry, ToolError, ToolResult
from tools.telemetry import log_tool_failure

logger = logging.getLogger("tests.failure_log")


def secret_tool(password: str) -> str:
    """Fails, echoing its argument."""
    raise ToolError(f"wrong password {password}")


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger.name]


def test_one_warning_line_without_arguments_or_message(caplog: pytest.LogCaptureFixture) -> None:
    registry = LocalToolRegistry()
    registry.register(secret_tool)
    result = registry.call_tool("secret_tool", password="hunter2")
    with caplog.at_level(logging.WARNING, logger=logger.name):
        log_tool_failure(logger, result)
    request_id = result.metadata["request_id"]
    assert lines(caplog) == [f"tool call failed: tool='secret_tool' request_id={request_id} error_type=execution_error"]
    assert caplog.records[-1].levelno == logging.WARNING
    assert "hunter2" not in caplog.text and "wrong password" not in caplog.text


def test_successes_log_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        log_tool_failure(logger, ToolResult.success(1, {"tool_name": "t"}))
    assert lines(caplog) == []


def test_hostile_names_cannot_forge_lines(caplog: pytest.LogCaptureFixture) -> None:
    registry = LocalToolRegistry()
    result = registry.call_tool("x\nINFO forged line" + "y" * 500)
    with caplog.at_level(logging.WARNING, logger=logger.name):
        log_tool_failure(logger, result)
        log_tool_failure(logger, ToolResult.failure("timeout", "slow", metadata={"request_id": "a\nb"}))
    first, second = lines(caplog)
    assert "\n" not in first and "\\n" in first and len(first) < 200
    assert first.endswith("error_type=unknown_tool")
    assert second == "tool call failed: tool='?' request_id=? error_type=timeout"
