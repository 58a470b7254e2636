"""The two hashes approvals are bound to: a tool's version and a call's arguments.

* :func:`tool_version_hash`: what a person approves when they approve a *tool*. It changes
  when anything that changes the tool's behaviour or risk changes, so a stored approval
  stops counting and the tool must be approved again. For a tool adopted from the store it
  is exactly :meth:`tools.store.ToolConfig.compute_version_hash` (the hash adoption records
  as ``version_hash``); for every other tool (builtins, functions, MCP toolsets, ...) it is
  the SHA-256 of the canonical JSON of its name, version, argument schema, and its manual's
  risk and mutating flag.
* :func:`arguments_hash`: what a person approves when they approve one *call*: the SHA-256
  of the canonical JSON of the arguments (keys sorted, no spaces, UTF-8), so the JSON text
  ``{"b": 1, "a": 2}`` and the dict ``{"a": 2, "b": 1}`` hash the same.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tools._arguments import parse_arguments
from tools.result import to_jsonable

if TYPE_CHECKING:
    from tools.base import Arguments, BaseTool
    from tools.manual import ToolManual


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON: JSON-compatible form, keys sorted, no whitespace, UTF-8."""
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def arguments_hash(arguments: Arguments) -> str:
    """SHA-256 (hex) of the canonical JSON of a call's arguments.

    Args:
        arguments: As the model sent them (JSON text or bytes) or a mapping; None and empty
            text are ``{}``.

    Raises:
        InvalidArgumentsError: the text is not JSON or not a JSON object.
    """
    return _sha256(canonical_json(parse_arguments(arguments, "arguments")))


def tool_version_hash(
    tool: BaseTool[Any, Any],
    *,
    manual: ToolManual | None = None,
    preset: Mapping[str, Any] | None = None,
) -> str:
    """SHA-256 (hex) of what a person approves when they approve ``tool``.

    Args:
        tool: The tool.
        manual: The manual of its registration (default: ``tool.get_manual()``); its
            ``risk`` and ``mutating`` are part of the hash.
        preset: Arguments its registration fixes (part of the hash when given: a preset
            can widen what the tool reaches).

    Returns:
        For an adopted tool (one that carries its :class:`~tools.store.ToolConfig` as
        ``tool.config``) without a preset: ``config.compute_version_hash()``, the hash the
        store records at adoption. Otherwise the hash of name, version, argument schema,
        risk and mutating (and preset).
    """
    config = getattr(tool, "config", None)
    used = manual if manual is not None else tool.get_manual()
    # The inputs, by identity where they are objects: holding them keeps their ids from being
    # reused, so a new schema or config is never mistaken for the cached one.
    key = (tool.name, tool.version, config, tool._input_schema(), used.risk, used.mutating, dict(preset or {}))
    cached = tool.__dict__.get(_CACHE)
    if cached is not None and _same(cached[0], key):
        return cached[1]  # type: ignore[no-any-return]
    value = _version_hash(tool, config, used, preset)
    tool.__dict__[_CACHE] = (key, value)
    return value


_CACHE = "_td_approval_hash"


def _same(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    return old[2] is new[2] and old[3] is new[3] and old[:2] == new[:2] and old[4:6] == new[4:6] and old[6] == new[6]


def _version_hash(tool: BaseTool[Any, Any], config: Any, manual: ToolManual, preset: Mapping[str, Any] | None) -> str:
    compute = getattr(config, "compute_version_hash", None)
    adopted = compute() if callable(compute) else None
    if isinstance(adopted, str):
        if not preset:
            return adopted
        return _sha256(canonical_json({"adopted": adopted, "preset": dict(preset)}))
    payload: dict[str, Any] = {
        "name": tool.name,
        "version": tool.version,
        "parameters": tool._input_schema(),
        "risk": manual.risk,
        "mutating": manual.mutating,
    }
    if preset:
        payload["preset"] = dict(preset)
    return _sha256(canonical_json(payload))
