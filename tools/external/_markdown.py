"""A short markdown rendering of JSON-like output, for chat UIs and model context."""

from __future__ import annotations

import json
from typing import Any

MAX_ROWS = 20
MAX_COLUMNS = 8
MAX_CELL = 80


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("\n", " ").replace("|", "\\|")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _table(rows: list[dict[str, Any]]) -> str:
    columns: list[str] = []
    for row in rows[:MAX_ROWS]:
        for key in row:
            if key not in columns and len(columns) < MAX_COLUMNS:
                columns.append(key)
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "|" + "---|" * len(columns),
    ]
    lines += ["| " + " | ".join(_cell(r.get(c, "")) for c in columns) + " |" for r in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        lines.append(f"\n_{len(rows) - MAX_ROWS} more rows not shown._")
    return "\n".join(lines)


def render_markdown(data: Any, max_chars: int = 2_000) -> str:
    """Render ``data`` as short markdown: a table, a bullet list or plain text.

    A list of objects becomes a table (first 20 rows, 8 columns); an object becomes
    ``- **key**: value`` bullets; a list of scalars becomes bullets; anything else its text.
    The result is cut to ``max_chars`` with a visible note; any input (deep, huge, odd types)
    is accepted.
    """
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        text = _table(data)
    elif isinstance(data, dict):
        text = "\n".join(f"- **{_cell(k)}**: {_cell(v)}" for k, v in data.items())
    elif isinstance(data, list):
        text = "\n".join(f"- {_cell(v)}" for v in data[:MAX_ROWS])
        if len(data) > MAX_ROWS:
            text += f"\n- _… {len(data) - MAX_ROWS} more_"
    elif data is None:
        text = "_(empty)_"
    else:
        text = str(data)
    if len(text) > max_chars:
        text = text[:max_chars] + "\n\n_(cut)_"
    return text
