"""``RoutingConfigError``: a profile, an override or a config file that cannot be used."""

from __future__ import annotations

from tools.errors import ToolDefinitionError


class RoutingConfigError(ToolDefinitionError, ValueError):
    """Routing was configured wrongly; the message names the file or profile, the key and the fix.

    Raised when profiles, overrides or config files are built or loaded, never while an agent
    calls tools: a routing mistake surfaces before any agent runs.
    """
