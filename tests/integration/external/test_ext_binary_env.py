"""Tool binaries get the CLI adapter's environment scheme, as root and as an ordinary user.

Served binaries (:class:`ToolExecutorService`) and adopted ones (:class:`ToolBuilder`) used
to inherit the whole parent environment: a binary printing its environment saw the
parent's ``OPENAI_API_KEY``. Now a binary gets the base variables, what its config names,
and its own secret; everything it returns is masked of the parent's secrets. The scenario
runs in a child interpreter (:mod:`_env_scenario`) as root and, dropped with ``setpriv``,
as uid 1000.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _privileges() -> ModuleType:
    path = Path(__file__).parents[1] / "sandbox" / "privileges.py"
    spec = importlib.util.spec_from_file_location("external_privileges", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


priv = _privileges()
SCENARIO = Path(__file__).with_name("_env_scenario.py")

OPENAI_KEY = "sk-proj-Abc123Def456Ghi789Jkl012"
TOOL_TOKEN = "tool-own-token-0123456789"
AUTH_TOKEN = "auth-config-token-987654321"
PARENT_SECRETS = {
    "OPENAI_API_KEY": OPENAI_KEY,
    "TOOLDECK_MODULE_SIGNING_KEY": "module-signing-key-material-xyz",
    "GITHUB_TOKEN": "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
    "DATABASE_URL": "postgres://app:s3cr3t-pw@db.internal:5432/app",
}

ENV_DUMP = """
import json, os, sys
if sys.argv[1:] == ["--schema"]:
    # What a probe sees: it must not be handed any secret.
    print(json.dumps({"name": "envdump", "description": " ".join(sorted(os.environ)),
                      "input_schema": {"type": "object"}}))
    sys.exit(0)
json.load(sys.stdin)
print(json.dumps(dict(os.environ)))
"""

LEAK = """
import json, os, sys
if sys.argv[1:] == ["--schema"]:
    print(json.dumps({"name": "leak", "input_schema": {"type": "object"}}))
    sys.exit(0)
args = json.load(sys.stdin)
if args.get("env"):
    print(json.dumps({"auth": os.environ.get("AUTH_TOKEN"), "names": sorted(os.environ)}))
    sys.exit(0)
said = " ".join(args["say"] + [os.environ.get("TOOL_TOKEN", "no-token")])
sys.stderr.write("stderr: " + said + "\\n")
if args.get("fail"):
    sys.exit(3)
print(json.dumps({"said": said}))
"""


@pytest.fixture(scope="module")
def world() -> Iterator[Path]:
    """A directory any user may enter, holding the binaries and the ``tools`` copy."""
    root = Path(tempfile.mkdtemp(prefix="tooldeck-env-test-"))
    root.chmod(0o755)
    try:
        bin_dir = root / "bin"
        bin_dir.mkdir(mode=0o755)
        python, _ = priv.library_python()
        for name, body in (("envdump", ENV_DUMP), ("leak", LEAK)):
            path = bin_dir / name
            path.write_text(f"#!{python}\n{body}")
            path.chmod(0o755)
        priv.readable_tree(root)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _parent() -> dict[str, str]:
    return {
        **PARENT_SECRETS,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/home/tester",
        "LANG": "C.UTF-8",
        "LC_TIME": "C",
        "TZ": "UTC",
        "PASSED_SETTING": "passed",
        "UNRELATED_SETTING": "visible-only-if-passed",
        "TOOL_TOKEN": TOOL_TOKEN,
        "AUTH_TOKEN": AUTH_TOKEN,
    }


@pytest.fixture(scope="module", params=priv.mode_params())
def answer(request: pytest.FixtureRequest, world: Path) -> dict[str, Any]:
    job = {"bin_dir": str(world / "bin"), "parent": _parent(), "say": list(PARENT_SECRETS.values())}
    found: dict[str, Any] = priv.run_python(request.param, SCENARIO, job, tree=world / "tree")
    assert found["uid"] == priv.app_uid(request.param)
    return found


BASE = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/tester", "LANG": "C.UTF-8", "LC_TIME": "C", "TZ": "UTC"}


def test_a_served_binary_sees_the_base_its_settings_and_its_own_secret_only(answer: dict[str, Any]) -> None:
    seen = answer["served"]["envdump"]
    assert seen["status"] == "success", seen
    assert seen["data"] == {**BASE, "PASSED_SETTING": "passed", "TOOLDECK_TOOL_MODE": "subprocess", "TOOL_TOKEN": "***"}


def test_an_adopted_binary_sees_the_base_its_settings_and_its_own_secret_only(answer: dict[str, Any]) -> None:
    seen = answer["adopted"]["envdump"]
    assert seen["status"] == "success", seen
    assert seen["data"] == {**BASE, "MODE": "fast", "TOOLDECK_TOOL_MODE": "subprocess", "TOOL_TOKEN": "***"}


def test_another_binary_does_not_get_that_secret(answer: dict[str, Any]) -> None:
    said = answer["served"]["leak_ok"]["data"]["said"]
    assert said.endswith(" no-token")


def test_a_config_auth_variable_goes_to_the_binary_it_runs(answer: dict[str, Any]) -> None:
    seen = answer["served"]["leak_via_config"]["data"]
    assert seen["auth"] == "***"  # the binary got it; what comes back is masked
    assert "TOOL_TOKEN" not in seen["names"]
    assert "OPENAI_API_KEY" not in seen["names"]


def test_the_schema_probe_gets_no_secret(answer: dict[str, Any]) -> None:
    names = answer["served"]["schema_description"].split()
    assert names == sorted(["PATH", "HOME", "LANG", "LC_TIME", "TZ", "PASSED_SETTING", "TOOLDECK_TOOL_MODE"])


@pytest.mark.parametrize("where", ["served", "adopted"])
def test_parent_secrets_are_masked_in_stdout_stderr_and_errors(answer: dict[str, Any], where: str) -> None:
    ok = answer[where]["leak_ok" if where == "served" else "leak"]
    failed = answer[where]["leak_fail"]
    assert ok["status"] == "success", ok
    assert ok["data"]["said"].startswith("*** *** *** ***")
    assert failed["status"] == "error"
    assert failed["error"].startswith("Tool '")
    assert "stderr: *** *** *** ***" in failed["error"]
    dumped = json.dumps(answer[where])
    for value in [*PARENT_SECRETS.values(), TOOL_TOKEN, AUTH_TOKEN]:
        assert value not in dumped
