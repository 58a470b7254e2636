"""How ``tooldeck adopt`` and ``tooldeck describe`` show a tool's risk, category and mutating
flag, and where each came from (the operator, the author, a hint, a name, the fail-closed
default)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

from tools.cli._context import fail

if TYPE_CHECKING:
    from tools.manual import ToolCategory, ToolManual
    from tools.store import ManualOverrides


class RiskChoice(str, Enum):
    """``--risk``: the risk level an operator declares."""

    SAFE = "safe"
    MODERATE = "moderate"
    DANGEROUS = "dangerous"


def declarations(risk: RiskChoice | None, category: str | None, read_only: bool | None) -> ManualOverrides | None:
    """The operator's declarations from ``--risk``, ``--category`` and ``--read-only/--mutating``
    (None when none was given).

    Raises:
        CliError: ``category`` is not a category (the message lists them).
    """
    from tools.manual import ToolCategory
    from tools.store import ManualOverrides

    if risk is None and category is None and read_only is None:
        return None
    chosen: ToolCategory | None = None
    if category is not None:
        try:
            chosen = ToolCategory(category)
        except ValueError:
            allowed = ", ".join(c.value for c in ToolCategory)
            fail(f"--category {category[:40]!r} is not a category; use one of: {allowed}")
    mutating = None if read_only is None else not read_only
    return ManualOverrides(risk=risk.value if risk is not None else None, category=chosen, mutating=mutating)


def _placed(manual: ToolManual) -> ToolCategory | None:
    """Where routing places a tool whose category nobody declared (None: it was declared)."""
    if manual.origin.category != "default":
        return None
    from tools.routing import categorize_tool

    return categorize_tool(manual.name)


def manual_record(manual: ToolManual) -> dict[str, Any]:
    """``{"risk": {...}, "category": {...}, "mutating": {...}, "notes": [...]}``: each value,
    its origin and what the origin means (for ``--json``)."""
    record: dict[str, Any] = {}
    for field in ("risk", "category", "mutating"):
        value = getattr(manual, field)
        record[field] = {
            "value": getattr(value, "value", value),
            "origin": getattr(manual.origin, field),
            "meaning": manual.origin.describe(field),
        }
    placed = _placed(manual)
    if placed is not None:
        record["category"]["routing_places_it_in"] = placed.value
    if manual.actions:
        record["actions"] = {a.name: {"risk": a.risk, "mutating": a.mutating} for a in manual.actions}
    record["read_only_declared"] = manual.read_only_declared
    record["notes"] = list(manual.origin.notes)
    return record


def manual_lines(manual: ToolManual) -> list[str]:
    """Three lines (risk, category, mutating) with where each came from, then the notes."""
    placed = _placed(manual)
    category = manual.origin.describe("category")
    if placed is not None:
        category += (
            f"; routing places it in {placed.value} by its name"
            if placed.value != "unclassified"
            else "; unclassified: no built-in agent profile gets it"
        )
    mutating = "true" if manual.mutating else "false"
    lines = [
        f"risk      {manual.risk:<13} {manual.origin.describe('risk')}",
        f"category  {manual.category.value:<13} {category}",
        f"mutating  {mutating:<13} {manual.origin.describe('mutating')}",
    ]
    lines += [f"  action {a.name}: {a.risk}{'' if a.mutating else ', read-only'}" for a in manual.actions]
    lines += [f"  note: {note}" for note in manual.origin.notes]
    return lines
