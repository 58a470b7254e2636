"""StateSigner: any edit to a signed document is refused; the key is the user's own (0600),
created once and atomically, and never made by a verification."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tools.approvals import STATE_KEY_FILE, StateKeyError, StateSignatureError, StateSigner

WORKTREE = Path(__file__).resolve().parents[4]


def _document() -> dict[str, Any]:
    return {
        "kind": "tooldeck.paused_run",
        "version": 2,
        "agent": "main",
        "freedom": "medium",
        "pending_approvals": [{"call_id": "c0", "tool": "wipe", "arguments": {"path": "a"}, "risk": "dangerous"}],
        "messages": [{"role": "user", "content": "héllo ✓"}, {"role": "assistant", "content": None}],
        "elapsed_ms": 12.5,
    }


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


EDITS = {
    "level": _set(["freedom"], "high"),
    "agent": _set(["agent"], "coder"),
    "arguments": _set(["pending_approvals", 0, "arguments", "path"], "/"),
    "risk": _set(["pending_approvals", 0, "risk"], "safe"),
    "pending dropped": _set(["pending_approvals"], []),
    "message text": _set(["messages", 0, "content"], "hello ✓"),
    "number type": _set(["elapsed_ms"], 12.50001),
    "field added": _set(["extra"], 1),
    "mac replaced": _set(["signature", "mac"], "0" * 64),
}


def test_a_signed_document_verifies_after_a_json_round_trip_and_reformatting() -> None:
    signer = StateSigner.ephemeral()
    signed = signer.sign(_document())
    assert set(signed["signature"]) == {"alg", "key_id", "mac"}
    reformatted = json.loads(json.dumps(signed, indent=4, ensure_ascii=True))
    assert signer.verify(reformatted) == _document()


@pytest.mark.parametrize("edit", list(EDITS.values()), ids=list(EDITS))
def test_any_edit_is_refused(edit: Callable[[dict[str, Any]], None]) -> None:
    signer = StateSigner.ephemeral()
    signed = json.loads(json.dumps(signer.sign(_document())))
    edit(signed)
    with pytest.raises(StateSignatureError, match="edited after it was saved") as caught:
        signer.verify(signed)
    assert caught.value.reason == "mismatch"


def test_an_unsigned_document_is_refused() -> None:
    with pytest.raises(StateSignatureError, match="is not signed") as caught:
        StateSigner.ephemeral().verify(_document())
    assert caught.value.reason == "unsigned"


@pytest.mark.parametrize(
    "signature",
    [
        "abc",
        {"alg": "none", "key_id": "0" * 16, "mac": "0" * 64},
        {"alg": "hmac-sha256", "key_id": "x", "mac": "0" * 64},
        {"alg": "hmac-sha256", "key_id": "0" * 16, "mac": "0" * 63},
        {"alg": "hmac-sha256", "key_id": "0" * 16, "mac": "G" * 64},
    ],
)
def test_a_malformed_signature_is_refused(signature: Any) -> None:
    with pytest.raises(StateSignatureError, match="malformed signature") as caught:
        StateSigner.ephemeral().verify({**_document(), "signature": signature})
    assert caught.value.reason == "malformed"


def test_a_document_signed_with_another_key_is_refused() -> None:
    signed = StateSigner.ephemeral().sign(_document())
    with pytest.raises(StateSignatureError, match="signed with another key") as caught:
        StateSigner.ephemeral().verify(signed)
    assert caught.value.reason == "other_key"


def test_from_env_keeps_the_key_0600_in_the_xdg_config_dir(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    signer = StateSigner.from_env(env)
    key_file = tmp_path / "xdg" / "tooldeck" / STATE_KEY_FILE
    assert signer.key_file == key_file
    assert not key_file.exists()
    signed = signer.sign(_document())
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert len(key_file.read_text().strip()) == 64
    assert StateSigner.from_env(env).verify(signed) == _document()  # another process, the same key
    assert [p.name for p in key_file.parent.iterdir()] == [STATE_KEY_FILE]  # no temporary file left


def test_verifying_never_creates_a_key(tmp_path: Path) -> None:
    key_file = tmp_path / "cfg" / STATE_KEY_FILE
    signed = StateSigner.ephemeral().sign(_document())
    with pytest.raises(StateSignatureError, match="there is no state key at") as caught:
        StateSigner.from_file(key_file).verify(signed)
    assert caught.value.reason == "no_key"
    assert not key_file.exists()


def test_removing_the_key_rotates_it_and_old_states_are_refused(tmp_path: Path) -> None:
    key_file = tmp_path / STATE_KEY_FILE
    old = StateSigner.from_file(key_file).sign(_document())
    key_file.unlink()
    fresh = StateSigner.from_file(key_file)
    fresh.sign({"kind": "x"})  # the next pause makes a new key
    with pytest.raises(StateSignatureError, match="signed with another key"):
        fresh.verify(old)


def test_processes_starting_at_once_share_one_key(tmp_path: Path) -> None:
    key_file = tmp_path / "cfg" / STATE_KEY_FILE
    code = (
        "import json, sys\n"
        "from tools.approvals import StateSigner\n"
        "print(json.dumps(StateSigner.from_file(sys.argv[1]).sign({'n': int(sys.argv[2])})))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(key_file), str(n)], stdout=subprocess.PIPE, text=True, env=env
        )
        for n in range(6)
    ]
    outputs = [proc.communicate(timeout=120)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 6
    verifier = StateSigner.from_file(key_file)
    assert [verifier.verify(json.loads(out))["n"] for out in outputs] == list(range(6))


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o666])
def test_a_key_other_users_may_read_or_write_is_refused(tmp_path: Path, mode: int) -> None:
    key_file = tmp_path / STATE_KEY_FILE
    signer = StateSigner.from_file(key_file)
    signed = signer.sign(_document())
    key_file.chmod(mode)
    with pytest.raises(StateKeyError, match=f"run: chmod 600 {key_file}"):
        StateSigner.from_file(key_file).verify(signed)
    with pytest.raises(StateKeyError):
        StateSigner.from_file(key_file).sign(_document())


@pytest.mark.parametrize("content", ["", "not hex at all", "ab" * 31, "ab" * 33])
def test_a_damaged_key_is_refused_not_replaced(tmp_path: Path, content: str) -> None:
    key_file = tmp_path / STATE_KEY_FILE
    key_file.write_text(content)
    key_file.chmod(0o600)
    with pytest.raises(StateKeyError, match="is damaged"):
        StateSigner.from_file(key_file).sign(_document())
    assert key_file.read_text() == content


def test_a_symlinked_key_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.key"
    StateSigner.from_file(real).sign(_document())
    link = tmp_path / STATE_KEY_FILE
    link.symlink_to(real)
    with pytest.raises(StateKeyError, match="is a symlink"):
        StateSigner.from_file(link).sign(_document())


@pytest.mark.skipif(os.name == "nt" or os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_key_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    key_file = tmp_path / STATE_KEY_FILE
    StateSigner.from_file(key_file).sign(_document())
    os.chown(key_file, 1000, 1000)
    with pytest.raises(StateKeyError, match="belongs to another user"):
        StateSigner.from_file(key_file).sign(_document())


def test_a_short_key_or_a_bad_construction_is_a_developer_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        StateSigner(b"short")
    with pytest.raises(ValueError, match="exactly one of"):
        StateSigner()
    with pytest.raises(ValueError, match="exactly one of"):
        StateSigner(b"k" * 32, key_file=tmp_path / "k")
