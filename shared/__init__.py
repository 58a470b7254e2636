"""Code shared by the orchestrator and the data services.

``shared.adapters`` turns user-owned data sources into canonical records;
``shared.context_service`` serves them over HTTP (``context`` extra). ``shared`` imports
neither ``tools`` nor ``orchestrator``.
"""

import logging

__all__: list[str] = []

# The library never prints on its own: without this, Python's last-resort handler writes
# every WARNING (one per failed tool call) to stderr of applications that did not configure
# logging. Applications and the CLIs configure handlers; records then propagate as usual.
logging.getLogger(__name__).addHandler(logging.NullHandler())
