"""Tool binaries and their environment, run by ``privileges.run_python`` as root or as a user.

``main(job)`` serves ``job["bin_dir"]`` with a :class:`ToolExecutorService` and builds an
adopted binary with a :class:`ToolBuilder`, both given ``job["parent"]`` as the parent
environment (what ``os.environ`` is at an entry point), and returns what the binaries saw
and returned: the test checks that no secret of the parent reached them or came back.
"""

from __future__ import annotations

import os
from typing import Any


def _served(job: dict[str, Any]) -> dict[str, Any]:
    from tools.external import AuthConfig, ToolConfig, ToolExecutorService

    parent = job["parent"]
    out: dict[str, Any] = {}
    service = ToolExecutorService(
        job["bin_dir"], env=parent, pass_env=["PASSED_SETTING"], secret_env={"envdump": ["TOOL_TOKEN"]}, poll_interval=0
    )
    auth = AuthConfig(env_var="AUTH_TOKEN")
    service.add_tool(ToolConfig(id="authed", name="leak", adapter_type="binary", auth=auth))
    with service:
        out["envdump"] = service.execute("envdump", None, {}).to_dict()
        out["leak_ok"] = service.execute("leak", None, {"say": job["say"]}).to_dict()
        out["leak_fail"] = service.execute("leak", None, {"say": job["say"], "fail": True}).to_dict()
        out["leak_via_config"] = service.execute("authed", None, {"env": True}).to_dict()
        described = service.tool("envdump")
        out["schema_description"] = described.description if described is not None else None
    return out


def _adopted(job: dict[str, Any]) -> dict[str, Any]:
    from tools.store import ToolBuilder, ToolConfig

    builder = ToolBuilder(env=job["parent"])
    out: dict[str, Any] = {}
    try:
        for name in ("envdump", "leak"):
            config = ToolConfig.model_validate(
                {
                    "id": f"adopted_{name}",
                    "adapter_type": "binary",
                    "binary": {"path": os.path.join(job["bin_dir"], name), "env": {"MODE": "fast"}},
                    "auth": {"env_var": "TOOL_TOKEN"},
                }
            )
            tool = builder.build(config)
            out[name] = tool.execute(say=job["say"]).to_dict() if name == "leak" else tool.execute().to_dict()
            if name == "leak":
                out["leak_fail"] = tool.execute(say=job["say"], fail=True).to_dict()
    finally:
        builder.close()
    return out


def main(job: dict[str, Any]) -> dict[str, Any]:
    """Run the scenario; everything the binaries returned, as envelopes (dicts)."""
    return {"uid": os.geteuid(), "served": _served(job), "adopted": _adopted(job)}
