"""The offline model answers in sentences, from the real context service and the real math tool.

The context service serves ``examples/context/`` as shipped (calendar, CSV and OFX
statements; weather and commute from recorded API answers), with "now" fixed on Thursday
26 November 2026, 09:00 in Lisbon. The math tool is the real sympy worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator import OrchestratorService, Settings


@pytest.fixture(scope="module")
def service(context_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OrchestratorService]:
    data_dir = tmp_path_factory.mktemp("data")
    with OrchestratorService(Settings(data_dir=data_dir, context_url=context_url)) as service:
        yield service


def answer(service: OrchestratorService, question: str) -> list[str]:
    run = service.ask(question)
    assert run.stop_reason == "final_answer"
    assert all(r["status"] == "success" for r in run.tool_results), run.tool_results
    assert "{" not in run.answer  # sentences, not JSON
    return run.answer.splitlines()


def test_dentist_appointment(service: OrchestratorService) -> None:
    assert answer(service, "When is my dentist appointment?")[0] == (
        "Dentist appointment: today (Thursday 26 November), 10:30-11:15, at Clinica Dentaria Baixa."
    )


def test_meeting_with_someone_and_tomorrow(service: OrchestratorService) -> None:
    assert answer(service, "Do I have a meeting with Ana?")[0] == (
        "1:1 with Ana: today (Thursday 26 November), 14:00-14:30, at Office."
    )
    assert answer(service, "What's on my calendar tomorrow?")[0] == (
        "Tomorrow (Friday 27 November): Team stand-up 09:30-09:45 at Office, room 2.14; "
        "Call with New York team 15:00-16:00."
    )


def test_calendar_today(service: OrchestratorService) -> None:
    lines = answer(service, "What's on my calendar?")
    assert lines[0] == (
        "Today (Thursday 26 November) you have 4 events: Team stand-up 09:30-09:45 at Office, room 2.14; "
        "Dentist appointment 10:30-11:15 at Clinica Dentaria Baixa; 1:1 with Ana 14:00-14:30 at Office; "
        "Gym 18:30-19:30 at Gym."
    )
    assert lines[1].startswith("Coming up: tomorrow (Friday 27 November): Team stand-up 09:30-09:45, ")
    assert lines[-1] == "Heads-up: 'Team stand-up' starts in 30 minutes at Office, room 2.14."


def test_weather(service: OrchestratorService) -> None:
    assert answer(service, "What's the weather?") == [
        "Weather at Home now: slight rain, 14.2 °C (feels like 12.9 °C), wind 18.4 km/h.",
        "Today: slight rain, 10.4 to 16.1 °C, 85% chance of rain (4.2 mm).",
        "Tomorrow: overcast, 9.8 to 17 °C, 20% chance of rain.",
        "Saturday 28 November: mainly clear, 10.1 to 18.2 °C, 5% chance of rain.",
        "Heads-up: Rain likely today (85% chance): take an umbrella.",
    ]


def test_commute(service: OrchestratorService) -> None:
    assert answer(service, "How long is my commute to the office?") == [
        "From Home to Office: about 14 minutes by car (3.2 km) via Avenida da Liberdade and "
        "Avenida Fontes Pereira de Melo."
    ]


def test_spending(service: OrchestratorService) -> None:
    assert answer(service, "How much did I spend this month?") == [
        "In the last 30 days (28 October to 26 November): €2,713.17 spent and €4,925.00 received "
        "(net +€2,211.83) over 19 transactions.",
        "Top spending: Housing €1,700.00, Travel €612.40, Groceries €183.60.",
        "Latest: 20 November MB WAY FROM JOANA +€25.00; 19 November CONTINENTE -€58.90; "
        "18 November CINEMA NOS -€18.50.",
    ]


def test_briefing_covers_every_category_in_sentences(service: OrchestratorService) -> None:
    lines = answer(service, "Give me my daily briefing")
    assert lines[0].startswith("Today (Thursday 26 November) you have 4 events:")
    assert "(No health, fitness, gaming or social source is set up.)" in lines
    assert any(line.startswith("From Home to Office: about 14 minutes") for line in lines)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is 0.1+0.2?", "0.1 + 0.2 = 0.3."),
        ("What is 1/0?", "1 / 0 is undefined (division by zero)."),
        ("What is 0/0?", "0 / 0 is undefined (it has no finite value)."),
        ("What is 2/3?", "2 / 3 = 2/3 ≈ 0.6666666667."),
        ("What is 12*(3+4)?", "12 * (3 + 4) = 84."),
        ("What is 2**64?", "2^64 = 18446744073709551616."),
        ("What is 10**20*1.5?", "(10^20) * 1.5 = 150000000000000000000."),  # exact, in process
        ("What is sqrt(-4)?", "sqrt(-4) = 2i."),
        ("solve x^2 = 4", "Solving x^2 = 4: x = -2 or x = 2."),
        ("solve 0.5*x = 1", "Solving 0.5 * x = 1: x = 2."),
        ("solve x^3 = 8", "Solving x^3 = 8: x = 2 or x = -1 - √3·i or x = -1 + √3·i."),
        ("differentiate x^3", "The derivative of x^3 is 3x^2."),
    ],
)
def test_math_in_plain_numbers(service: OrchestratorService, question: str, expected: str) -> None:
    assert answer(service, question) == [expected]


def test_the_data_dir_is_the_one_given(service: OrchestratorService) -> None:
    assert isinstance(service.settings.data_dir, Path)
