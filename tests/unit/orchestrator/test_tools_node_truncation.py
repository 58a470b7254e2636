"""The cut of oversized tool output: always valid JSON, within the limit, saying what was cut."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.graph._truncate import fit

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=300),
    lambda children: st.lists(children, max_size=40) | st.dictionaries(st.text(max_size=20), children, max_size=20),
    max_leaves=200,
)


@settings(max_examples=60, deadline=None)
@given(data=json_values, limit=st.integers(min_value=512, max_value=3000), error=st.booleans())
def test_cut_output_is_valid_json_within_the_limit(data: Any, limit: int, error: bool) -> None:
    result: dict[str, Any] = {"status": "error" if error else "success", "data": data}
    if error:
        result.update(error="x" * 5000, error_type="execution_error")
    text, cut = fit(result, limit)
    assert len(text) <= limit
    body = json.loads(text)
    assert body["status"] == result["status"]
    whole = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
    assert cut == (len(whole) > limit)
    if not cut:
        assert body == result
    elif isinstance(body.get("truncated"), dict):
        assert body["truncated"]["original_chars"] == len(whole)
        assert body["truncated"]["omitted_chars"] > 0


def test_huge_error_is_slimmed_but_kept_meaningful() -> None:
    result = {
        "status": "error",
        "error": "bad " * 10_000,
        "error_type": "upstream_error",
        "details": {"blob": "y" * 50_000},
    }
    text, cut = fit(result, 3000)
    body = json.loads(text)
    assert cut
    assert len(text) <= 3000
    assert body["error_type"] == "upstream_error"
    assert body["error"].startswith("bad bad")
    assert {"status", "error", "error_type", "truncated"} <= set(body)
    assert "details" not in body
