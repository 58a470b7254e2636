"""parse_verdict: liberal in what it reads, strict in what it concludes."""

from __future__ import annotations

import pytest

from orchestrator.agents import Finding, parse_verdict


@pytest.mark.parametrize(
    "text",
    [
        "VERDICT: APPROVE",
        "**Verdict:** approve",
        "Verdict - approved. Nice work.",
        "## Verdict\nThe verdict is: LGTM",
        '```json\n{"verdict": "approve", "findings": []}\n```',
        '{"decision": "APPROVE"}',
        "Review done.\n\nAPPROVED\n",
    ],
)
def test_approvals_in_many_shapes(text: str) -> None:
    verdict = parse_verdict(text)
    assert (verdict.decision, verdict.stated, verdict.overridden) == ("APPROVE", "APPROVE", False)


def test_findings_with_file_and_line_in_list_shapes() -> None:
    text = (
        "VERDICT: REJECT\n"
        "- BLOCKER calc.py:12 — divide() returns None\n"
        "* **WARNING** `src/app.py:3`: bare except\n"
        "1. [SUGGESTION] tests/test_calc.py line 5 - add a negative case\n"
        "Warning words in prose do not count.\n"
    )
    verdict = parse_verdict(text)
    assert verdict.decision == "REJECT"
    assert verdict.findings == [
        Finding(severity="BLOCKER", file="calc.py", line=12, message="divide() returns None"),
        Finding(severity="WARNING", file="src/app.py", line=3, message="bare except"),
        Finding(severity="SUGGESTION", file="tests/test_calc.py", line=5, message="add a negative case"),
    ]


def test_a_blocker_makes_an_approval_a_rejection() -> None:
    verdict = parse_verdict("VERDICT: APPROVE\n- BLOCKER app.py:1 leaks the API key")
    assert (verdict.decision, verdict.stated, verdict.overridden) == ("REJECT", "APPROVE", True)


def test_three_warnings_make_an_approval_a_rejection_two_do_not() -> None:
    two = "VERDICT: APPROVE\n- WARNING a.py:1 x\n- WARNING a.py:2 y"
    assert parse_verdict(two).decision == "APPROVE"
    assert parse_verdict(two + "\n- WARNING a.py:3 z").decision == "REJECT"


def test_json_findings_count_too() -> None:
    text = '{"verdict": "approve", "findings": [{"severity": "blocker", "file": "a.py", "line": 2, "message": "m"}]}'
    verdict = parse_verdict(text)
    assert verdict.decision == "REJECT"
    assert verdict.findings == [Finding(severity="BLOCKER", file="a.py", line=2, message="m")]


@pytest.mark.parametrize("text", ["", None, "Looks fine to me!", "I reviewed the code.", "VERDICT: APPROVE or REJECT"])
def test_no_parseable_verdict_is_a_rejection_that_says_so(text: str | None) -> None:
    verdict = parse_verdict(text)
    assert (verdict.decision, verdict.stated) == ("REJECT", None)
    assert verdict.findings[-1].severity == "BLOCKER"
    assert "VERDICT: APPROVE" in verdict.findings[-1].message


def test_a_rejection_without_findings_gets_one_for_the_coder() -> None:
    verdict = parse_verdict("Verdict: request changes. The naming is off.")
    assert verdict.decision == "REJECT"
    assert verdict.findings[0].severity == "WARNING"
    assert "naming is off" in verdict.findings[0].message


def test_huge_and_hostile_input_is_bounded() -> None:
    verdict = parse_verdict("- WARNING " + "a" * 1_000_000)
    assert verdict.decision == "REJECT"
