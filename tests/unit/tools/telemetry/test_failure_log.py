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


def test_no_record_is_made_when_only_null_handlers_would_see_it() -> None:
    made: list[logging.LogRecord] = []
    factory = logging.getLogRecordFactory()

    def counting(*args: object, **kwargs: object) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        made.append(record)
        return record

    quiet = logging.getLogger("tests.failure_log.quiet")
    quiet.propagate = False
    quiet.addHandler(logging.NullHandler())
    failure = ToolResult.failure("timeout", "slow", metadata={"tool_name": "t", "request_id": "r-1"})
    logging.setLogRecordFactory(counting)
    try:
        log_tool_failure(quiet, failure)
        assert made == []  # nobody would show it: nothing was built
        shown_to: list[str] = []

        class Collect(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                shown_to.append(record.getMessage())

        quiet.addHandler(Collect())
        log_tool_failure(quiet, failure)
        assert shown_to == ["tool call failed: tool='t' request_id=r-1 error_type=timeout"]
        assert len(made) == 1
    finally:
        logging.setLogRecordFactory(factory)


def test_without_any_handler_the_last_resort_would_print_so_the_line_is_made() -> None:
    from tools._failure_log import shown

    bare = logging.getLogger("tests.failure_log.bare")
    bare.propagate = False
    assert bare.handlers == []
    assert shown(bare, logging.WARNING)  # logging's last resort prints WARNING to stderr
    assert not shown(bare, logging.INFO)
    bare.setLevel(logging.ERROR)
    assert not shown(bare, logging.WARNING)


def test_the_library_loggers_print_nothing_until_the_application_configures_logging() -> None:
    from tools._failure_log import shown

    tools_logger = logging.getLogger("tools")
    assert any(type(h) is logging.NullHandler for h in tools_logger.handlers)
    registry_logger = logging.getLogger("tools.registry")
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = []
    try:
        assert not shown(registry_logger, logging.WARNING)
        root.addHandler(logging.StreamHandler())
        assert shown(registry_logger, logging.WARNING)
    finally:
        root.handlers = saved
