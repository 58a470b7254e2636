"""Helpers for tool authors' test suites."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tools.base import BaseTool
from tools.schema import model_schema


def _types(node: Mapping[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {str(k) for k in kind}
    found: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key) or ():
            if isinstance(branch, Mapping):
                found |= _types(branch)
    return found


def schema_drift(tool: BaseTool[Any, Any]) -> list[str]:
    """Where a hand-written ``parameters`` schema disagrees with the tool's ``RequestModel``.

    Compares the top-level properties: names present on one side only, required-ness, and
    declared JSON types. Returns human-readable findings (empty when they agree, or when the
    tool lacks one of the two). Use it in a test: ``assert schema_drift(MyTool()) == []``.
    """
    if tool.parameters is None or tool.RequestModel is None:
        return []
    generated = model_schema(tool.RequestModel)
    written = tool.parameters
    ours: Mapping[str, Any] = written.get("properties") or {}
    theirs: Mapping[str, Any] = generated.get("properties") or {}
    findings = [
        f"'{name}' is in parameters but not in {tool.RequestModel.__name__}" for name in ours if name not in theirs
    ]
    findings += [
        f"'{name}' is in {tool.RequestModel.__name__} but not in parameters" for name in theirs if name not in ours
    ]
    required_written = set(written.get("required") or ())
    required_model = set(generated.get("required") or ())
    for name in sorted(set(ours) & set(theirs)):
        if (name in required_written) != (name in required_model):
            side = "parameters" if name in required_written else tool.RequestModel.__name__
            findings.append(f"'{name}' is required only in {side}")
        written_types, model_types = _types(ours[name]), _types(theirs[name])
        if written_types and model_types and written_types != model_types:
            findings.append(
                f"'{name}' has type {sorted(written_types)} in parameters but {sorted(model_types)} in the model"
            )
    return findings
