"""Ship any :class:`~tools.base.BaseTool` as a subprocess tool binary: :func:`serve`.

::

    #!/usr/bin/env python3
    import sys
    from tools.external.binary import serve
    from mytools import WordCountTool

    if __name__ == "__main__":
        sys.exit(serve(WordCountTool()))

The script then speaks the binary contract (see :mod:`tools.external._binary_contract`):
``--schema`` prints ``{"name", "description", "version", "input_schema", "output_schema"}``
and exits 0; otherwise one JSON object is read on stdin, the tool runs, and the result
envelope (``ToolResult.to_dict()``) is printed on stdout. On an error envelope the exit status
is 1 and the model-facing message is also written to stderr, so both envelope-aware callers
(:class:`~tools.external.executor.ToolExecutorService`) and plain ones get the error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import IO, Any

from tools.base import BaseTool
from tools.result import ToolResult

#: Largest stdin accepted (bytes); more is a ``validation_error``.
MAX_INPUT_BYTES = 10_000_000
EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2


def schema_document(tool: BaseTool[Any, Any]) -> dict[str, Any]:
    """What ``--schema`` prints for ``tool``."""
    return {
        "name": tool.name,
        "description": tool.description,
        "version": tool.version,
        "input_schema": tool.input_schema(),
        "output_schema": tool.output_schema(),
    }


def serve(
    tool: BaseTool[Any, Any],
    argv: Sequence[str] | None = None,
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    max_input_bytes: int = MAX_INPUT_BYTES,
) -> int:
    """Run ``tool`` as a tool binary once; returns the exit status (use with ``sys.exit``).

    Hostile or malformed input never raises: stdin that is not a JSON object, or larger than
    ``max_input_bytes``, gives a ``validation_error`` envelope and exit status 1; unknown
    command-line arguments print a usage line to stderr and return 2.

    Args:
        tool: The tool to run.
        argv: Command-line arguments without the program name (default ``sys.argv[1:]``).
        stdin: Binary stream with the JSON arguments (default ``sys.stdin.buffer``).
        stdout: Where the JSON answer goes (default ``sys.stdout``).
        stderr: Where the error message goes (default ``sys.stderr``).
        max_input_bytes: Largest accepted stdin (default 10 MB).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    if args == ["--schema"]:
        out.write(json.dumps(schema_document(tool)) + "\n")
        out.flush()
        return EXIT_OK
    if args:
        err.write(f"usage: {tool.name} [--schema]  (JSON arguments on stdin)\n")
        return EXIT_USAGE
    source = stdin if stdin is not None else sys.stdin.buffer
    raw = source.read(max_input_bytes + 1)
    if len(raw) > max_input_bytes:
        result = ToolResult.failure(
            "validation_error",
            f"The arguments for tool '{tool.name}' are larger than {max_input_bytes} bytes.",
        )
    else:
        result = tool.execute_raw(raw)
    out.write(json.dumps(result.to_dict()) + "\n")
    out.flush()
    if result.error is not None:
        err.write(result.error.message + "\n")
        err.flush()
        return EXIT_TOOL_ERROR
    return EXIT_OK
