"""``python -m tools.builtin.modules.context_service``: the context service, serving modules.

The same command line as ``python -m shared.context_service`` (``--config``, ``--host``,
``--port``, ``--modules-dir``, ``--module-allow-host``, ...). ``shared`` does not import
the tool layer, so it cannot start the sandboxed module workers itself: this entry point
passes it :func:`workers_for_store`, which runs each enabled module in the code sandbox
with the module store and its keys hidden, and sends the modules' HTTP through the web
tool's address policy (``--module-allow-host`` lets them reach a local or intranet API).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from shared.context_service.__main__ import main as serve
from shared.modules import ModuleWorkers
from tools.builtin.modules.workers import sandboxed_workers

__all__ = ["main", "workers_for_store"]


def workers_for_store(store: Path, key_dir: Path, allow_hosts: Sequence[str]) -> ModuleWorkers:
    """Sandboxed workers for the modules of ``store`` (``store`` and ``key_dir`` hidden)."""
    return sandboxed_workers(hidden_dirs=[store, key_dir], allow_hosts=allow_hosts)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the context service with sandboxed module workers."""
    return serve(argv, environ, module_workers=workers_for_store)


if __name__ == "__main__":
    sys.exit(main())
