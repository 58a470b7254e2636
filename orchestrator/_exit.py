"""The exit codes of ``python -m orchestrator``, stated once: the help, the docs and the tests
read them from here."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_CONFIG = 2
EXIT_MODEL = 3
EXIT_BUDGET = 4
EXIT_AWAITING = 5
EXIT_REJECTED = 6
EXIT_VALIDATION = 7
EXIT_INTERRUPTED = 130

#: Code -> what it means.
EXIT_CODES: Mapping[int, str] = MappingProxyType(
    {
        EXIT_OK: "the model gave a final answer (--pipeline: approved and validated)",
        EXIT_INTERNAL: "unexpected internal error (a bug: the traceback is printed)",
        EXIT_CONFIG: "usage or configuration error (bad flag or setting, a refused --resume, an agent with no tools, "
        "--pipeline without a real model)",
        EXIT_MODEL: "the model endpoint failed (unreachable, HTTP error, malformed answer)",
        EXIT_BUDGET: "the iteration budget ran out before a final answer (the partial answer is printed)",
        EXIT_AWAITING: "tool calls wait for a person's approval (the state is saved; continue with --resume)",
        EXIT_REJECTED: "--pipeline: the reviewer rejected the change after every cycle",
        EXIT_VALIDATION: "--pipeline: approved, but a check (pytest, ruff, ...) failed",
        EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    }
)


def exit_code_lines(indent: str = "  ") -> list[str]:
    """One line per code: ``  0    the model gave a final answer ...``."""
    return [f"{indent}{code:<4} {meaning}" for code, meaning in EXIT_CODES.items()]
