"""binary.serve: the binary contract from the tool's side, driven through in-memory streams."""

from __future__ import annotations

import io
import json
from typing import Any

from pydantic import BaseModel, Field

from tools import BaseTool, ToolError
from tools.external import binary
from tools.external.binary import serve


class CountRequest(BaseModel):
    text: str = Field(description="Text to count words in.")


class CountResponse(BaseModel):
    words: int


class CountTool(BaseTool[CountRequest, CountResponse]):
    name = "word_count"
    description = "Count the words in a text."
    version = "1.2.0"

    def execute_internal(self, request: CountRequest) -> CountResponse:
        if request.text == "boom":
            raise ToolError("Cannot count 'boom'; send other text.")
        return CountResponse(words=len(request.text.split()))


def _run(argv: list[str], stdin: bytes = b"", limit: int = 1000) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    code = serve(CountTool(), argv, stdin=io.BytesIO(stdin), stdout=out, stderr=err, max_input_bytes=limit)
    text = out.getvalue()
    return code, json.loads(text) if text else None, err.getvalue()


def test_schema_flag_prints_the_document() -> None:
    code, doc, err = _run(["--schema"])
    assert (code, err) == (0, "")
    assert doc == {
        "name": "word_count",
        "description": "Count the words in a text.",
        "version": "1.2.0",
        "input_schema": CountTool().input_schema(),
        "output_schema": CountTool().output_schema(),
    }


def test_success_prints_the_envelope_and_exits_zero() -> None:
    code, env, err = _run([], b'{"text": "a b c"}')
    assert (code, err) == (0, "")
    assert env["status"] == "success"
    assert env["data"] == {"words": 3}


def test_tool_error_exits_one_with_message_on_stderr() -> None:
    code, env, err = _run([], b'{"text": "boom"}')
    assert code == 1
    assert env["error_type"] == "execution_error"
    assert err == "Cannot count 'boom'; send other text.\n"


def test_malformed_input_is_a_validation_error() -> None:
    for payload in (b"not json", b"[1]", b'{"text": 5}', b'{"txt": "a"}'):
        code, env, err = _run([], payload)
        assert code == 1
        assert env["error_type"] == "validation_error"
        assert err


def test_oversized_input_is_refused() -> None:
    code, env, _ = _run([], b'{"text": "aaaaaaaaaaaaaaa"}', limit=10)
    assert code == 1
    assert "larger than 10 bytes" in env["error"]
    assert binary.MAX_INPUT_BYTES == 10_000_000


def test_unknown_flags_print_usage() -> None:
    code, env, err = _run(["--help"])
    assert (code, env) == (2, None)
    assert err.startswith("usage: word_count")
