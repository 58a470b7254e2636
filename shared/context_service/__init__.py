"""The context service: a user's adapters aggregated behind ``GET /context``.

``ContextAggregator`` and the config loader need no extra; ``create_app`` (FastAPI) and
``python -m shared.context_service`` need the ``context`` extra.
"""

from shared.context_service.aggregator import ContextAggregator, UnknownUserError
from shared.context_service.config import (
    AdapterEntry,
    ConfigError,
    ServiceConfig,
    UserConfig,
    load_config,
)

__all__ = [
    "AdapterEntry",
    "ConfigError",
    "ContextAggregator",
    "ServiceConfig",
    "UnknownUserError",
    "UserConfig",
    "load_config",
]
