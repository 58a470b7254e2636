"""The ``tooldeck`` command (typer + rich): adopted tools, the catalog, schemas, MCP serving.

Command groups live one per module (``registry_cmds``, ``run_cmds``, ``catalog_cmds``,
``schema_cmds``, ``executor_cmds``) and are registered by :mod:`tools.cli.app`. Every
command takes ``--json`` for scripts. Exit codes: 0 success, 1 a tool returned an error
envelope, 2 a usage or setup error (always one line on stderr naming the cause and the fix).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None, *, env: Mapping[str, str] | None = None) -> int:
    """Entry point of the ``tooldeck`` console script; returns the exit code.

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).
        env: The environment (default ``os.environ``); read only here.
    """
    from tools.cli.app import run

    return run(argv, env=env)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
