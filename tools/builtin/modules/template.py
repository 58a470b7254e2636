"""The files ``build`` starts a module with: a working adapter for a JSON API, and its tests.

The adapter reads ``config["base_url"]`` (the manifest's ``api_url``) with
``self.http_session()``, sends the credentials the manifest's ``auth_type`` calls for, and
turns a JSON list (or an object holding one under ``items``/``data``/``results``) into
records. The tests use a fake session, since the network is off where they run.
"""

from __future__ import annotations

import json

from shared.modules import ModuleManifest

__all__ = ["scaffold"]

_AUTH = {
    "none": "",
    "api_key": '        headers["X-API-Key"] = credentials["api_key"]\n',
    "bearer": '        headers["Authorization"] = "Bearer " + credentials["token"]\n',
    "basic": "",
}

_ADAPTER = '''"""{name}: {summary}"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import requests

from shared.adapters.base import AdapterError, BaseAdapter


class {cls}(BaseAdapter[dict[str, Any]]):
    """Reads {name} from its JSON API (config["base_url"] is the manifest's api_url)."""

    def fetch_raw(self, config: Mapping[str, Any]) -> Any:
        credentials = config.get("credentials", {{}})
        headers = {{"Accept": "application/json"}}
{auth}        try:
            response = self.http_session().get(
                config["base_url"], headers=headers, timeout=10{basic}
            )
        except requests.RequestException as exc:
            raise AdapterError(f"cannot reach the API ({{type(exc).__name__}})") from None
        if response.status_code != 200:
            raise AdapterError(f"the API answered HTTP {{response.status_code}}")
        try:
            return response.json()
        except ValueError:
            raise AdapterError("the API did not answer JSON") from None

    def transform(self, raw: Any) -> list[dict[str, Any]]:
        items = raw
        if isinstance(raw, dict):
            items = raw.get("items") or raw.get("data") or raw.get("results") or []
        if not isinstance(items, list):
            raise AdapterError("the API answer holds no list of items")
        return [dict(item) for item in items if isinstance(item, dict)]

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        items = data if isinstance(data, list) else []
        return {{"count": len(items), "items": items[:20]}}
'''

_TEST = '''"""Tests of the {name} adapter (the network is off: a fake session answers)."""

import unittest

from {module} import {cls}

BASE_URL = {base_url!r}
SAMPLE = [{{"id": 1, "name": "first"}}, {{"id": 2, "name": "second"}}]


class FakeResponse:
    def __init__(self, status_code, payload):
        self.status_code = status_code
        self._payload = payload

    def json(self):
        return self._payload


class FakeSession:
    def __init__(self, status_code=200, payload=SAMPLE):
        self.calls = []
        self._reply = FakeResponse(status_code, payload)

    def get(self, url, **kwargs):
        self.calls.append(url)
        return self._reply


class {cls}Test(unittest.TestCase):
    def config(self):
        return {{"base_url": BASE_URL, "credentials": {credentials}}}

    def test_fetch_reads_the_items(self):
        session = FakeSession()
        result = {cls}(session=session).fetch(self.config())
        self.assertTrue(result.success, result.error)
        self.assertEqual([r["id"] for r in result.data], [1, 2])
        self.assertEqual(session.calls, [BASE_URL])

    def test_http_error_is_a_failure(self):
        result = {cls}(session=FakeSession(status_code=500)).fetch(self.config())
        self.assertFalse(result.success)

    def test_normalize_for_tools(self):
        shaped = {cls}.normalize_for_tools(SAMPLE)
        self.assertEqual(shaped["count"], 2)


if __name__ == "__main__":
    unittest.main()
'''


def scaffold(manifest: ModuleManifest) -> dict[str, str]:
    """The initial files of a module: ``manifest.json``, ``adapter.py``, ``test_adapter.py``."""
    summary = _docstring_text(manifest.description or f"{manifest.category} data from {manifest.api_url or 'its API'}")
    name = _docstring_text(manifest.name)
    basic = ', auth=(credentials["username"], credentials["password"])' if manifest.auth_type == "basic" else ""
    adapter = _ADAPTER.format(
        name=name, summary=summary, cls=manifest.adapter_class, auth=_AUTH[manifest.auth_type], basic=basic
    )
    credentials = {key: f"test-{key}" for key in manifest.required_credentials}
    test = _TEST.format(
        name=name,
        module="adapter",
        cls=manifest.adapter_class,
        base_url=manifest.api_url or "https://api.example.invalid/",
        credentials=json.dumps(credentials),
    )
    return {"manifest.json": manifest.to_json(), "adapter.py": adapter, "test_adapter.py": test}


def _docstring_text(text: str) -> str:
    """``text`` safe inside a triple-quoted docstring: one line, no quotes or backslashes."""
    cleaned = " ".join(text.split()).replace("\\", "/").replace('"', "'")
    return "".join(ch for ch in cleaned if ch.isprintable())[:200]
