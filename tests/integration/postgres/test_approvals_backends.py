"""The approvals store's contract, run against the approvals file and PostgreSQL: round trips
bound to version hashes, fresh reads across store objects, hostile ids and hashes refused,
concurrent writers lose nothing, and a policy over either store gates calls the same way."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.unit.tools.approvals.conftest import Runs, gated_registry
from tools.approvals import (
    ApprovalError,
    ApprovalPolicy,
    ApprovalsBackend,
    ApprovalsFile,
    ApprovalsStore,
    FreedomLevel,
    InvalidApprovalIdError,
    InvalidFreedomLevelError,
    PostgresApprovalsStore,
    ToolApproval,
    open_approvals_store,
)

from .backends import BACKENDS, database_url_for

H1, H2 = "a" * 64, "b" * 64
WHEN = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)
MakeStore = Callable[[], ApprovalsBackend]


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Builds store objects over one shared place (a file, or one database)."""
    url = database_url_for(request) if request.param == "postgres" else None
    made: list[PostgresApprovalsStore] = []

    def make() -> ApprovalsBackend:
        if url is None:
            return ApprovalsStore(tmp_path / "cfg" / "approvals.json", clock=lambda: WHEN)
        store = PostgresApprovalsStore(url, clock=lambda: WHEN)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def test_an_empty_store_has_no_level_and_no_approvals(make_store: MakeStore) -> None:
    store = make_store()
    assert isinstance(store, ApprovalsBackend)
    assert store.freedom() is None
    assert store.approvals() == {}
    assert store.get("weather") is None
    assert not store.is_approved("weather", H1)
    assert store.revoke("weather") is None


def test_round_trip_bound_to_the_version_hash(make_store: MakeStore) -> None:
    store = make_store()
    approval = store.approve("weather", H1, risk="moderate")
    assert (approval.version_hash, approval.approved_at, approval.risk) == (H1, WHEN, "moderate")
    assert store.set_freedom("HIGH") is FreedomLevel.HIGH
    store.approve("shell", H2)
    assert store.freedom() is FreedomLevel.HIGH
    assert store.is_approved("weather", H1)
    assert not store.is_approved("weather", H2)
    assert list(store.approvals()) == ["shell", "weather"]
    assert store.get("weather") == approval
    loaded = store.load()
    assert loaded.freedom is FreedomLevel.HIGH and loaded.approvals == store.approvals()
    store.approve("weather", H2)  # a new version replaces the old approval
    assert store.is_approved("weather", H2) and not store.is_approved("weather", H1)
    assert store.revoke("weather") is not None
    assert store.revoke("weather") is None
    assert store.set_freedom(None) is None
    assert store.freedom() is None
    assert list(store.approvals()) == ["shell"]


def test_reads_are_fresh_across_store_objects(make_store: MakeStore) -> None:
    reader, writer = make_store(), make_store()
    assert reader.freedom() is None
    writer.set_freedom("low")
    assert reader.freedom() is FreedomLevel.LOW
    writer.approve("weather", H1)
    assert reader.is_approved("weather", H1)
    writer.revoke("weather")
    assert reader.get("weather") is None


@pytest.mark.parametrize("bad_id", ["", "../../etc/passwd", "a b", "x" * 65, "tool\nname", "名前", "a'; DROP TABLE x"])
def test_approval_ids_that_are_not_tool_names_are_refused(make_store: MakeStore, bad_id: str) -> None:
    store = make_store()
    attempts: list[Callable[[], object]] = [lambda: store.approve(bad_id, H1), lambda: store.revoke(bad_id)]
    for attempt in attempts:
        with pytest.raises(InvalidApprovalIdError, match="is not a tool name"):
            attempt()
    assert store.get(bad_id) is None
    assert store.approvals() == {}


@pytest.mark.parametrize("bad_hash", ["", "A" * 64, "a" * 63, "g" * 64, "a" * 64 + "\n"])
def test_version_hashes_must_be_sha256_hex(make_store: MakeStore, bad_hash: str) -> None:
    store = make_store()
    with pytest.raises(ApprovalError, match="is not a SHA-256 hex digest"):
        store.approve("weather", bad_hash)
    assert store.approvals() == {}


def test_unknown_levels_are_refused(make_store: MakeStore) -> None:
    store = make_store()
    with pytest.raises(InvalidFreedomLevelError, match="use one of: low"):
        store.set_freedom("maximum")
    assert store.freedom() is None


