"""``tools._terminal``: text printed for people never drives their terminal (issue 20 item 14)."""

from __future__ import annotations

import io
import json
import logging

import pytest
from rich.table import Table

from tools._failure_log import FAILURE_FORMAT
from tools._terminal import (
    SafeConsole,
    cli_logging,
    dumps_for_terminal,
    json_safe,
    level_for,
    markup_safe,
    safe_text,
    terminal_safe,
)

OSC52 = "\x1b]52;c;aGVsbG8=\x07"
HOSTILE = f"a{OSC52}b\x1b[2J\x9b31m\u202eevil\u2066\rc\x00\x7f"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, tabs\tand\nnewlines", "plain text, tabs\tand\nnewlines"),
        ("ünïcode ✓ 日本", "ünïcode ✓ 日本"),
        (OSC52, "\\x1b]52;c;aGVsbG8=\\x07"),
        ("\x1b[2J\x1b[1;1H", "\\x1b[2J\\x1b[1;1H"),
        ("8-bit CSI \x9b31m and OSC \x9d", "8-bit CSI \\x9b31m and OSC \\x9d"),
        ("bidi \u202eevil\u202c and \u2066isolate\u2069", "bidi \\u202eevil\\u202c and \\u2066isolate\\u2069"),
        ("carriage\rreturn, bell\x07, nul\x00, del\x7f", "carriage\\x0dreturn, bell\\x07, nul\\x00, del\\x7f"),
        ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
    ],
)
def test_terminal_safe_shows_every_control_as_an_escape(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_one_line_fields_escape_newlines_too() -> None:
    assert terminal_safe("a\nb\x1b", newlines=False) == "a\\nb\\x1b"


def test_json_output_keeps_its_values_and_loses_its_controls() -> None:
    value = {"data": HOSTILE, "list": ["\x85", "ok"]}
    text = dumps_for_terminal(value)
    assert json.loads(text) == value
    assert not any(ch in text for ch in "\x1b\x07\x9b\x85\u202e\u2066\r\x00\x7f")
    assert json_safe('"\u202e"') == '"\\u202e"'


def render(printable: object, **options: object) -> str:
    out = io.StringIO()
    console = SafeConsole(file=out, width=200, force_terminal=True, color_system=None)
    console.print(printable, **options)  # type: ignore[arg-type]
    return out.getvalue()


def test_the_safe_console_prints_markup_as_text_and_controls_as_escapes() -> None:
    shown = render(f"pip install -e '.[mcp]' [red]x[/] {HOSTILE}")
    assert "pip install -e '.[mcp]' [red]x[/]" in shown
    assert "\\x1b]52" in shown and "\x1b]52" not in shown and "\x9b" not in shown


def test_markup_on_request_with_untrusted_parts_escaped() -> None:
    shown = render(f"[bold]ready[/]: {markup_safe('[mcp] ' + OSC52)}", markup=True)
    assert "ready: [mcp] \\x1b]52;c;aGVsbG8=\\x07" in shown


def test_table_cells_and_styled_text_are_safe() -> None:
    table = Table()
    table.add_column("tool")
    table.add_column("status")
    table.add_row(f"evil{OSC52}", safe_text(f"red {OSC52}", "red"))
    shown = render(table)
    assert "\x07" not in shown and "\x1b]52" not in shown
    assert shown.count("\\x1b]52") == 2


@pytest.mark.parametrize(
    ("verbose", "quiet", "level"),
    [(0, 0, logging.WARNING), (1, 0, logging.INFO), (2, 0, logging.DEBUG), (5, 0, logging.DEBUG),
     (0, 1, logging.ERROR), (0, 2, logging.CRITICAL), (2, 1, logging.ERROR)],
)  # fmt: skip
def test_verbosity_flags(verbose: int, quiet: int, level: int) -> None:
    assert level_for(verbose, quiet) == level


@pytest.fixture
def restore_root() -> object:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


def test_cli_logging_is_safe_installs_once_and_hides_per_call_failures(restore_root: logging.Logger) -> None:
    stream = io.StringIO()
    cli_logging(logging.WARNING, stream)
    cli_logging(logging.WARNING, stream)  # a second CLI run in one process: still one handler
    log = logging.getLogger("tools.registry")
    log.warning(FAILURE_FORMAT, "add", "r-1", "validation_error")
    log.warning("something for people: %s", OSC52)
    assert stream.getvalue() == "WARNING tools.registry: something for people: \\x1b]52;c;aGVsbG8=\\x07\n"

    verbose = io.StringIO()
    cli_logging(logging.INFO, verbose)
    log.warning(FAILURE_FORMAT, "add", "r-2", "validation_error")
    assert "tool call failed: tool='add' request_id=r-2" in verbose.getvalue()
