"""The static stage: what the AST scan refuses, with file and line, and what it lets through."""

from __future__ import annotations

import json

import pytest

from shared.modules import AuthType, ModuleManifest
from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER, runs_test
from tools.builtin.modules import StaticScanner
from tools.builtin.modules.template import scaffold

BASE = "http://127.0.0.1:8000/api/runs"


def _manifest(**changes: object) -> bytes:
    data = {"id": "runs", "name": "Runs", "category": "fitness", "api_url": BASE, **changes}
    return json.dumps(data).encode()


def _files(adapter: str, *, test: str | None = None) -> dict[str, bytes]:
    return {
        "manifest.json": _manifest(),
        "adapter.py": adapter.encode(),
        "test_adapter.py": (test if test is not None else runs_test(BASE)).encode(),
    }


def _rules(adapter: str) -> list[tuple[str, str, int | None]]:
    _, findings = StaticScanner().scan(_files(adapter))
    return [(f.rule, f.file, f.line) for f in findings]


def test_a_well_behaved_adapter_and_its_tests_pass() -> None:
    manifest, findings = StaticScanner().scan(_files(RUNS_ADAPTER))
    assert findings == []
    assert manifest is not None and manifest.id == "runs"


@pytest.mark.parametrize("auth", ["none", "api_key", "bearer", "basic"])
def test_the_template_passes_its_own_scan(auth: AuthType) -> None:
    creds = {"none": (), "api_key": ("api_key",), "bearer": ("token",), "basic": ("username", "password")}[auth]
    manifest = ModuleManifest(
        id="runs", name="Runs", category="fitness", api_url=BASE, auth_type=auth, required_credentials=creds
    )
    files = {k: v.encode() for k, v in scaffold(manifest).items()}
    assert StaticScanner().scan(files)[1] == []


HEADER = "from shared.adapters.base import BaseAdapter\n"
TAIL = "\nclass Adapter(BaseAdapter[dict]):\n    pass\n"


@pytest.mark.parametrize(
    ("code", "rule", "line"),
    [
        ("import os\n", "forbidden-import", 1),
        ("import subprocess\n", "forbidden-import", 1),
        ("from os import system\n", "forbidden-import", 1),
        ("import socket\n", "forbidden-import", 1),
        ("import ctypes\n", "forbidden-import", 1),
        ("import importlib\n", "forbidden-import", 1),
        ("import pathlib\n", "forbidden-import", 1),
        ("import urllib.request\n", "forbidden-import", 1),
        ("import sys\n", "forbidden-import", 1),
        ("from . import helpers\n", "relative-import", 1),
        ("from json import *\n", "star-import", 1),
        ("import urllib.parse\n", "import-form", 1),
        ("x = 1\neval('1+1')\n", "forbidden-call", 2),
        ("exec('x = 1')\n", "forbidden-call", 1),
        ("f = eval\n", "forbidden-call", 1),
        ("compile('1', 'x', 'eval')\n", "forbidden-call", 1),
        ("__import__('os')\n", "forbidden-call", 1),
        ("open('/etc/passwd').read()\n", "forbidden-call", 1),
        ("globals()['x'] = 1\n", "forbidden-call", 1),
        ("b = __builtins__\n", "forbidden-call", 1),
        ("x = ().__class__.__bases__[0].__subclasses__()\n", "forbidden-attribute", 1),
        ("def f():\n    return f.__globals__\n", "forbidden-attribute", 2),
        ("x = type(1).mro()\n", "forbidden-attribute", 1),
        ("getattr(object, 'x' + 'y')\n", "dynamic-attribute", 1),
        ("getattr(object, '__subclasses__')\n", "forbidden-attribute", 1),
        ("'{0.__class__}'.format(1)\n", "format-attribute", 1),
        ("import requests\nrequests.get('http://127.0.0.1:8000/api/runs')\n", "direct-http", 2),
        ("import requests\ns = requests.Session()\n", "direct-http", 2),
        ("import requests as r\nr.post('x')\n", "direct-http", 2),
        ("import requests\nalias = requests\n", "direct-http", 2),
        ("from requests import get\n", "direct-http", 1),
        ("from requests.adapters import HTTPAdapter\n", "forbidden-import", 1),
        ("import shared.adapters.base as b\nb.logging.os.system('id')\n", "forbidden-attribute", 2),
        ("import typing\nx = typing.sys\n", "forbidden-attribute", 2),
        ("URL = 'https://evil.example.com/steal'\n", "url-outside-base", 1),
        ("URL = 'http://127.0.0.1:8001/api/runs'\n", "url-outside-base", 1),
        ("URL = 'http://127.0.0.1:8000/admin'\n", "url-outside-base", 1),
        ("URL = 'file:///etc/passwd'\n", "url-scheme", 1),
        ("def f(self):\n    return self.http_session().get_adapter('x')\n", "forbidden-attribute", 2),
        ("def f(self):\n    self._session = None\n", "forbidden-attribute", 2),
    ],
)
def test_forbidden_code_is_reported_with_file_and_line(code: str, rule: str, line: int) -> None:
    found = _rules(HEADER + code + TAIL)
    assert (rule, "adapter.py", line + 1) in found, found


