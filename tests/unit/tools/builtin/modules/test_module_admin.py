"""module_admin through the registry: list, enable/disable, credentials (never shown),
drafts (confined paths, diff, validation, atomic promote) and versions (rollback)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER, attestation_of
from tools import LocalToolRegistry
from tools.builtin.modules import ModuleToolkit

BASE = "http://127.0.0.1:8000/api/runs"
SECRET = "sk-live-9f8e7d6c5b4a"


def install(registry: LocalToolRegistry, *, auth: str = "none", name: str = "Run Log") -> str:
    built = registry.call_tool(
        "module_pipeline",
        action="build",
        name=name,
        category="fitness",
        api_url=BASE,
        requires_api_key=auth != "none",
        auth_type=auth if auth != "none" else "api_key",
    )
    module_id: str = built.data["module_id"]
    registry.call_tool("module_pipeline", action="write_code", module_id=module_id, adapter_code=RUNS_ADAPTER)
    attestation = attestation_of(registry.call_tool("module_pipeline", action="validate", module_id=module_id))
    result = registry.call_tool(
        "module_pipeline", action="install", module_id=module_id, validation_attestation=attestation
    )
    assert result.ok, result.error
    return module_id


def admin(registry: LocalToolRegistry, action: str, **arguments: Any) -> Any:
    return registry.call_tool("module_admin", action=action, **arguments)


def test_list_enable_disable(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    assert admin(registry, "list").data == {"modules": []}
    install(registry)
    registry.call_tool("module_pipeline", action="build", name="Draft only", category="social", api_url=BASE)
    assert admin(registry, "enable", module_id="run_log").data == {
        "module_id": "run_log",
        "enabled": True,
        "loaded": True,
    }
    rows = admin(registry, "list").data["modules"]
    assert rows == [
        {
            "module_id": "draft_only",
            "name": "Draft only",
            "category": "social",
            "installed": False,
            "enabled": False,
            "active_version": None,
            "versions": 0,
            "required_credentials": ["api_key"],
            "credentials_stored": False,
            "last_validation": None,
        },
        {
            "module_id": "run_log",
            "name": "Run Log",
            "category": "fitness",
            "installed": True,
            "enabled": True,
            "active_version": "v1",
            "versions": 1,
            "required_credentials": [],
            "credentials_stored": False,
            "last_validation": "passed",
            "loaded": True,
        },
    ]
    assert [c.platform for c in kit.adapters.adapters()] == ["run_log"]
    assert admin(registry, "disable", module_id="run_log").data == {"module_id": "run_log", "enabled": False}
    assert kit.adapters.adapters() == []
    not_installed = admin(registry, "enable", module_id="draft_only")
    assert not_installed.error is not None and "is not installed" in not_installed.error.message


def test_enable_names_missing_credentials(registry: LocalToolRegistry) -> None:
    install(registry, auth="api_key")
    data = admin(registry, "enable", module_id="run_log").data
    assert data["credentials_missing"] == ["api_key"]
    admin(registry, "store_credentials", module_id="run_log", api_key=SECRET)
    assert "credentials_missing" not in admin(registry, "enable", module_id="run_log").data


def test_enable_reports_a_module_that_fails_to_load(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    install(registry)
    adapter = kit.store.layout.version_files("run_log", "v1") / "adapter.py"
    adapter.write_text(RUNS_ADAPTER + "\n# tampered after install\n")
    data = admin(registry, "enable", module_id="run_log").data
    assert data["loaded"] is False
    assert data["load_error"] == "the files of version v1 changed after it was installed; install it again"


# -- credentials ---------------------------------------------------------------------------


def test_credentials_are_stored_encrypted_and_never_returned(
    registry: LocalToolRegistry, kit: ModuleToolkit, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    install(registry, auth="api_key")
    results = [
        admin(registry, "store_credentials", module_id="run_log", api_key=SECRET),
        admin(registry, "store_credentials", module_id="run_log", credentials_json=json.dumps({"api_key": SECRET})),
        admin(registry, "list"),
        admin(registry, "enable", module_id="run_log"),
        registry.call_tool("store_module_credentials", module_id="run_log", api_key=SECRET),
        registry.call_tool("list_modules"),
    ]
    assert results[0].data == {"module_id": "run_log", "stored": ["api_key"], "missing": []}
    for result in results:
        assert result.ok, result.error
        assert SECRET not in json.dumps(result.to_dict())
    stored = kit.store.layout.credential_path("run_log")
    assert SECRET.encode() not in stored.read_bytes()
    assert stored.stat().st_mode & 0o777 == 0o600
    assert stored.parent.stat().st_mode & 0o777 == 0o700
    assert SECRET not in caplog.text
    assert not hasattr(kit.credentials, "get") and not hasattr(kit.credentials, "values")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "Give the credentials"),
        ({"api_key": SECRET, "credentials_json": '{"token": "x"}'}, "not both"),
        ({"api_key": 12345678901234}, "api_key must be a string (the value you sent is not shown)"),
        ({"credentials_json": SECRET}, "must be a JSON object of names to strings"),
        ({"credentials_json": json.dumps({"api_key": 123})}, "must be a JSON object of names to strings"),
        ({"credentials_json": json.dumps({"Bad Name": SECRET})}, "lower_snake_case"),
        ({"credentials_json": json.dumps({"api_key": SECRET * 1000})}, "at most 4096 characters"),
        ({"credentials_json": json.dumps({f"k{i}": SECRET for i in range(30)})}, "at most 20 credentials"),
    ],
)
def test_bad_credentials_are_refused_without_echoing_them(
    registry: LocalToolRegistry, arguments: dict[str, Any], expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    install(registry, auth="api_key")
    result = admin(registry, "store_credentials", module_id="run_log", **arguments)
    assert result.error is not None and result.error.type == "validation_error"
    assert expected in result.error.message
    text = json.dumps(result.to_dict())
    assert SECRET not in text and "12345678901234" not in text
    assert SECRET not in caplog.text


# -- drafts ---------------------------------------------------------------------------------


def test_draft_edit_diff_validate_promote(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    install(registry)
    draft = admin(registry, "create_draft", module_id="run_log").data
    assert draft["base_version"] == "v1" and draft["files"] == ["adapter.py", "manifest.json", "test_adapter.py"]
    draft_id = draft["draft_id"]
    changed = RUNS_ADAPTER.replace("timeout=5", "timeout=7")
    edit = admin(registry, "edit_draft", draft_id=draft_id, file_path="adapter.py", content=changed).data
    assert edit == {
        "draft_id": draft_id,
        "file_path": "adapter.py",
        "created": False,
        "changed": True,
        "characters": len(changed),
    }
    diff = admin(registry, "diff_draft", draft_id=draft_id).data
    assert diff["changed_files"] == ["adapter.py"]
    assert diff["diff"].startswith("--- a/adapter.py\n+++ b/adapter.py\n@@")
    assert (
        '-            response = self.http_session().get(config["base_url"], headers=headers, timeout=5)'
        in diff["diff"]
    )
    assert (
        '+            response = self.http_session().get(config["base_url"], headers=headers, timeout=7)'
        in diff["diff"]
    )

    refused = admin(registry, "promote_draft", draft_id=draft_id)
    assert refused.error is not None and refused.error.type == "permission_denied"
    assert "run validate_draft" in refused.error.message

    report = admin(registry, "validate_draft", draft_id=draft_id)
    attestation = attestation_of(report)
    assert attestation["target"] == f"draft:{draft_id}"
    promoted = admin(registry, "promote_draft", draft_id=draft_id).data
    assert promoted == {
        "module_id": "run_log",
        "version_id": "v2",
        "previous_version": "v1",
        "draft_id": draft_id,
        "promoted": True,
    }
    assert kit.versions.files("run_log", "v2")["adapter.py"].decode() == changed
    gone = admin(registry, "diff_draft", draft_id=draft_id)
    assert gone.error is not None and "There is no draft" in gone.error.message


def test_an_edit_after_validate_draft_needs_a_new_validation(registry: LocalToolRegistry) -> None:
    install(registry)
    draft_id = admin(registry, "create_draft", module_id="run_log").data["draft_id"]
    attestation_of(admin(registry, "validate_draft", draft_id=draft_id))
    admin(registry, "edit_draft", draft_id=draft_id, file_path="notes.md", content="# notes\n")
    refused = admin(registry, "promote_draft", draft_id=draft_id)
    assert refused.error is not None and "run validate_draft" in refused.error.message


def test_a_draft_attestation_is_not_an_install_attestation(registry: LocalToolRegistry) -> None:
    install(registry)
    draft_id = admin(registry, "create_draft", module_id="run_log").data["draft_id"]
    attestation = attestation_of(admin(registry, "validate_draft", draft_id=draft_id))
    result = registry.call_tool(
        "module_pipeline", action="install", module_id="run_log", validation_attestation=attestation
    )
    assert result.error is not None and f"(draft:{draft_id}), not for 'run_log' (module)" in result.error.message


def test_a_failing_draft_cannot_be_promoted(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    install(registry)
    draft_id = admin(registry, "create_draft", module_id="run_log").data["draft_id"]
    admin(registry, "edit_draft", draft_id=draft_id, file_path="adapter.py", content="import socket\n" + RUNS_ADAPTER)
    report = admin(registry, "validate_draft", draft_id=draft_id).data
    assert report["passed"] is False
    assert [(f["file"], f["line"], f["rule"]) for f in report["findings"]] == [("adapter.py", 1, "forbidden-import")]
    refused = admin(registry, "promote_draft", draft_id=draft_id)
    assert refused.error is not None and refused.error.type == "permission_denied"
    assert kit.versions.active("run_log") == "v1"


@pytest.mark.parametrize(
    "path",
    [
        "../adapter.py",
        "../../modules/other/adapter.py",
        "/etc/passwd.py",
        "files/../../../x.py",
        "./adapter.py",
        "..\\x.py",
        "C:/x.py",
        "adapter.py\x00.txt",
        ".hidden.py",
        "run.sh",
        "a/b/c/d/e.py",
        "",
        "x" * 300 + ".py",
    ],
)
def test_edit_draft_refuses_paths_outside_the_module(
    registry: LocalToolRegistry, kit: ModuleToolkit, path: str, tmp_path: Path
) -> None:
    install(registry)
    draft_id = admin(registry, "create_draft", module_id="run_log").data["draft_id"]
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    result = admin(registry, "edit_draft", draft_id=draft_id, file_path=path, content="pwned = True\n")
    assert result.error is not None and result.error.type in ("permission_denied", "validation_error")
    after = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert before == after


def test_edit_draft_refuses_a_symlink_inside_the_draft(
    registry: LocalToolRegistry, kit: ModuleToolkit, tmp_path: Path
) -> None:
    install(registry)
    draft_id = admin(registry, "create_draft", module_id="run_log").data["draft_id"]
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, kit.store.layout.draft_dir(draft_id) / "files" / "link")
    result = admin(registry, "edit_draft", draft_id=draft_id, file_path="link/x.py", content="x = 1\n")
    assert result.error is not None and result.error.type == "permission_denied"
    assert "symbolic link" in result.error.message
    assert list(outside.iterdir()) == []
    validate = admin(registry, "validate_draft", draft_id=draft_id)
    assert validate.error is not None and "symbolic link" in validate.error.message


@pytest.mark.parametrize("draft_id", ["../../index", "d_zzzzzzzzzzzz", "d_000000000000", "x" * 64])
def test_unknown_or_hostile_draft_ids(registry: LocalToolRegistry, draft_id: str) -> None:
    result = admin(registry, "diff_draft", draft_id=draft_id)
    assert result.error is not None and result.error.type == "validation_error"


# -- versions ---------------------------------------------------------------------------------


def _promote(registry: LocalToolRegistry, content: str) -> str:
    draft_id = admin(registry, "create_draft", module_id="run_log").data["draft_id"]
    admin(registry, "edit_draft", draft_id=draft_id, file_path="adapter.py", content=content)
    attestation_of(admin(registry, "validate_draft", draft_id=draft_id))
    version: str = admin(registry, "promote_draft", draft_id=draft_id).data["version_id"]
    return version


def test_list_versions_and_rollback_restore_exactly_that_version(
    registry: LocalToolRegistry, kit: ModuleToolkit
) -> None:
    install(registry)
    v1_files = kit.versions.files("run_log", "v1")
    _promote(registry, RUNS_ADAPTER + "\n# v2\n")
    _promote(registry, RUNS_ADAPTER + "\n# v3\n")
    listed = admin(registry, "list_versions", module_id="run_log").data
    assert listed["active_version"] == "v3"
    assert [(v["version_id"], v["active"], v["source"].split()[0]) for v in listed["versions"]] == [
        ("v1", False, "install"),
        ("v2", False, "draft"),
        ("v3", True, "draft"),
    ]
    admin(registry, "enable", module_id="run_log")
    result = admin(registry, "rollback_version", module_id="run_log", target_version_id="v1")
    assert result.data == {"module_id": "run_log", "active_version": "v1", "previous_version": "v3"}
    assert kit.versions.active("run_log") == "v1"
    assert kit.versions.files("run_log", "v1") == v1_files
    (status,) = kit.adapters.statuses()
    assert (status.version_id, status.loaded) == ("v1", True)


@pytest.mark.parametrize(
    ("target", "expected"), [("v9", "has no version 'v9'; its versions: v1."), ("../v1", "is not a version id")]
)
def test_rollback_to_a_missing_version(registry: LocalToolRegistry, target: str, expected: str) -> None:
    install(registry)
    result = admin(registry, "rollback_version", module_id="run_log", target_version_id=target)
    assert result.error is not None and expected in result.error.message


def test_rollback_refuses_a_version_whose_record_was_edited(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    install(registry)
    _promote(registry, RUNS_ADAPTER + "\n# v2\n")
    record = kit.store.layout.version_dir("run_log", "v1") / "version.json"
    data = json.loads(record.read_text())
    data["files_hash"] = "sha256:" + "0" * 64
    record.write_text(json.dumps(data))
    result = admin(registry, "rollback_version", module_id="run_log", target_version_id="v1")
    assert result.error is not None and "not signed by this installation" in result.error.message
    assert kit.versions.active("run_log") == "v2"
