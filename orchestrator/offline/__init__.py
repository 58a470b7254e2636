"""The embedded offline model: deterministic intent patterns, no key, no network."""

from orchestrator.offline.model import OfflineModel

__all__ = ["OfflineModel"]
