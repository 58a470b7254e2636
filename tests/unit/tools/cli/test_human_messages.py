"""``tools.cli._human.for_people``: an envelope's error said to a person (issue 21 item 8)."""

from __future__ import annotations

import socket
import ssl

import pytest
import requests

from tools._netcause import connection_cause, public_url
from tools.cli._human import for_people
from tools.result import ErrorInfo


def error(kind: str, text: str, **details: object) -> ErrorInfo:
    return ErrorInfo(kind, text, False, dict(details) or None)  # type: ignore[arg-type]


def test_a_missing_credential_names_the_variable_and_the_check_command() -> None:
    info = error(
        "execution_error",
        "Tool 'weather' is not configured (its credential is missing); tell the user it cannot be used right now.",
        reason="missing_credential",
        env_var="WEATHER_KEY",
    )
    assert for_people("weather", info) == "WEATHER_KEY is not set; tooldeck check weather shows how to set it"


def test_an_unreachable_api_names_the_url_and_cause() -> None:
    info = error("upstream_error", "x", reason="unreachable", url="http://h:1/w", cause="connection refused")
    assert for_people("w", info) == "could not reach http://h:1/w: connection refused"


def test_approval_and_denial_say_what_a_person_does() -> None:
    needs = error(
        "permission_denied",
        "... do not retry this call. Tell the user it needs their approval ...",
        reason="approval_required",
        risk="dangerous",
        freedom="medium",
        approve_command="tooldeck approve shell",
    )
    assert for_people("shell", needs) == (
        "shell needs your approval before it runs (risk dangerous, freedom level medium); approve it with: "
        "tooldeck approve shell"
    )
    denied = error("permission_denied", "...", reason="denied", message="not today")
    assert for_people("shell", denied) == "the call was not approved: not today; nothing ran"


def test_actions_and_arguments_are_explained_with_the_flags() -> None:
    unknown = error("unknown_action", "Call again with e.g. {}", actions=["list", "enable"], got="nope")
    assert for_people("admin", unknown) == (
        "admin has no action 'nope': list, enable; choose one with --action, e.g. tooldeck run admin --action list"
    )
    invalid = error(
        "validation_error",
        "Invalid arguments ... Call the tool again with corrected arguments.",
        errors=[{"field": "city", "problem": "required argument is missing"}],
        accepted=["city", "units"],
    )
    assert for_people("weather", invalid) == (
        "invalid arguments for weather:\n  - city: required argument is missing\n  it takes: city, units\n"
        "  pass them with --arg key=value (key:=json for numbers and lists) or --params '{...}'"
    )


def test_without_details_the_model_directed_sentences_are_dropped() -> None:
    info = error(
        "execution_error",
        "The sandbox is not installed. Tell the user to install bubblewrap. Do not retry this call; continue "
        "without it.",
    )
    assert for_people("bash", info) == "The sandbox is not installed."
    only_directions = error("execution_error", "Tell the user.")
    assert for_people("x", only_directions) == "Tell the user."


def refused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_cause_of_a_real_refused_connection() -> None:
    with pytest.raises(requests.ConnectionError) as caught:
        requests.get(f"http://127.0.0.1:{refused_port()}/x", timeout=10)
    assert connection_cause(caught.value) == "connection refused (nothing is listening on that port)"


@pytest.mark.parametrize(
    ("exc", "cause"),
    [
        (socket.gaierror(-2, "Name or service not known"), "the host name could not be resolved"),
        (ConnectionResetError(104, "Connection reset by peer"), "the connection was reset by the other side"),
        (TimeoutError("timed out"), "the connection timed out"),
        (ssl.SSLError(1, "[SSL] wrong version number"), "the TLS handshake failed"),
        (OSError(99, "Cannot assign requested address"), "the address is not available on this machine"),
        (OSError(5, "Input/output error"), "input/output error"),
        (ValueError("odd"), "ConnectionError"),  # nothing known: the class of what was raised
    ],
)
def test_causes_are_found_through_wrapping(exc: BaseException, cause: str) -> None:
    wrapped = requests.ConnectionError(RuntimeError("pool"))
    wrapped.__cause__ = exc
    assert connection_cause(wrapped).startswith(cause)


def test_public_urls_keep_no_credentials_or_query() -> None:
    assert public_url("https://user:pw@api.example.org:8443/v1/x?key=SECRET#f") == "https://api.example.org:8443/v1/x"
    assert public_url("http://[::1]:9/a") == "http://[::1]:9/a"
    assert public_url("http://h:notaport/") == "(an invalid URL)"
