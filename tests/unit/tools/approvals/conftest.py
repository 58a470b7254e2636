"""Fixtures for the approvals unit tests: tools of each risk that count their runs, and an
approvals file under tmp_path (never the user's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsStore, FreedomLevel
from tools.routing import RiskLevel, ToolCategory, ToolManual

RISKS: tuple[RiskLevel, ...] = ("safe", "moderate", "dangerous")
LEVELS = tuple(FreedomLevel)
#: Which risks run without approval at each level (the issue's table).
RUNS_FREELY: dict[FreedomLevel, set[str]] = {
    FreedomLevel.LOW: set(),
    FreedomLevel.MEDIUM: {"safe"},
    FreedomLevel.HIGH: {"safe", "moderate"},
}


@dataclass
class Runs:
    """Every call that really ran: (tool, arguments)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def manual(name: str, risk: RiskLevel) -> ToolManual:
    category = {
        "safe": ToolCategory.FILE_READ,
        "moderate": ToolCategory.FILE_WRITE,
        "dangerous": ToolCategory.EXECUTION,
    }
    return ToolManual(name=name, category=category[risk], risk=risk, mutating=risk != "safe")


def add_tools(registry: LocalToolRegistry, runs: Runs) -> None:
    """Register ``safe_tool``, ``moderate_tool`` and ``dangerous_tool``; each records its runs."""
    for risk in RISKS:
        name = f"{risk}_tool"

        def work(path: str, count: int = 1, _name: str = name) -> str:
            """Do something with a path.

            Args:
                path: The path to work on.
                count: How many times.
            """
            runs.calls.append((_name, {"path": path, "count": count}))
            return f"{_name} did {path} x{count}"

        registry.register(work, name=name, manual=manual(name, risk), parameters=None)


@pytest.fixture
def runs() -> Runs:
    return Runs()


@pytest.fixture
def approvals_path(tmp_path: Path) -> Path:
    return tmp_path / "cfg" / "tooldeck" / "approvals.json"


@pytest.fixture
def store(approvals_path: Path) -> ApprovalsStore:
    return ApprovalsStore(approvals_path)


def gated_registry(runs: Runs, policy: ApprovalPolicy | None, **options: Any) -> LocalToolRegistry:
    registry = LocalToolRegistry(policy=policy, **options)
    add_tools(registry, runs)
    return registry
