"""``FreedomLevel``: how much the model may run without asking a person.

The level decides, from a tool's risk (its :class:`~tools.routing.ToolManual`), whether a
call needs a human's approval:

============  ==========  ==========  ==========
level         safe        moderate    dangerous
============  ==========  ==========  ==========
``low``       ask         ask         ask
``medium``    runs        ask         ask
``high``      runs        runs        ask
============  ==========  ==========  ==========

A tool a person approved (for its current version) runs at every level.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from tools.approvals.errors import InvalidFreedomLevelError
from tools.manual import RiskLevel

#: The environment variable that overrides the stored level for one run (read at entry points).
FREEDOM_VARIABLE = "TOOLDECK_FREEDOM"

_ASKS: dict[str, frozenset[str]] = {
    "low": frozenset({"safe", "moderate", "dangerous"}),
    "medium": frozenset({"moderate", "dangerous"}),
    "high": frozenset({"dangerous"}),
}
_MEANING = {
    "low": "nothing runs without approval",
    "medium": "only safe tools run freely",
    "high": "only dangerous tools need approval",
}


class FreedomLevel(str, Enum):
    """The freedom dial: ``low``, ``medium`` or ``high`` (see the module docstring)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    def __str__(self) -> str:
        return self.value

    @property
    def meaning(self) -> str:
        """One line saying what the level lets run."""
        return _MEANING[self.value]

    def requires_approval(self, risk: RiskLevel) -> bool:
        """Whether a tool of ``risk`` needs a person's approval at this level.

        An unknown risk value is treated as ``dangerous``.
        """
        asks = _ASKS[self.value]
        return risk in asks or risk not in _ASKS["low"]

    @classmethod
    def parse(cls, value: object, *, what: str | None = None) -> FreedomLevel:
        """``value`` (a level or its name, any case, surrounding spaces ignored) as a level.

        Args:
            value: ``"low"``, ``"medium"``, ``"high"`` or a :class:`FreedomLevel`.
            what: The setting that carried the value, for the error (e.g. ``"TOOLDECK_FREEDOM"``).

        Raises:
            InvalidFreedomLevelError: any other value; the message lists the allowed ones.
        """
        if isinstance(value, FreedomLevel):
            return value
        if isinstance(value, str):
            text = value.strip().lower()
            for level in cls:
                if level.value == text:
                    return level
        shown = repr(value)[:40]
        allowed = "; ".join(f"{level.value} ({level.meaning})" for level in cls)
        named = shown if what is None else f"{what}={shown}"
        raise InvalidFreedomLevelError(f"{named} is not a freedom level; use one of: {allowed}")


#: The level when neither the approvals file nor the caller sets one.
DEFAULT_FREEDOM = FreedomLevel.MEDIUM


def freedom_from_env(env: Mapping[str, str]) -> FreedomLevel | None:
    """The per-run override ``TOOLDECK_FREEDOM`` of ``env``, or None when unset or empty.

    Call it at an entry point (a CLI, ``__main__``) and pass the result to
    :class:`~tools.approvals.ApprovalPolicy`; library code never reads the environment.

    Raises:
        InvalidFreedomLevelError: the variable holds something else than a level name.
    """
    raw = env.get(FREEDOM_VARIABLE, "")
    if not raw.strip():
        return None
    return FreedomLevel.parse(raw, what=FREEDOM_VARIABLE)
