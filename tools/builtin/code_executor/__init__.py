"""``execute_code``: run model-written programs in a limited, isolated process.

:class:`LocalSandbox` contains programs the same way whether the application runs as root
or not (bubblewrap when installed, its own namespaces launcher otherwise; it refuses to
run when neither can contain the program here): see ``docs/compute.md``.

Public names: :class:`CodeExecutorTool` with :class:`CodeExecutionRequest` /
:class:`CodeExecutionResponse`; the :class:`SandboxClient` protocol, its
:class:`SandboxLimits`, :class:`SandboxResult` and :class:`WorkspaceChanges`; the embedded :class:`LocalSandbox` and
:func:`default_interpreters`.
"""

from tools.builtin.code_executor.local import LocalSandbox, default_interpreters
from tools.builtin.code_executor.sandbox import SandboxClient, SandboxLimits, SandboxResult, WorkspaceChanges
from tools.builtin.code_executor.tool import (
    CodeExecutionRequest,
    CodeExecutionResponse,
    CodeExecutorTool,
)

__all__ = [
    "CodeExecutionRequest",
    "CodeExecutionResponse",
    "CodeExecutorTool",
    "LocalSandbox",
    "SandboxClient",
    "SandboxLimits",
    "SandboxResult",
    "WorkspaceChanges",
    "default_interpreters",
]
