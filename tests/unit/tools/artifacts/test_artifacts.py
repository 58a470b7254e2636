"""Result budgets: oversized results become artifacts; the model reads them in parts, safely."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.artifacts import ArtifactNotFoundError, ArtifactStore, ResultBudget, register_artifact_tools
from tools.errors import InvalidArgumentsError


class Clock:
    """Seconds since the epoch that tests move by hand."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        self.now += 1.0  # every reading is later: artifacts never share a time
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts", max_count=3, max_age=3600, clock=clock)


def _registry(store: ArtifactStore, **budget: Any) -> tuple[LocalToolRegistry, ResultBudget]:
    registry = LocalToolRegistry()
    result_budget = ResultBudget(store, max_tokens=256, preview_chars=200, **budget)
    register_artifact_tools(registry, result_budget)
    return registry, result_budget


PAGE = "\n".join(f"line {n}: the quick brown fox jumps over the lazy dog" for n in range(1, 2001))


def test_an_oversized_result_becomes_start_size_and_handle(store: ArtifactStore) -> None:
    _, budget = _registry(store)
    assert budget.apply({"status": "success", "data": "short"}, "fetch") is None
    view = budget.apply({"status": "success", "data": PAGE}, "fetch")
    assert view is not None and set(view) == {"status", "data"}
    summary = view["data"]
    handle = summary["artifact"]
    assert summary["preview"] == PAGE[:200] and summary["size_chars"] == len(PAGE)
    assert summary["approx_tokens"] == len(PAGE) // 4
    assert f"read_artifact(handle='{handle}', offset=200" in summary["note"]
    assert "search_artifact" in summary["note"] and "budget of 256 tokens" in summary["note"]
    assert store.get(handle).text == PAGE and store.get(handle).tool == "fetch"
    # Errors are the tool's own words: never stored.
    assert budget.apply({"status": "error", "error": "x" * 5000, "error_type": "execution_error"}, "t") is None


def test_structured_data_is_stored_as_readable_json(store: ArtifactStore) -> None:
    _, budget = _registry(store)
    rows = [{"id": n, "name": f"row {n}"} for n in range(300)]
    view = budget.apply({"status": "success", "data": rows}, "query")
    assert view is not None
    assert json.loads(store.get(view["data"]["artifact"]).text) == rows


def test_read_and_search_artifact_read_the_rest(store: ArtifactStore) -> None:
    registry, budget = _registry(store)
    handle = budget.apply({"status": "success", "data": PAGE}, "fetch")["data"]["artifact"]  # type: ignore[index]
    first = registry("read_artifact", handle=handle, offset=200, limit=300)["data"]
    assert first["text"] == PAGE[200:500] and first["next_offset"] == 500 and first["size_chars"] == len(PAGE)
    # A read is capped so its own answer fits the budget (256 tokens = 1,024 characters).
    capped = registry("read_artifact", handle=handle, limit=100_000)["data"]
    assert len(capped["text"]) == 1024 - 500
    last = registry("read_artifact", handle=handle, offset=len(PAGE) - 10)["data"]
    assert last["text"] == PAGE[-10:] and last["next_offset"] is None
    found = registry("search_artifact", handle=handle, query="LINE 1500:")["data"]
    assert found["total_matches"] == 1
    (match,) = found["matches"]
    assert match["line"] == 1500 and PAGE[match["offset"] :].startswith("line 1500:")
    many = registry("search_artifact", handle=handle, query="fox", max_matches=5)["data"]
    assert many["total_matches"] == 2000 and len(many["matches"]) == 5


@pytest.mark.parametrize(
    "hostile",
    [
        "../../../../etc/passwd",
        "/etc/passwd",
        "art_../../etc/passwd",
        "art_" + "0" * 32 + "/../../x",
        "art_" + "0" * 31 + "\x00",
        "art_" + "A" * 32,
        "art_" + "0" * 33,
        "ART_" + "0" * 32,
        "",
    ],
)
def test_a_handle_that_is_not_a_handle_is_refused_before_any_file_is_touched(
    store: ArtifactStore, hostile: str
) -> None:
    registry, _ = _registry(store)
    out = registry("read_artifact", handle=hostile)
    assert out["error_type"] == "validation_error" and "is not an artifact handle" in out["error"]
    with pytest.raises(InvalidArgumentsError):
        store.get(hostile)
    assert not store.directory.exists()  # nothing was created, read or listed