def test_urls_under_the_base_url_and_docstrings_are_fine() -> None:
    code = HEADER + '"""See https://docs.example.com for the API."""\nURL = "http://127.0.0.1:8000/api/runs/today"\n'
    assert _rules(code + TAIL) == []


def test_syntax_errors_and_structure_problems_are_findings() -> None:
    _, findings = StaticScanner().scan(
        {"manifest.json": _manifest(), "adapter.py": b"def broken(:\n", "test_adapter.py": b"import unittest\n"}
    )
    assert [(f.rule, f.file, f.line) for f in findings] == [("syntax", "adapter.py", 1)]

    _, findings = StaticScanner().scan({"manifest.json": _manifest(), "adapter.py": b"x = 1\n"})
    assert {(f.rule, f.file) for f in findings} == {("no-tests", "test_adapter.py"), ("no-adapter", "adapter.py")}

    _, findings = StaticScanner().scan({"adapter.py": RUNS_ADAPTER.encode(), "test_adapter.py": b""})
    assert [(f.rule, f.file) for f in findings] == [("manifest", "manifest.json")]

    _, findings = StaticScanner().scan(
        {"manifest.json": _manifest(api_url=""), "adapter.py": RUNS_ADAPTER.encode(), "test_adapter.py": b""}
    )
    assert [f.message for f in findings] == ["api_url is empty; set the base URL of the data source's API."]


def test_tests_may_import_unittest_and_the_module_but_the_adapter_may_not() -> None:
    files = _files(RUNS_ADAPTER + "\nimport unittest\n", test="import unittest\nimport unittest.mock\nimport adapter\n")
    _, findings = StaticScanner().scan(files)
    assert [(f.rule, f.file) for f in findings] == [("forbidden-import", "adapter.py")]


def test_tests_are_scanned_too() -> None:
    _, findings = StaticScanner().scan(_files(RUNS_ADAPTER, test="import os\nos.system('id')\n"))
    assert [(f.rule, f.file, f.line) for f in findings] == [("forbidden-import", "test_adapter.py", 1)]


def test_a_module_reading_the_credential_store_is_refused() -> None:
    attempts = [
        "def steal():\n    return open('/root/.local/share/tooldeck/module-keys/module-credentials.key').read()\n",
        "import pathlib\n",
        "def steal():\n    return __import__('os').environ\n",
    ]
    for code in attempts:
        assert _rules(HEADER + code + TAIL), code


def test_non_utf8_and_huge_nesting_do_not_crash_the_scanner() -> None:
    _, findings = StaticScanner().scan(_files("x = 1\n") | {"adapter.py": b"\xff\xfe"})
    assert ("encoding", "adapter.py") in {(f.rule, f.file) for f in findings}
    deep = "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    _, findings = StaticScanner().scan(_files(deep))
    assert ("syntax", "adapter.py") in {(f.rule, f.file) for f in findings}


def test_the_forbidden_import_message_lists_what_is_allowed() -> None:
    _, findings = StaticScanner().scan(_files(HEADER + "import os\n" + TAIL))
    assert findings[0].message.startswith(
        "import of 'os' is not allowed: modules may not use the operating system (files, processes, environment). "
        "Modules may import: __future__, base64,"
    )