def test_concurrent_writers_lose_nothing(make_store: MakeStore) -> None:
    stores = [make_store() for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        barrier.wait()
        try:
            for j in range(10):
                stores[worker].approve(f"w{worker}_t{j}", f"{worker:x}{j:x}".rjust(64, "0"))
                stores[worker].set_freedom(("low", "medium", "high")[j % 3])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    approvals = make_store().approvals()
    assert len(approvals) == 60
    assert approvals["w5_t9"].version_hash == "59".rjust(64, "0")


def test_a_policy_over_the_store_asks_until_this_version_is_approved(make_store: MakeStore) -> None:
    store = make_store()
    store.set_freedom("medium")
    runs = Runs()
    registry = gated_registry(runs, ApprovalPolicy(store=store))
    refused = registry.call_tool("moderate_tool", path="x")
    assert refused.error is not None and refused.error.type == "permission_denied"
    version = registry.tool_version_hash("moderate_tool")
    assert version is not None
    ApprovalPolicy(store=make_store()).remember("moderate_tool", version)  # another replica
    assert registry.call_tool("moderate_tool", path="x").status == "success"
    make_store().approve("moderate_tool", H1)  # approved for another version: ask again
    assert registry.call_tool("moderate_tool", path="x").status == "error"
    assert runs.names() == ["moderate_tool"]


def test_open_approvals_store_picks_the_backend(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    chosen = open_approvals_store(env)
    assert isinstance(chosen, ApprovalsStore) and chosen.location == str(tmp_path / "xdg/tooldeck/approvals.json")
    url = database_url_for(request)
    database_store = open_approvals_store(env, database_url=url)
    assert isinstance(database_store, PostgresApprovalsStore)
    assert "@" in database_store.location and "tooldeck_approvals" in database_store.location
    database_store.close()


def test_a_row_edited_into_nonsense_fails_closed(request: pytest.FixtureRequest) -> None:
    import psycopg

    url = database_url_for(request)
    store = PostgresApprovalsStore(url)
    store.set_freedom("medium")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE tooldeck_approval_settings SET value = 'yolo' WHERE name = 'freedom'")
    runs = Runs()
    registry = gated_registry(runs, ApprovalPolicy(store=store))
    refused = registry.call_tool("dangerous_tool", path="x")
    assert refused.error is not None and refused.error.type == "permission_denied"
    assert "could not be checked for approval" in refused.error.message
    assert runs.calls == []
    with pytest.raises(ApprovalError, match=r"freedom level 'yolo' is not low, medium or high; fix or delete"):
        store.freedom()
    store.close()


def test_an_unreachable_database_fails_closed_and_hides_the_password(tmp_path: Path) -> None:
    url = f"postgresql://app:s3cret@/nowhere?host={tmp_path}&connect_timeout=2"
    store = PostgresApprovalsStore(url)
    runs = Runs()
    registry = gated_registry(runs, ApprovalPolicy("low", store))
    result = registry.call_tool("safe_tool", path="x")
    assert result.error is not None and result.error.type == "permission_denied"
    assert runs.calls == []
    with pytest.raises(ApprovalError) as caught:
        store.approve("weather", H1)
    message = str(caught.value)
    assert "postgresql://app@" in message and "s3cret" not in message
    assert "check that the server runs" in message
    store.close()


def test_the_store_and_its_errors_never_show_the_password() -> None:
    store = PostgresApprovalsStore("postgresql://app:s3cret@db.internal:5432/tooldeck?sslmode=require")
    shown: list[Any] = [repr(store), store.location, repr(store.database)]
    assert all("s3cret" not in text for text in shown)
    assert store.location == "postgresql://app@db.internal:5432/tooldeck (table tooldeck_approvals)"


def adding(tool: str, approval: ToolApproval) -> Callable[[ApprovalsFile], ApprovalsFile]:
    return lambda old: old.model_copy(update={"approvals": {**old.approvals, tool: approval}})


def test_update_is_one_atomic_read_change_write(make_store: MakeStore) -> None:
    store = make_store()
    store.set_freedom("low")
    stores = [make_store() for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def add(worker: int) -> None:
        barrier.wait()
        try:
            for j in range(5):
                approval = ToolApproval(version_hash=f"{worker:x}{j:x}".rjust(64, "0"), approved_at=WHEN)
                stores[worker].update(adding(f"w{worker}_t{j}", approval))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.approvals()) == 30  # every read-change-write saw the others' writes
    assert store.freedom() is FreedomLevel.LOW
    cleared = store.update(lambda old: old.model_copy(update={"freedom": None, "approvals": {}}))
    assert cleared.freedom is None and cleared.approvals == {}
    assert make_store().load() == cleared
    unchanged = store.update(lambda old: old)
    assert unchanged == cleared


def test_every_method_of_the_file_store_has_its_database_counterpart() -> None:
    file_only = {"path", "from_env"}  # where the file is; the database's URL plays that part
    public = {name for name in dir(ApprovalsStore) if not name.startswith("_")} - file_only
    assert public <= {name for name in dir(PostgresApprovalsStore) if not name.startswith("_")}
    assert all(hasattr(ApprovalsBackend, name) for name in public)
    signature = inspect.signature
    for name in public - {"location"}:
        file_method, database_method = getattr(ApprovalsStore, name), getattr(PostgresApprovalsStore, name)
        assert signature(file_method).parameters.keys() == signature(database_method).parameters.keys(), name


def test_python_m_tools_external_mcp_applies_the_database_approvals(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from tools.external.mcp.__main__ import user_policy

    url = database_url_for(request)
    store = PostgresApprovalsStore(url)
    store.set_freedom("low")
    store.close()
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "TOOLDECK_DATABASE_URL": url}
    policy = user_policy(env)
    assert isinstance(policy.store, PostgresApprovalsStore)
    assert (policy.level, policy.level_source) == (FreedomLevel.LOW, "file")
    policy.store.close()
    with pytest.raises(SystemExit, match="approvals: TOOLDECK_DATABASE_URL is not a PostgreSQL URL"):
        user_policy({**env, "TOOLDECK_DATABASE_URL": "mysql://db/x"})
