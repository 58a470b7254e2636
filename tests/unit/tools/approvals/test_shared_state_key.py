"""``TOOLDECK_STATE_KEY_FILE``: one state key for every replica. The entry points' signer
(`StateSigner.from_env`) reads the named file instead of the user's own key; it is never
created (a missing file is an error naming the setting, not a fresh key per host), and it is
checked like the user's key (this user's regular file, not a symlink, nobody else may read
or write it)."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tools.approvals import STATE_KEY_FILE_VARIABLE, StateKeyError, StateSignatureError, StateSigner


def shared_key(path: Path, mode: int = 0o600) -> Path:
    """What the operator makes once and copies to every host."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(secrets.token_hex(32) + "\n")
    path.chmod(mode)
    return path


def host_env(tmp_path: Path, name: str, key: Path | str | None) -> dict[str, str]:
    env = {"HOME": str(tmp_path / name), "XDG_CONFIG_HOME": str(tmp_path / name / "config")}
    if key is not None:
        env[STATE_KEY_FILE_VARIABLE] = str(key)
    return env


def test_two_hosts_with_their_own_config_dirs_verify_each_others_states(tmp_path: Path) -> None:
    key = shared_key(tmp_path / "ops" / "state.key")
    copy = tmp_path / "host-b-etc" / "state.key"
    copy.parent.mkdir()
    copy.write_bytes(key.read_bytes())
    copy.chmod(0o400)  # read-only for its owner is fine too
    first = StateSigner.from_env(host_env(tmp_path, "a", key))
    second = StateSigner.from_env(host_env(tmp_path, "b", copy))
    assert first.key_file == key
    signed = first.sign({"kind": "k", "n": 1})
    assert second.verify(signed) == {"kind": "k", "n": 1}
    assert not (tmp_path / "a" / "config" / "tooldeck" / "state.key").exists()  # no key of the user's own made
    own = StateSigner.from_env(host_env(tmp_path, "c", None))  # a host without the setting: its own key
    with pytest.raises(StateSignatureError, match="there is no state key at"):
        own.verify(signed)
    own.sign({"kind": "k"})
    with pytest.raises(StateSignatureError, match="signed with another key") as caught:
        own.verify(signed)
    assert caught.value.reason == "other_key"


def test_a_missing_shared_key_is_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "etc" / "state.key"
    signer = StateSigner.from_env(host_env(tmp_path, "a", missing))
    problem = rf"state key {missing} \(TOOLDECK_STATE_KEY_FILE\) does not exist"
    with pytest.raises(StateKeyError, match=problem):
        signer.sign({"kind": "k"})
    with pytest.raises(StateKeyError, match=problem):
        signer.verify(StateSigner.ephemeral().sign({}))
    assert not missing.exists() and not missing.parent.exists()


def test_the_setting_wants_an_absolute_path(tmp_path: Path) -> None:
    signer = StateSigner.from_env(host_env(tmp_path, "a", "state.key"))
    with pytest.raises(StateKeyError, match="TOOLDECK_STATE_KEY_FILE must name the key file by an absolute path"):
        signer.sign({"kind": "k"})


def test_a_blank_setting_means_the_users_own_key(tmp_path: Path) -> None:
    signer = StateSigner.from_env(host_env(tmp_path, "a", "  "))
    assert signer.key_file == tmp_path / "a" / "config" / "tooldeck" / "state.key"


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_a_shared_key_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    key = shared_key(tmp_path / "etc" / "state.key", mode)
    with pytest.raises(StateKeyError, match=f"run: chmod 600 {key}"):
        StateSigner.from_env(host_env(tmp_path, "a", key)).sign({"kind": "k"})


def test_a_symlinked_shared_key_is_refused(tmp_path: Path) -> None:
    real = shared_key(tmp_path / "secrets" / "state.key")
    link = tmp_path / "etc" / "state.key"
    link.parent.mkdir()
    link.symlink_to(real)
    with pytest.raises(StateKeyError, match="is a symlink"):
        StateSigner.from_env(host_env(tmp_path, "a", link)).sign({"kind": "k"})
