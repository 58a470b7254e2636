"""search_knowledge / store_knowledge through the registry, as the model calls them."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.knowledge import KnowledgeSearchTool, KnowledgeStoreTool, SqliteKnowledgeStore


@pytest.fixture
def registry() -> Iterator[LocalToolRegistry]:
    store = SqliteKnowledgeStore(":memory:", clock=lambda: 1_700_000_000.0)
    registry = LocalToolRegistry()
    registry.register(KnowledgeStoreTool(store=store))
    registry.register(KnowledgeSearchTool(store=store, max_text_chars=40))
    yield registry
    store.close()


def _data(result: dict[str, Any]) -> Any:
    assert result["status"] == "success", result
    return result["data"]


def test_store_then_search_round_trip(registry: LocalToolRegistry) -> None:
    stored = _data(
        registry(
            "store_knowledge",
            text="The office wifi password rotates every Monday.",
            title="Wifi policy",
            source="handbook.pdf",
            tags=["it", "policy", "it"],
        )
    )
    assert stored == {"id": "1", "duplicate": False, "message": "Stored with id 1."}
    found = _data(registry("search_knowledge", query="wifi password"))
    assert found == {
        "query": "wifi password",
        "results": [
            {
                "id": "1",
                "score": found["results"][0]["score"],
                "snippet": "The office **wifi** **password** rotates every Monday.",
                "text": "The office wifi password rotates every M…",
                "text_truncated": True,
                "title": "Wifi policy",
                "source": "handbook.pdf",
                "tags": ["it", "policy"],
                "stored_at": "2023-11-14T22:13:20+00:00",
            }
        ],
    }


def test_duplicate_store_says_so(registry: LocalToolRegistry) -> None:
    registry("store_knowledge", text="Same fact.")
    again = _data(registry("store_knowledge", text="Same fact."))
    assert again["duplicate"] is True
    assert "already stored (id 1)" in again["message"]


def test_tag_and_source_filters(registry: LocalToolRegistry) -> None:
    registry("store_knowledge", text="Budget meeting notes", tags=["finance"], source="a")
    registry("store_knowledge", text="Budget for the party", tags=["fun"], source="b")
    by_tag = _data(registry("search_knowledge", query="budget", tag="finance"))
    assert [r["tags"] for r in by_tag["results"]] == [["finance"]]
    by_source = _data(registry("search_knowledge", query="budget", source="b"))
    assert [r["source"] for r in by_source["results"]] == ["b"]
    both = _data(registry("search_knowledge", query="budget", tag="finance", source="b"))
    assert both["results"] == []
    assert "Nothing stored matches" in both["note"]


def test_nulls_from_strict_mode_mean_defaults(registry: LocalToolRegistry) -> None:
    registry("store_knowledge", text="Null handling works", title=None, source=None, tags=None)
    found = _data(registry("search_knowledge", query="null handling", limit=None, tag=None, source=None))
    assert len(found["results"]) == 1


@pytest.mark.parametrize(
    ("tool", "arguments", "fragment"),
    [
        ("search_knowledge", {"query": ""}, "query"),
        ("search_knowledge", {"query": "   "}, "empty"),
        ("search_knowledge", {"query": '() "" **'}, "no letters or digits"),
        ("search_knowledge", {"query": "x", "limit": 0}, "limit"),
        ("search_knowledge", {"query": "x" * 501}, "query"),
        ("store_knowledge", {"text": ""}, "text"),
        ("store_knowledge", {"text": "   "}, "empty"),
        ("store_knowledge", {"text": "x", "tags": ["t"] * 17}, "tags"),
        ("store_knowledge", {"text": "x", "metadata": ["a"]}, "metadata"),
        ("store_knowledge", {"text": "x", "metadata": {"tags": ["t"] * 17}}, "At most 16 tags"),
        ("store_knowledge", {"text": "x", "tags": ["a"] * 9, "metadata": {"tags": ["b"] * 8}}, "give 17"),
        ("store_knowledge", {"text": "x", "metadata": {"blob": "y" * 70_000}}, "Metadata is larger"),
        ("search_knowledge", {"query": "x", "top_k": "many"}, "top_k"),
    ],
)
def test_bad_calls_are_validation_errors(
    registry: LocalToolRegistry, tool: str, arguments: dict[str, Any], fragment: str
) -> None:
    result = registry(tool, **arguments)
    assert result["status"] == "error"
    assert result["error_type"] == "validation_error"
    assert fragment in result["error"]


def test_strict_openai_export(registry: LocalToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        tools = {t["function"]["name"]: t["function"] for t in registry.to_openai_tools(strict=True)}
    assert set(tools) == {"store_knowledge", "search_knowledge"}
    search = tools["search_knowledge"]
    assert search["strict"] is True
    params = search["parameters"]
    assert params["additionalProperties"] is False
    assert set(params["required"]) == set(params["properties"]) == {"query", "limit", "tag", "source", "top_k"}
    assert "OR between alternatives" in params["properties"]["query"]["description"]
    # the old `metadata: dict` argument is a free-form object: strict mode cannot express it,
    # so store_knowledge is exported non-strict, with the warning naming the field
    assert tools["store_knowledge"]["strict"] is False
    assert any("'store_knowledge' exported with strict=false: metadata:" in r.getMessage() for r in caplog.records)


def test_old_arguments_top_k_and_metadata(registry: LocalToolRegistry) -> None:
    for i in range(4):
        registry("store_knowledge", text=f"Solar note number {i}.")
    assert len(_data(registry("search_knowledge", query="solar", top_k=2))["results"]) == 2
    assert len(_data(registry("search_knowledge", query="solar", top_k=0))["results"]) == 1  # brought into 1-20
    assert len(_data(registry("search_knowledge", query="solar", top_k=99))["results"]) == 4
    assert len(_data(registry("search_knowledge", query="solar", top_k=2, limit=3))["results"]) == 3  # limit wins
    stored = _data(
        registry(
            "store_knowledge",
            text="Old-style note.",
            metadata={"title": "Old", "source": "notes.txt", "tags": ["old", " legacy "], "topic": "x"},
        )
    )
    assert stored["duplicate"] is False
    (hit,) = _data(registry("search_knowledge", query="old style", tag="legacy"))["results"]
    assert (hit["title"], hit["source"], hit["tags"]) == ("Old", "notes.txt", ["old", "legacy"])
    # the arguments win over the older metadata keys
    registry("store_knowledge", text="Mixed note.", title="New", tags=["a"], metadata={"title": "Old", "tags": "b"})
    (mixed,) = _data(registry("search_knowledge", query="mixed"))["results"]
    assert (mixed["title"], mixed["tags"]) == ("New", ["a", "b"])


def test_old_names_are_the_tool_names() -> None:
    assert KnowledgeSearchTool.name == "search_knowledge"
    assert KnowledgeStoreTool.name == "store_knowledge"


def test_public_names_are_importable_from_the_package() -> None:
    import tools.builtin.knowledge as knowledge

    assert sorted(knowledge.__all__) == sorted(set(knowledge.__all__))
    for name in knowledge.__all__:
        assert getattr(knowledge, name) is not None
