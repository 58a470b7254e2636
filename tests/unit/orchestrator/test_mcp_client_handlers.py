"""The orchestrator's MCP client handlers: sampling on its model behind the approval gate,
elicitation through the approver, the workspace as roots."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from orchestrator.mcp_client import ELICITATION, SAMPLING, mcp_client_handlers
from tests.unit.orchestrator.mcp_kit import RecordingModel
from tools.approvals import ApprovalPolicy, ApprovalRequest, Approve, Deny
from tools.external.mcp import ElicitationRequest, MCPRequestDeclined, SamplingRequest


class Approver:
    def __init__(self, *answers: Approve | Deny | None) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approve | Deny | None:
        self.asked.append(request)
        return self.answers.pop(0)


REQUEST = SamplingRequest(
    server="docs",
    messages=({"role": "user", "content": "Capital of Portugal?"},),
    system_prompt="One line.",
    max_tokens=4,
)


def _model() -> RecordingModel:
    return RecordingModel("Lisbon is the capital.", "local-7b")


def _handlers(model: RecordingModel, level: str | None, approver: Approver | None, roots: Sequence[Path] = ()) -> Any:
    policy = ApprovalPolicy(level) if level is not None else None
    return mcp_client_handlers(
        lambda: model, model_name=lambda: "fallback", policy=policy, approver=approver, roots=roots
    )


def test_sampling_runs_on_the_model_when_the_level_lets_moderate_calls_run() -> None:
    model = _model()
    approver = Approver()
    result = _handlers(model, "high", approver).sampling(REQUEST)
    assert (result.text, result.model) == ("Lisbon is the capital."[:16], "local-7b")  # max_tokens * 4 characters
    assert model.seen == [
        [{"role": "system", "content": "One line."}, {"role": "user", "content": "Capital of Portugal?"}]
    ]
    assert approver.asked == []


@pytest.mark.parametrize("level", ["medium", "low", None])
def test_sampling_asks_the_approver_below_high(level: str | None) -> None:
    model = _model()
    approver = Approver(Approve(), Deny("too expensive"), None)
    handlers = _handlers(model, level, approver)
    assert handlers.sampling(REQUEST).text
    for reason in ("too expensive", "not approved"):
        with pytest.raises(MCPRequestDeclined, match=reason):
            handlers.sampling(REQUEST)
    asked = approver.asked[0]
    assert (asked.tool, asked.risk) == (SAMPLING, "moderate")
    assert asked.arguments["server"] == "docs" and "you pay for" in asked.reason
    assert len(model.seen) == 1  # only the approved request reached the model


def test_sampling_with_nobody_to_ask_is_declined() -> None:
    model = _model()
    with pytest.raises(MCPRequestDeclined, match="nobody can be asked"):
        _handlers(model, "medium", None).sampling(REQUEST)
    assert model.seen == []


FORM = ElicitationRequest(
    server="crm",
    message="Which account?",
    requested_schema={
        "type": "object",
        "properties": {"account": {"type": "string"}, "limit": {"type": "integer", "default": 5}},
    },
)


def test_elicitation_goes_to_the_approver_as_editable_arguments() -> None:
    approver = Approver(Approve(arguments={"account": "savings", "limit": 5}), Deny(), None, Approve())
    handlers = _handlers(_model(), "high", approver)
    accepted = handlers.elicitation(FORM)
    assert (accepted.action, accepted.content) == ("accept", {"account": "savings", "limit": 5})
    assert handlers.elicitation(FORM).action == "decline"
    assert handlers.elicitation(FORM).action == "cancel"
    unedited = handlers.elicitation(FORM)  # approved as shown: the defaults, nothing invented
    assert (unedited.action, unedited.content) == ("accept", {"limit": 5})
    asked = approver.asked[0]
    assert asked.tool == ELICITATION and asked.arguments == {"account": None, "limit": 5}
    assert "Which account?" in asked.reason


def test_elicitation_without_an_approver_cancels_and_url_mode_is_a_yes_or_no() -> None:
    assert _handlers(_model(), "high", None).elicitation(FORM).action == "cancel"
    url = ElicitationRequest(server="crm", message="Sign in", mode="url", url="https://login.example/x")
    approver = Approver(Approve(), Deny())
    handlers = _handlers(_model(), "high", approver)
    assert handlers.elicitation(url).action == "accept" and handlers.elicitation(url).action == "decline"
    assert approver.asked[0].arguments == {"url": "https://login.example/x"}


def test_roots_are_declared_only_with_a_workspace(tmp_path: Path) -> None:
    assert _handlers(_model(), None, None).roots is None
    handlers = _handlers(_model(), None, None, roots=[tmp_path])
    assert handlers.root_paths() == [tmp_path]
