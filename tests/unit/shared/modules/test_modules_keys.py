"""Module keys (0600 files or values), the credential vault, and signatures."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from shared.modules import CredentialError, CredentialVault, KeyFileError, ModuleKeys, Signer
from shared.modules.keys import CREDENTIALS_KEY_FILE, SIGNING_KEY_FILE


def test_key_files_are_created_0600_in_a_0700_folder_and_reused(tmp_path: Path) -> None:
    keys = ModuleKeys.load(tmp_path / "keys")
    folder = tmp_path / "keys"
    assert folder.stat().st_mode & 0o777 == 0o700
    for name in (CREDENTIALS_KEY_FILE, SIGNING_KEY_FILE):
        assert (folder / name).stat().st_mode & 0o777 == 0o600
    assert ModuleKeys.load(folder) == keys
    assert repr(keys) == "ModuleKeys()"


def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    ModuleKeys.load(tmp_path)
    os.chmod(tmp_path / SIGNING_KEY_FILE, 0o644)
    with pytest.raises(KeyFileError, match="chmod 600"):
        ModuleKeys.load(tmp_path)


def test_key_values_from_the_environment(tmp_path: Path) -> None:
    fernet = base64.urlsafe_b64encode(os.urandom(32)).decode()
    keys = ModuleKeys.load(tmp_path / "unused", credentials_key=fernet, signing_key="s" * 40)
    assert keys.credentials == fernet.encode() and keys.signing == b"s" * 40
    assert not (tmp_path / "unused").exists()
    with pytest.raises(KeyFileError, match="is not a credentials key"):
        ModuleKeys.load(tmp_path, credentials_key="short")
    with pytest.raises(KeyFileError, match="at least 32 characters"):
        ModuleKeys.load(tmp_path, credentials_key=fernet, signing_key="short")


def test_the_vault_round_trips_and_fails_without_leaking(tmp_path: Path) -> None:
    keys = ModuleKeys.load(tmp_path)
    vault = CredentialVault(keys.credentials)
    token = vault.seal({"api_key": "sk-secret-123"})
    assert "sk-secret-123" not in token
    assert vault.open(token) == {"api_key": "sk-secret-123"}
    other = CredentialVault(base64.urlsafe_b64encode(os.urandom(32)))
    with pytest.raises(CredentialError, match="cannot be decrypted") as caught:
        other.open(token)
    assert "sk-secret" not in str(caught.value)
    with pytest.raises(CredentialError):
        vault.open("garbage")
    with pytest.raises(CredentialError, match="not a Fernet key"):
        CredentialVault(b"short")
    assert "key" in repr(vault) and keys.credentials.decode() not in repr(vault)


def test_signatures_bind_purpose_and_record() -> None:
    signer = Signer(b"k" * 32)
    record = {"module_id": "runs", "files_hash": "sha256:1"}
    signature = signer.sign("version", record)
    assert signer.verify("version", record, signature)
    assert not signer.verify("attestation", record, signature)
    assert not signer.verify("version", record | {"files_hash": "sha256:2"}, signature)
    assert not signer.verify("version", record, None)
    assert not Signer(b"x" * 32).verify("version", record, signature)
    with pytest.raises(ValueError, match="at least 32 bytes"):
        Signer(b"short")
