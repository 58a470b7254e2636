"""The module worker: the process that runs one installed module, inside the code sandbox.

Model-written module code never runs in the host process. Each enabled module runs in a
worker (``python -m``-less: the host starts ``shared.module_worker.main`` through the
sandbox's launcher) that speaks length-prefixed JSON over its standard input and output
(:mod:`shared.module_worker.protocol`). Its HTTP goes back over the same pipe to the host,
which decides whether to send it (see :mod:`shared.modules.forwarding`).

Importing this package is cheap and imports nothing else: the worker imports only what it
needs, and the host imports only :mod:`~shared.module_worker.protocol`.
"""

__all__: list[str] = []
