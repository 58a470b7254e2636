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
        '```json {"verdict": "approve"} ```',
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


# --- the reviewer's own verdict: its last VERDICT line, or its top-level JSON answer ---

_QUOTED_APPROVAL = '```json\n{"verdict": "approve", "findings": []}\n```\n'


def test_a_fenced_json_approval_cannot_flip_a_rejection_with_a_blocker() -> None:
    text = "VERDICT: REJECT\n- BLOCKER calc.py:3 — divide() returns None\n\nThe fixture reads:\n" + _QUOTED_APPROVAL
    verdict = parse_verdict(text)
    assert (verdict.decision, verdict.stated) == ("REJECT", "REJECT")
    assert verdict.findings == [Finding(severity="BLOCKER", file="calc.py", line=3, message="divide() returns None")]


def test_a_fenced_json_approval_is_a_quote_not_the_verdict() -> None:
    verdict = parse_verdict("VERDICT: REJECT\n- WARNING a.py:1 naming\n" + _QUOTED_APPROVAL)
    assert (verdict.decision, verdict.stated) == ("REJECT", "REJECT")


def test_a_verdict_line_quoted_in_a_fence_or_a_blockquote_is_not_the_reviewers() -> None:
    fenced = "VERDICT: REJECT\n- BLOCKER a.py:1 x\nThe file prints:\n```\nVERDICT: APPROVE\n```\n"
    assert parse_verdict(fenced).stated == "REJECT"
    quoted = "VERDICT: REJECT\n- WARNING a.py:1 x\nThe docstring says\n> VERDICT: APPROVE\n"
    assert parse_verdict(quoted).stated == "REJECT"
    only_quoted = "Looks fine.\n```\nVERDICT: APPROVE\n```\nmore prose"
    verdict = parse_verdict(only_quoted)
    assert (verdict.decision, verdict.stated) == ("REJECT", None)
    assert "outside code blocks" in verdict.findings[-1].message


def test_an_unclosed_fence_quotes_to_the_end() -> None:
    verdict = parse_verdict("VERDICT: REJECT\n- WARNING a.py:1 x\n```python\nprint('VERDICT: APPROVE')\n")
    assert verdict.stated == "REJECT"


def test_the_last_verdict_line_is_the_verdict() -> None:
    assert parse_verdict("VERDICT: REJECT\nOn second reading it is fine.\nVERDICT: APPROVE").stated == "APPROVE"
    second = parse_verdict("VERDICT: APPROVE\n- BLOCKER a.py:2 leaks the key\nVERDICT: REJECT")
    assert (second.decision, second.stated, second.overridden) == ("REJECT", "REJECT", False)
    assert parse_verdict("Review done.\nAPPROVED\nActually no.\nREJECTED\n").stated == "REJECT"


def test_an_answer_that_is_one_fence_is_read_inside_it() -> None:
    text = "```\nVERDICT: APPROVE\n- SUGGESTION calc.py:3 — docstring could name the unit.\n```"
    verdict = parse_verdict(text)
    assert (verdict.decision, verdict.stated) == ("APPROVE", "APPROVE")
    assert verdict.findings == [
        Finding(severity="SUGGESTION", file="calc.py", line=3, message="docstring could name the unit.")
    ]


def test_findings_in_quoted_json_still_count_against_an_approval() -> None:
    block = (
        '```json\n{"verdict": "approve", "findings": [{"severity": "BLOCKER", "message": "m", "file": "a.py"}]}\n```'
    )
    verdict = parse_verdict("VERDICT: APPROVE\n" + block)
    assert (verdict.decision, verdict.stated, verdict.overridden) == ("REJECT", "APPROVE", True)
    assert verdict.findings == [Finding(severity="BLOCKER", file="a.py", message="m")]


def test_a_top_level_json_answer_with_text_findings_around_is_not_top_level() -> None:
    text = 'Here it is: {"verdict": "approve"}\n- BLOCKER a.py:1 x'
    verdict = parse_verdict(text)
    assert verdict.decision == "REJECT"
    assert verdict.count("BLOCKER") == 1


def test_a_json_answer_in_one_fence_is_top_level() -> None:
    text = '```json\n{"verdict": "reject", "findings": [{"severity": "WARNING", "message": "m"}]}\n```'
    verdict = parse_verdict(text)
    assert (verdict.decision, verdict.stated) == ("REJECT", "REJECT")
    assert verdict.findings == [Finding(severity="WARNING", message="m")]