#: The module that passed the scan before it was hardened (issue 20): ``operator.attrgetter``
#: with dunder names in strings reached ``os.environ`` and ``open`` through a function's globals.
ATTRGETTER_ESCAPE = """
import operator
from typing import Any
from shared.adapters.base import BaseAdapter

_globals = operator.attrgetter("__globals__")(BaseAdapter.fetch)
_env = operator.attrgetter("environ")(operator.attrgetter("os")(_globals["logging"]))


class Adapter(BaseAdapter[dict[str, Any]]):
    def fetch_raw(self, config):
        return [{"key": _env.get("OPENAI_API_KEY")}]

    def transform(self, raw):
        return list(raw)
"""


def test_the_attrgetter_escape_that_passed_the_old_scan_is_refused() -> None:
    found = _rules(ATTRGETTER_ESCAPE)
    assert ("forbidden-import", "adapter.py", 2) in found
    assert ("forbidden-string", "adapter.py", 6) in found


#: A docstring is a string constant too: read back through ``__doc__`` it is a format string
#: that reaches ``os.environ`` (this module passed the hardened scan, and read the host's
#: environment when run in process).
DOCSTRING_ESCAPE = '''
from typing import Any
from shared.adapters.base import BaseAdapter


class Adapter(BaseAdapter[dict[str, Any]]):
    """{0.__globals__[logging].os.environ}"""

    def fetch_raw(self, config):
        return [{"leak": Adapter.__doc__.format(BaseAdapter.fetch)}]

    def transform(self, raw):
        return list(raw)
'''


def test_a_docstring_read_back_as_a_format_string_is_refused() -> None:
    found = _rules(DOCSTRING_ESCAPE)
    assert ("format-attribute", "adapter.py", 7) in found, found
    assert ("forbidden-attribute", "adapter.py", 10) in found, found
    for code in ('"""See __globals__."""\n', 'def f():\n    """{0.f_back}"""\n', "X = __doc__\n"):
        assert _rules(HEADER + code + TAIL), code
    prose = '"""Runs from https://docs.example.com: inspect the os and sys fields of __init__."""\n'
    assert _rules(HEADER + prose + TAIL) == []


@pytest.mark.parametrize(
    "module", ["operator", "functools", "ctypes", "importlib", "pickle", "marshal", "code", "inspect", "gc"]
)
@pytest.mark.parametrize(
    "form",
    [
        "import {m}\n",
        "import {m} as alias\n",
        "from {m} import *\n",
        "from {m} import something\n",
        "import json, {m}\n",
        "import {m}.sub\n",
        "from {m}.sub import something\n",
    ],
)
def test_interpreter_reaching_modules_are_refused_in_every_import_form(module: str, form: str) -> None:
    found = _rules(HEADER + form.format(m=module) + TAIL)
    assert ("forbidden-import", "adapter.py", 2) in found, found


@pytest.mark.parametrize(
    "code",
    [
        "NAME = '__globals__'\n",
        "NAME = '__subclasses__'\n",
        "NAME = 'f_globals'\n",
        "NAME = 'gi_frame'\n",
        "NAME = 'tb_frame'\n",
        "NAME = 'mro'\n",
        "NAME = 'a.b.__class__'\n",
        "NAME = 'logging.os'\n",
        "NAME = 'sys.modules'\n",
        "NAME = b'__globals__'\n",
        "NAME = f'{1}__builtins__'\n",
        "NAME = '__glo' 'bals__'\n",
        "NAME = ('x', ['__dict__'])\n",
        "def f(x):\n    return {'key': 'cr_frame'}\n",
    ],
)
def test_dunder_and_forbidden_attribute_names_are_refused_inside_strings(code: str) -> None:
    found = _rules(HEADER + code + TAIL)
    assert "forbidden-string" in {rule for rule, _, _ in found}, found


@pytest.mark.parametrize(
    "code",
    [
        "KEYS = ('os', 'modules', 'sys', 'socket')\n",  # data keys: refused only inside a dotted path
        "MESSAGE = 'the API answered with no modules'\n",
        "URL = 'http://127.0.0.1:8000/api/runs/os.sys'\n",
        "RUN = __name__ == '__main__'\n",
        "NAME = '__init__'\n",
    ],
)
def test_ordinary_strings_are_fine(code: str) -> None:
    assert _rules(HEADER + code + TAIL) == []
