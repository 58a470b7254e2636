"""Where tool calls run: this process (default) or a cluster (`RayExecutor`, extra ``ray``).

See :mod:`tools.executors.base` for the contract and :mod:`tools.executors.ray_executor`
for Ray. Importing this package does not import Ray.
"""

from tools.executors.base import RemoteExecutor, RemoteTool, is_stateful
from tools.executors.ray_executor import RayExecutor, RayTool

__all__ = ["RayExecutor", "RayTool", "RemoteExecutor", "RemoteTool", "is_stateful"]