def test_a_forged_handle_finds_nothing(store: ArtifactStore) -> None:
    registry, budget = _registry(store)
    budget.apply({"status": "success", "data": PAGE}, "fetch")
    forged = "art_" + "f" * 32
    out = registry("search_artifact", handle=forged, query="fox")
    assert out["error_type"] == "execution_error" and "does not exist" in out["error"]


def test_a_symlink_planted_under_a_handle_is_not_followed(store: ArtifactStore, tmp_path: Path) -> None:
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps({"tool": "x", "created_at": 1_800_000_000.0, "text": "TOP SECRET"}))
    store.directory.mkdir(mode=0o700)
    planted = "art_" + "a" * 32
    (store.directory / f"{planted}.json").symlink_to(secret)
    with pytest.raises(ArtifactNotFoundError):
        store.get(planted)


def test_an_expired_handle_is_refused_and_removed(store: ArtifactStore, clock: Clock) -> None:
    registry, budget = _registry(store)
    handle = budget.apply({"status": "success", "data": PAGE}, "fetch")["data"]["artifact"]  # type: ignore[index]
    assert registry("read_artifact", handle=handle)["status"] == "success"
    clock.now += 3601
    out = registry("read_artifact", handle=handle)
    assert out["error_type"] == "execution_error" and "expired" in out["error"]
    assert not (store.directory / f"{handle}.json").exists()


def test_artifacts_are_bounded_by_count_and_age(store: ArtifactStore, clock: Clock) -> None:
    handles = [store.put(f"text {n}", tool="t").handle for n in range(5)]
    kept = sorted(p.name for p in store.directory.iterdir())
    assert kept == sorted(f"{h}.json" for h in handles[2:])  # the oldest two went
    clock.now += 3601
    assert store.prune() == 3 and list(store.directory.iterdir()) == []


def test_files_are_private_and_hold_no_secret_the_redactor_knows(store: ArtifactStore) -> None:
    token = "ghp_" + "Z" * 36
    known = "correct horse battery staple"
    private = ArtifactStore(store.directory, redact=lambda text: text.replace(known, "***"))
    artifact = private.put(f"config: api_key=hunter2hunter2 token {token}\npassword is {known}\n", tool="t")
    raw = (store.directory / f"{artifact.handle}.json").read_text()
    for secret in ("hunter2hunter2", token, known):
        assert secret not in raw and secret not in artifact.text
    assert stat.S_IMODE(os.stat(store.directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.directory / f"{artifact.handle}.json").st_mode) == 0o600
    leftovers = [p.name for p in store.directory.iterdir() if not p.name.endswith(".json")]
    assert leftovers == []  # atomic writes leave no temporary files behind


def test_a_store_that_cannot_be_written_falls_back_to_the_cut(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the directory should be")
    budget = ResultBudget(ArtifactStore(blocker / "artifacts"), max_tokens=256)
    assert budget.apply({"status": "success", "data": PAGE}, "fetch") is None
    assert "cannot store an oversized result of 'fetch'" in caplog.text


def test_lone_surrogates_are_kept_not_fatal(store: ArtifactStore) -> None:
    text = "before \ud800 after " * 200
    artifact = store.put(text, tool="t")
    assert store.get(artifact.handle).text == text


def test_budgets_are_validated(store: ArtifactStore) -> None:
    with pytest.raises(ValueError, match="at least 128 tokens"):
        ResultBudget(store, max_tokens=10)
    with pytest.raises(ValueError, match="at least 128 tokens"):
        ResultBudget(store, per_tool={"web": 5})
    with pytest.raises(ValueError, match="max_count"):
        ArtifactStore(store.directory, max_count=0)
    assert ResultBudget(store, per_tool={"web": 1000}).limit_chars("web") == 4000


def test_data_that_merely_looks_opaque_is_kept(store: ArtifactStore) -> None:
    digits = str(2**3000)
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    artifact = store.put(f"result: {digits}\ncommit {sha}\nAuthorization: Bearer abcdef123456789\n", tool="t")
    assert digits in artifact.text and sha in artifact.text
    assert "abcdef123456789" not in artifact.text
