"""A project's .tooldeck/registry.json is used only while the user trusts it: a cloned
project's file is ignored (never parsed, never built) until ``trust_project``; any byte
changed ends the trust; files tooldeck writes keep the trust they had."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tools.store import (
    Registry,
    RegistryFileError,
    RegistryService,
    RegistryStore,
    StoreError,
    ToolNotAdoptedError,
    TrustFileError,
)
from tools.store.trust import TRUST_FILE, file_sha256

from .conftest import http_config


def _clone(store: RegistryStore, *ids: str) -> bytes:
    """A project file as a cloned repository brings it: written by someone else."""
    doc = {"version": 1, "tools": {i: http_config(i).model_dump(mode="json", exclude_none=True) for i in ids}}
    data = json.dumps(doc, indent=2).encode()
    store.project_path.parent.mkdir(parents=True, exist_ok=True)
    store.project_path.write_bytes(data)
    return data


def test_a_cloned_projects_file_is_not_used_until_trusted(store: RegistryStore) -> None:
    store.update_user(lambda r: r.with_tool(http_config("mine")))
    data = _clone(store, "theirs")
    assert store.load_project() == Registry()
    assert sorted(store.load_merged().tools) == ["mine"]
    trust = store.project_trust()
    assert (trust.status, trust.sha256, trust.usable) == ("untrusted", file_sha256(data), False)
    assert trust.notice() == (
        f"{store.project_path} is not trusted, so none of its tools is listed, started or offered to a model. "
        "Review it, then run `tooldeck trust` to use it (`tooldeck trust --revoke` withdraws trust)."
    )
    trusted, registry = store.trust_project()
    assert trusted.status == "trusted" and sorted(registry.tools) == ["theirs"]
    assert sorted(store.load_merged().tools) == ["mine", "theirs"]
    assert store.project_trust().notice() is None


def test_trust_is_kept_0600_in_the_users_config_by_real_path(store: RegistryStore, tmp_path: Path) -> None:
    _clone(store, "theirs")
    store.trust_project()
    trust_file = store.user_path.parent / TRUST_FILE
    assert stat.S_IMODE(trust_file.stat().st_mode) == 0o600
    assert list(json.loads(trust_file.read_text())["projects"]) == [os.path.realpath(store.project_path)]
    link = tmp_path / "link"
    link.symlink_to(store.project_path.parent.parent)
    via_link = RegistryStore(store.user_path, link / ".tooldeck" / "registry.json")
    assert via_link.project_trust().status == "trusted"


@pytest.mark.parametrize(
    "edit",
    [
        lambda data: data + b"\n",
        lambda data: data.replace(b"127.0.0.1:9", b"127.0.0.1:8"),
        lambda data: data.replace(b'"weather"', b'"weathex"'),
    ],
    ids=["a trailing newline", "another URL", "another id"],
)
def test_any_change_ends_the_trust(store: RegistryStore, edit: object) -> None:
    data = _clone(store, "weather")
    store.trust_project()
    store.project_path.write_bytes(edit(data))  # type: ignore[operator]
    trust = store.project_trust()
    assert trust.status == "changed"
    assert store.load_project() == Registry()
    notice = trust.notice()
    assert notice is not None and f"{store.project_path} changed since you trusted it on " in notice


def test_revoking_ends_the_trust(store: RegistryStore) -> None:
    _clone(store, "weather")
    store.trust_project()
    assert store.revoke_project_trust() is not None
    assert store.project_trust().status == "untrusted" and store.load_project() == Registry()
    assert store.revoke_project_trust() is None


def test_an_untrusted_file_is_never_parsed(store: RegistryStore) -> None:
    store.update_user(lambda r: r.with_tool(http_config("mine")))
    store.project_path.parent.mkdir(parents=True)
    store.project_path.write_text("{not json at all")
    assert sorted(store.load_merged().tools) == ["mine"]  # no error from a file nobody trusted
    assert store.project_trust().status == "untrusted"


def test_an_invalid_file_cannot_be_trusted(store: RegistryStore) -> None:
    store.project_path.parent.mkdir(parents=True)
    store.project_path.write_text('{"version": 1, "tools": {"a": 5}}')
    with pytest.raises(RegistryFileError, match=r"tools\.a"):
        store.trust_project()
    assert store.project_trust().status == "untrusted"


def test_there_is_nothing_to_trust_without_a_file(store: RegistryStore) -> None:
    assert store.project_trust().status == "absent" and store.project_trust().usable
    with pytest.raises(StoreError, match="there is no project registry at"):
        store.trust_project()


def test_tooldecks_own_writes_keep_the_trust_they_had(store: RegistryStore) -> None:
    store.update_project(lambda r: r.with_tool(http_config("first")))  # no file before: the user made it
    assert store.project_trust().status == "trusted"
    store.update_project(lambda r: r.with_tool(http_config("second")))
    assert sorted(store.load_project().tools) == ["first", "second"]


def test_writing_into_an_untrusted_file_does_not_trust_it(store: RegistryStore) -> None:
    _clone(store, "theirs")
    store.update_project(lambda r: r.with_tool(http_config("mine")))
    assert store.project_trust().status == "untrusted"
    assert store.load_project() == Registry()


def test_the_users_own_registry_is_trusted(tmp_path: Path) -> None:
    user = tmp_path / "home" / ".tooldeck" / "registry.json"
    store = RegistryStore(user, user)  # run in the directory whose .tooldeck/ is the user's own file
    store.update_user(lambda r: r.with_tool(http_config("mine")))
    assert store.project_trust().status == "own"
    assert sorted(store.load_project().tools) == ["mine"]


def test_a_trust_file_every_user_may_write_is_refused(store: RegistryStore) -> None:
    _clone(store, "theirs")
    store.trust_project()
    trust_file = store.user_path.parent / TRUST_FILE
    trust_file.chmod(0o666)
    with pytest.raises(TrustFileError, match="writable by every user"):
        store.load_project()


def test_a_tool_of_an_untrusted_file_is_not_adopted_and_says_how_to_trust(store: RegistryStore) -> None:
    _clone(store, "theirs")
    service = RegistryService(store)
    assert service.build_tools() == []
    with pytest.raises(ToolNotAdoptedError, match="is not trusted, so none of its tools is listed") as caught:
        service.get("theirs")
    assert "run `tooldeck trust`" in str(caught.value)
