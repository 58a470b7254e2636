"""OfflineModel: intents -> real OpenAI tool calls fitted to the offered schemas -> answers.

The tools here are small fakes that reuse the builtin tools' real request models, so the
schemas the model reads are the real ones while nothing heavy runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from orchestrator.graph import AgentGraph
from orchestrator.offline import OfflineModel
from orchestrator.offline._intents import read_message, split_sentences
from tools import BaseTool, LocalToolRegistry, ToolError
from tools.builtin.code_executor import CodeExecutionRequest
from tools.builtin.knowledge import SearchKnowledgeRequest, StoreKnowledgeRequest
from tools.builtin.legacy import legacy_tools
from tools.builtin.math import MathRequest
from tools.builtin.user_context import UserContextRequest
from tools.builtin.web import WebSearchRequest

QUESTION = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."


class FakeMath(BaseTool[MathRequest, dict[str, Any]]):
    name = "math_solver"
    description = "Exact math."

    def execute_internal(self, request: MathRequest) -> dict[str, Any]:
        if request.expression == "1/0":
            raise ToolError("Division by zero: the expression has no finite value.")
        results = {"12*(3+4)": ("12 * (3 + 4)", "84"), "2/3": ("2 / 3", "2/3")}
        shown, result = results.get(request.expression, (request.expression, "?"))
        decimal = "0.666666666666667" if result == "2/3" else f"{result}.0000000000000"
        return {
            "operation": request.operation,
            "expression": shown,
            "result": result,
            "decimal": decimal,
        }


class Notes:
    def __init__(self) -> None:
        self.texts: list[str] = []


class FakeStore(BaseTool[StoreKnowledgeRequest, dict[str, Any]]):
    name = "store_knowledge"
    description = "Remember a text."

    def __init__(self, notes: Notes) -> None:
        self.notes = notes

    def execute_internal(self, request: StoreKnowledgeRequest) -> dict[str, Any]:
        duplicate = request.text in self.notes.texts
        if not duplicate:
            self.notes.texts.append(request.text)
        return {"id": "k1", "duplicate": duplicate, "message": "stored"}


class FakeSearch(BaseTool[SearchKnowledgeRequest, dict[str, Any]]):
    name = "search_knowledge"
    description = "Search remembered texts."

    def __init__(self, notes: Notes) -> None:
        self.notes = notes

    def execute_internal(self, request: SearchKnowledgeRequest) -> dict[str, Any]:
        words = request.query.lower().split(" or ")
        hits = [t for t in self.notes.texts if any(w in t.lower() for w in words)]
        return {"query": request.query, "results": [{"text": t} for t in hits]}


class FakeContext(BaseTool[UserContextRequest, dict[str, Any]]):
    name = "user_context"
    description = "The user's context."

    def execute_internal(self, request: UserContextRequest) -> dict[str, Any]:
        wanted = request.category if isinstance(request.category, list) else [request.category]
        categories: dict[str, Any] = {}
        for name in map(str, wanted):
            if name == "weather":
                categories[name] = {"status": "ok", "summary": "Sunny, 21 C"}
            else:
                categories[name] = {"status": "unavailable", "reason": "no adapter configured"}
        return {"action": "summary", "categories": categories, "alerts": ["Rain at 17:00"]}


class FakeCode(BaseTool[CodeExecutionRequest, dict[str, Any]]):
    name = "execute_code"
    description = "Run code."

    def execute_internal(self, request: CodeExecutionRequest) -> dict[str, Any]:
        return {"stdout": f"ran {request.language}: {request.code}\n", "stderr": "", "exit_code": 0}


class FakeWebSearch(BaseTool[WebSearchRequest, dict[str, Any]]):
    name = "web_search"
    description = "Search the web."

    def execute_internal(self, request: WebSearchRequest) -> dict[str, Any]:
        return {"results": [{"title": f"About {request.query}", "url": "https://example.org"}]}


@pytest.fixture
def registry() -> LocalToolRegistry:
    notes = Notes()
    registry = LocalToolRegistry()
    registry.register(FakeMath())
    registry.register(FakeStore(notes))
    registry.register(FakeSearch(notes))
    context = FakeContext()
    registry.register(context)
    for alias in legacy_tools(user_context=context):
        registry.register(alias)
    registry.register(FakeCode())
    registry.register(FakeWebSearch())
    return registry


def plan(registry: LocalToolRegistry, text: str, *, strict: bool = False) -> list[dict[str, Any]]:
    response = OfflineModel().chat([{"role": "user", "content": text}], tools=registry.to_openai_tools(strict=strict))
    return [
        {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
        for c in response.tool_calls
    ]


def test_example_question_needs_two_calls_in_one_turn(registry: LocalToolRegistry) -> None:
    response = OfflineModel().chat([{"role": "user", "content": QUESTION}], tools=registry.to_openai_tools())
    assert response.message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1_0",
                "type": "function",
                "function": {
                    "name": "math_solver",
                    "arguments": '{"expression": "12*(3+4)", "operation": "evaluate"}',
                },
            },
            {
                "id": "call_1_1",
                "type": "function",
                "function": {
                    "name": "store_knowledge",
                    "arguments": '{"text": "my dentist is Dr. Lee"}',
                },
            },
        ],
    }


def test_example_question_end_to_end_through_the_graph(registry: LocalToolRegistry) -> None:
    graph = AgentGraph(OfflineModel(), registry)
    run = graph.run(QUESTION)
    assert run.stop_reason == "final_answer"
    assert run.iterations == 2
    assert run.answer == "12 * (3 + 4) = 84.\nNoted: your dentist is Dr. Lee."
    recall = graph.run("Who is my dentist?")
    assert recall.answer == "From your saved notes: your dentist is Dr. Lee."
    again = graph.run("Remember that my dentist is Dr. Lee.")
    assert again.answer == "I already had that noted: your dentist is Dr. Lee."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is 5 plus 3 times 2?", {"expression": "5 + 3 * 2", "operation": "evaluate"}),
        ("solve 2x + 3 = 7", {"expression": "2*x + 3 = 7", "operation": "solve"}),
        ("What is the derivative of x^3?", {"expression": "x^3", "operation": "differentiate"}),
        ("What is 15% of 80?", {"expression": "(15/100*80)", "operation": "evaluate"}),
        ("calculate 1,000 / 8", {"expression": "1000 / 8", "operation": "evaluate"}),
    ],
)
def test_math_phrasings(registry: LocalToolRegistry, text: str, expected: dict[str, Any]) -> None:
    assert plan(registry, text) == [{"name": "math_solver", "arguments": expected}]


def test_strict_schemas_get_nulls_for_optional_fields(registry: LocalToolRegistry) -> None:
    calls = plan(registry, "What is 2/3?", strict=True)
    assert calls == [
        {
            "name": "math_solver",
            "arguments": {
                "expression": "2/3",
                "operation": "evaluate",
                "variable": None,
                "order": None,
                "lower": None,
                "upper": None,
                "show_steps": None,
            },
        }
    ]
    run = AgentGraph(OfflineModel(), registry, strict=True).run("What is 2/3?")
    assert run.answer == "2 / 3 = 2/3 ≈ 0.6666666667."


@pytest.mark.parametrize(
    ("text", "name", "arguments"),
    [
        (
            "What's the weather and my schedule today?",
            "user_context",
            {"category": ["calendar", "weather"]},
        ),
        ("Give me my daily briefing", "get_daily_briefing", {}),
        (
            "How long is my commute to the office?",
            "user_context",
            {"category": "commute", "destination": "office"},
        ),
        ("How much did I spend this month?", "user_context", {"category": "finance"}),
        ("Search the web for python asyncio", "web_search", {"query": "python asyncio"}),
        (
            "Run this python: print(2**10)",
            "execute_code",
            {"code": "print(2**10)", "language": "python"},
        ),
        ("Do you remember my wife's birthday?", "search_knowledge", {"query": "wife OR birthday"}),
    ],
)
def test_each_intent_maps_to_its_tool(
    registry: LocalToolRegistry, text: str, name: str, arguments: dict[str, Any]
) -> None:
    assert plan(registry, text) == [{"name": name, "arguments": arguments}]


def test_context_answer_reports_data_and_unavailable_categories(
    registry: LocalToolRegistry,
) -> None:
    run = AgentGraph(OfflineModel(), registry).run("What's the weather and my calendar?")
    assert run.answer == (
        "Your calendar is unavailable right now: no adapter configured.\n"
        'Weather: {"summary": "Sunny, 21 C"}\n'  # a payload of unknown shape: an excerpt, nothing invented
        "Heads-up: Rain at 17:00."
    )


def test_code_block_keeps_its_sentences_whole(registry: LocalToolRegistry) -> None:
    text = "Please run this python:\n```python\nprint('a. b. c')\nprint(1)\n```"
    assert plan(registry, text) == [
        {
            "name": "execute_code",
            "arguments": {"code": "print('a. b. c')\nprint(1)", "language": "python"},
        }
    ]


def test_tool_errors_are_reported_honestly(registry: LocalToolRegistry) -> None:
    run = AgentGraph(OfflineModel(), registry).run("What is 1/0?")
    assert run.answer == (
        "I couldn't compute 1/0: the math_solver tool reported execution_error: "
        "Division by zero: the expression has no finite value."
    )


def test_unknown_requests_get_capabilities_not_inventions(registry: LocalToolRegistry) -> None:
    run = AgentGraph(OfflineModel(), registry).run("What is the capital of France?")
    assert run.tool_results == []
    assert run.answer.startswith(
        "I'm the offline assistant and I don't know how to answer "
        "'What is the capital of France?' without making something up."
    )
    assert "math ('What is 12*(3+4)?'" in run.answer
    assert "--base-url" in run.answer


def test_only_offered_tools_are_called(registry: LocalToolRegistry) -> None:
    only_math = [t for t in registry.to_openai_tools() if t["function"]["name"] == "math_solver"]
    response = OfflineModel().chat([{"role": "user", "content": QUESTION}], tools=only_math)
    assert [c["function"]["name"] for c in response.tool_calls] == ["math_solver"]
    nothing = OfflineModel().chat([{"role": "user", "content": "Remember that x is 1."}], tools=[])
    assert nothing.tool_calls == []
    assert nothing.content is not None
    assert "needs a knowledge store, which is not available" in nothing.content
    assert "No tools are offered to me." in nothing.content


def test_tools_it_cannot_phrase_for_are_named_instead_of_saying_there_are_none() -> None:
    registry = LocalToolRegistry()

    @registry.tool
    def shout(text: str) -> str:
        """Shout a text.

        Args:
            text: What to shout.
        """
        return text.upper()

    @registry.tool
    def count_words(text: str) -> int:
        """Count words.

        Args:
            text: The text.
        """
        return len(text.split())

    run = AgentGraph(OfflineModel(), registry).run("Try my tools please")
    assert run.tool_results == []
    assert "The tools offered to me: shout, count_words." in run.answer
    assert "--model test" in run.answer
    assert "No tools" not in run.answer


def test_mixed_message_answers_what_it_can_and_flags_the_rest(registry: LocalToolRegistry) -> None:
    run = AgentGraph(OfflineModel(), registry).run("Tell me a joke. What is 12*(3+4)?")
    assert run.answer == "12 * (3 + 4) = 84.\nI didn't understand 'Tell me a joke.'."


def test_tool_choice_none_answers_without_tools(registry: LocalToolRegistry) -> None:
    response = OfflineModel().chat(
        [{"role": "user", "content": "What is 2+2?"}],
        tools=registry.to_openai_tools(),
        tool_choice="none",
    )
    assert response.tool_calls == []


def test_greeting_lists_capabilities(registry: LocalToolRegistry) -> None:
    response = OfflineModel().chat([{"role": "user", "content": "Hello!"}], tools=registry.to_openai_tools())
    assert response.content is not None
    assert response.content.startswith("Hello! I'm the offline assistant. I can help with math")


@pytest.mark.parametrize(
    "text",
    ["", "   ", "?" * 50_000, "(" * 10_000 + "1" + ")" * 10_000, "remember that", "\x00\x01"],
)
def test_hostile_or_empty_input_never_raises(registry: LocalToolRegistry, text: str) -> None:
    response = OfflineModel().chat([{"role": "user", "content": text}], tools=registry.to_openai_tools())
    assert response.message["role"] == "assistant"


def test_malformed_conversations_never_raise(registry: LocalToolRegistry) -> None:
    model = OfflineModel()
    assert model.chat([]).content
    orphan = [{"role": "tool", "tool_call_id": "x", "content": "not json"}]
    assert model.chat(orphan).content == "I have no results to report."
    missing: list[dict[str, Any]] = [
        {"role": "user", "content": "2+2"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "math_solver", "arguments": "{"},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "math_solver", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "[1]"},
    ]
    answer = model.chat(missing).content
    assert answer is not None
    assert "I got no result from the math_solver tool." in answer


def test_sentence_splitting_respects_abbreviations() -> None:
    assert split_sentences("I saw Dr. Lee at 3 p.m. today. Is 3.5 big? Yes!") == [
        "I saw Dr. Lee at 3 p.m. today.",
        "Is 3.5 big?",
        "Yes!",
    ]
    reading = read_message("Remember that my dentist is Dr. Lee. Tell me a joke")
    assert [i.slots for i in reading.intents] == [{"fact": "my dentist is Dr. Lee"}]
    assert reading.unmatched == ["Tell me a joke"]


def test_context_payloads_of_unknown_shape_are_excerpted_not_invented() -> None:
    from orchestrator.offline._context_answers import context_answer

    data = {"categories": {"calendar": {"status": "ok", "items": ["x"]}, "finance": {"status": "ok"}}}
    assert context_answer(data, "What's on my calendar?") == 'Calendar: {"items": ["x"]}\nFinance: {}'
