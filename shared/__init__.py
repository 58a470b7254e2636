"""Code shared by the orchestrator and the data services.

``shared.adapters`` turns user-owned data sources into canonical records;
``shared.context_service`` serves them over HTTP (``context`` extra). ``shared`` imports
neither ``tools`` nor ``orchestrator``.
"""

__all__: list[str] = []
