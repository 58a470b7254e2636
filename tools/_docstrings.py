"""Docstrings read as ``docstring_parser`` reads them in its automatic mode, only faster."""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any


def parse_docstring(text: str) -> Any:
    """``docstring_parser.parse(text)`` (automatic style), at a fifth of the cost.

    The automatic mode parses the text in all four styles and keeps the result with the
    most entries; a style can only find entries where its markers are (``:param`` lines,
    ``@param`` lines, ``----`` underlines, ``Args:``-like titles). So when the markers of
    one style alone are present, that style's parse is the automatic result; without any
    marker every style finds nothing and the automatic mode keeps the reST parse. Anything
    else (markers of several styles, a parse that finds nothing) takes the automatic path.
    """
    from docstring_parser import DocstringStyle, ParseError, parse

    cleaned = inspect.cleandoc(text)
    styles = [style for style, marker in _style_markers() if marker.search(cleaned)]
    if len(styles) > 1:
        return parse(text)
    style = styles[0] if styles else DocstringStyle.REST
    try:
        doc = parse(text, style=style)
    except ParseError:
        return parse(text)
    return doc if doc.meta or not styles else parse(text)


@functools.cache
def _style_markers() -> tuple[tuple[Any, re.Pattern[str]], ...]:
    """What lets each docstring style find an entry (broader than each parser's own test)."""
    from docstring_parser import DocstringStyle
    from docstring_parser.google import GoogleParser

    return (
        (DocstringStyle.REST, re.compile(r"^\s*:", re.M)),
        (DocstringStyle.EPYDOC, re.compile(r"^\s*@", re.M)),
        (DocstringStyle.NUMPYDOC, re.compile(r"^\s*-{2,}\s*$|^\s*\.\.", re.M)),
        (DocstringStyle.GOOGLE, GoogleParser().titles_re),
    )
