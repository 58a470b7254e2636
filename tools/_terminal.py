"""Text for people's terminals: what ``tooldeck`` and ``python -m orchestrator`` print.

Tool results, model answers, error messages and names come from parties we do not trust
(a tool's upstream, a model, an MCP server). Printed raw, their control characters drive
the terminal: OSC 52 writes the clipboard, CSI sequences move the cursor and rewrite what
is already on screen, ``\\r`` hides the start of a line, bidirectional overrides reorder
what is shown. Every print site of the CLIs goes through this module:

* `terminal_safe` for text: control characters become visible escapes (``\\x1b``), so
  what is printed is what was sent, and nothing more happens.
* `json_safe` for JSON text: the same characters become JSON escapes (``\\u001b``), so
  the output is still valid JSON with the same values.
* `SafeConsole`, the rich console of the CLIs: markup is off unless a call asks for it
  (``[mcp]`` in a fix command stays text), and every string it renders is made safe.
* `cli_logging` configures the CLIs' log output (``-v``/``-q``) through the same filter.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console

if TYPE_CHECKING:
    from rich.text import Text

__all__ = [
    "SafeConsole",
    "cli_logging",
    "dumps_for_terminal",
    "json_safe",
    "level_for",
    "markup_safe",
    "print_safe",
    "safe_text",
    "terminal_safe",
]

# C0 controls but tab and newline, DEL, C1 controls (8-bit CSI/OSC in some terminals),
# bidirectional embeddings, overrides and isolates, lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# The same, for JSON text (json.dumps already escapes C0 controls).
_UNSAFE_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_safe(text: str, *, newlines: bool = True) -> str:
    """``text`` with every character that could drive a terminal shown as an escape.

    Args:
        text: Anything a tool, a model or a remote party produced.
        newlines: Keep line breaks (False: they are escaped too, for one-line fields).
    """
    if text.isascii() and text.isprintable():
        return text
    safe = _UNSAFE.sub(_visible, text)
    return safe if newlines else safe.replace("\n", "\\n")


def json_safe(text: str) -> str:
    """JSON text with the characters `terminal_safe` escapes written as JSON escapes.

    In JSON those characters can only stand inside strings, so the result parses to the
    same value. C0 controls are escaped by ``json.dumps`` already.
    """
    return text if text.isascii() else _UNSAFE_JSON.sub(_json_escape, text)


def dumps_for_terminal(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as JSON text that is safe to print (non-ASCII kept, controls escaped)."""
    return json_safe(json.dumps(value, indent=indent, ensure_ascii=False, default=str))


def print_safe(text: str, stream: TextIO) -> None:
    """Write ``text`` and a newline to ``stream``, made `terminal_safe`, and flush."""
    stream.write(terminal_safe(text) + "\n")
    stream.flush()


class SafeConsole(Console):
    """A rich console that never lets printed text drive the terminal.

    Markup is off by default (pass ``markup=True`` to a ``print`` whose string is our own
    markup, with untrusted parts escaped by ``rich.markup.escape``); every string rendered,
    table cells and panel bodies included, goes through `terminal_safe`. Build `rich.text.Text`
    objects from untrusted text with `safe_text`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("highlight", False)
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """Render ``text`` after `terminal_safe` (see `rich.console.Console.render_str`)."""
        return super().render_str(terminal_safe(text), **kwargs)


def markup_safe(text: str) -> str:
    """Untrusted ``text`` to interpolate into our own rich markup: controls escaped, and
    square brackets escaped so they stay text (``[mcp]`` is not a style)."""
    from rich.markup import escape

    return escape(terminal_safe(text))


def safe_text(text: str, style: str = "") -> Text:
    """A `rich.text.Text` of untrusted ``text`` (no markup, controls escaped)."""
    from rich.text import Text

    return Text(terminal_safe(text), style=style)


_HANDLER_NAME = "tooldeck-cli"


def _not_call_failures(record: logging.LogRecord) -> bool:
    from tools._failure_log import FAILURE_FORMAT

    return record.msg is not FAILURE_FORMAT


class _SafeFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


def level_for(verbose: int, quiet: int = 0) -> int:
    """The log level of ``-v`` and ``-q`` (counts): ``-q`` ERROR, ``-qq`` CRITICAL, none
    WARNING, ``-v`` INFO, ``-vv`` DEBUG."""
    if quiet:
        return logging.ERROR if quiet == 1 else logging.CRITICAL
    return [logging.WARNING, logging.INFO, logging.DEBUG][min(verbose, 2)]


def cli_logging(level: int, stream: TextIO, *, console: Console | None = None) -> logging.Handler:
    """Send log records at ``level`` and above to ``stream`` (the root logger's handler).

    One line per record, ``LEVEL logger: message``, made `terminal_safe`. Below ``-v``
    (``level`` above INFO) the registry's one-line "tool call failed" warnings are left out:
    the CLIs report every failed call themselves, for people. With ``console``
    (a live progress display on the same stream), lines are printed through it so they
    appear above the display instead of tearing it. Replaces the handler a previous call
    installed (a CLI run twice in one process logs each line once).

    Returns:
        The handler installed.
    """
    handler = _ConsoleHandler(console) if console is not None else logging.StreamHandler(stream)
    handler.setFormatter(_SafeFormatter("%(levelname)s %(name)s: %(message)s"))
    if level > logging.INFO:
        handler.addFilter(_not_call_failures)
    handler.set_name(_HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler


class _ConsoleHandler(logging.Handler):
    """Log lines printed through a rich console (above its live display)."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self._console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._console.print(self.format(record), markup=False, highlight=False, soft_wrap=True)
        except Exception:
            self.handleError(record)
