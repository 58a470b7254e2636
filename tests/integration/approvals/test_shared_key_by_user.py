"""``TOOLDECK_STATE_KEY_FILE`` as deployed: as root (CI) and as an ordinary user (uid 1000).
Two "hosts" (separate configuration directories) running as the same service user read one
key file that user owns (mode 0400 or 0600) and verify each other's states; a copy of the key
owned by another user (as a secret volume mounted without the service user's uid would be)
is refused, and no key of the user's own is made meanwhile."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.integration.approvals.test_keys_by_user import _python, _site_packages, privileges, public_dir

__all__ = ["public_dir"]

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    sys.path[:0] = [sys.argv[1], *sys.argv[5:]]  # the copy of tools first, then the dependencies
    from tools.approvals import StateSigner, StateKeyError, StateSignatureError
    base, shared, foreign = sys.argv[2], sys.argv[3], sys.argv[4]
    def host(name, key):
        return {"HOME": os.path.join(base, name), "XDG_CONFIG_HOME": os.path.join(base, name, "config"),
                "TOOLDECK_STATE_KEY_FILE": key}
    out = {"uid": os.geteuid()}
    signed = StateSigner.from_env(host("a", shared)).sign({"kind": "k", "n": 1})
    out["verified"] = StateSigner.from_env(host("b", shared)).verify(signed) == {"kind": "k", "n": 1}
    out["own_keys"] = [n for n in ("a", "b") if os.path.exists(os.path.join(base, n, "config", "tooldeck"))]
    try:
        StateSigner.from_env(host("c", foreign)).verify(signed)
        out["foreign"] = "accepted"
    except (StateKeyError, StateSignatureError) as exc:
        out["foreign"] = str(exc)
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("mode", privileges.mode_params())
@pytest.mark.parametrize("key_mode", [0o400, 0o600])
def test_hosts_of_one_service_user_share_the_key_another_users_copy_is_refused(
    mode: str, key_mode: int, public_dir: Path
) -> None:
    tree = privileges.readable_tree(public_dir)
    uid = privileges.app_uid(mode)
    base = privileges.private_dir(public_dir / "hosts", uid)
    key = secrets.token_hex(32) + "\n"
    shared, foreign = public_dir / "state.key", public_dir / "foreign-state.key"
    for path in (shared, foreign):
        path.write_text(key)
        path.chmod(key_mode)
    if os.geteuid() == 0:
        os.chown(shared, uid, uid)
        other = 1001 if uid == 0 else 0
        os.chown(foreign, other, other)
    else:
        foreign.chmod(0o644)  # not root: the copy cannot change hands; make it readable by all instead
    answer = run(mode, tree, base, shared, foreign)
    assert (answer["uid"], answer["verified"], answer["own_keys"]) == (uid, True, [])
    if os.geteuid() != 0:
        expected = "can be read or written by other users"
    elif uid == 0:
        expected = "belongs to another user"  # root may open it, but it is not root's
    else:
        expected = f"cannot be read by this user (uid {uid}"  # root's 0400/0600 file: closed to the service user
    assert expected in answer["foreign"]


def run(mode: str, tree: Path, base: Path, shared: Path, foreign: Path) -> dict[str, Any]:
    python = _python(mode)
    argv = [*privileges.drop_argv(mode), python, "-I", "-S", "-c", SCRIPT, str(tree), str(base), str(shared)]
    argv += [str(foreign), *_site_packages()]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, check=False, cwd="/", env={"PATH": privileges.SEARCH_PATH}
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
