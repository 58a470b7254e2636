"""``python -m shared.context_service --config context.toml [--host 127.0.0.1 --port 8765]``.

The API key is read from the environment variable named by the config's ``api_key_env``
(or ``--api-key-env``), never from the command line or the file.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Parse arguments, load the config and serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m shared.context_service", description=__doc__)
    parser.add_argument("--config", required=True, help="JSON or TOML config file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key")
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--no-warm-up", action="store_true", help="do not read the sources at startup")
    parser.add_argument("--modules-dir", default=None, help="serve the enabled modules of this module store")
    args = parser.parse_args(argv)
    env = os.environ if environ is None else environ

    try:
        import uvicorn

        from shared.context_service.aggregator import ContextAggregator
        from shared.context_service.app import create_app
        from shared.context_service.config import ConfigError, load_config
    except ImportError as exc:
        print(
            f"the context service needs the 'context' extra: pip install 'tooldeck[context]' ({exc})",
            file=sys.stderr,
        )
        return 2
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    key_env = args.api_key_env or config.api_key_env
    api_key = env.get(key_env) if key_env else None
    if key_env and not api_key:
        print(
            f"config error: environment variable {key_env} (the API key) is not set",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        modules = _modules(args.modules_dir, env)
    except ValueError as exc:  # KeyFileError: an unusable module key
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    aggregator = ContextAggregator(config, modules=modules)
    app = create_app(aggregator, api_key=api_key, warm_up=not args.no_warm_up)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    return 0


def _modules(folder: str | None, env: Mapping[str, str]) -> Any:
    """The enabled modules of ``folder`` (keys from the environment or the key files)."""
    if not folder:
        return None
    from pathlib import Path

    from shared.modules import ModuleAdapters

    return ModuleAdapters.from_store(
        Path(folder),
        credentials_key=env.get("TOOLDECK_MODULE_CREDENTIALS_KEY"),
        signing_key=env.get("TOOLDECK_MODULE_SIGNING_KEY"),
    )


if __name__ == "__main__":
    sys.exit(main())
