"""The tables of the static scan: what modules may import, and what they may not touch."""

from __future__ import annotations

import re

#: Modules (and their submodules when listed) an adapter may import.
ALLOWED_IMPORTS: frozenset[str] = frozenset(
    {
        "__future__",
        "base64",
        "collections",
        "collections.abc",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "hashlib",
        "hmac",
        "html",
        "itertools",
        "json",
        "math",
        "numbers",
        "pydantic",
        "re",
        "requests",
        "requests.exceptions",
        "shared.adapters",
        "shared.adapters.base",
        "shared.adapters.records",
        "statistics",
        "string",
        "textwrap",
        "time",
        "typing",
        "urllib.parse",
        "uuid",
        "zoneinfo",
    }
)
#: Further modules the tests may import (they only ever run in the sandbox).
TEST_IMPORTS: frozenset[str] = frozenset({"unittest", "unittest.mock"})

IMPORT_REASONS = {
    "os": "modules may not use the operating system (files, processes, environment)",
    "posix": "modules may not use the operating system",
    "sys": "modules may not reach the interpreter's internals",
    "subprocess": "modules may not start programs",
    "pty": "modules may not start programs",
    "socket": "modules may not open sockets; use self.http_session() under the manifest's api_url",
    "ssl": "use self.http_session() for HTTP",
    "http": "use self.http_session() for HTTP",
    "urllib.request": "use self.http_session() for HTTP",
    "urllib3": "use self.http_session() for HTTP",
    "httpx": "use self.http_session() for HTTP",
    "aiohttp": "use self.http_session() for HTTP",
    "ctypes": "modules may not load native code",
    "cffi": "modules may not load native code",
    "importlib": "modules may not import code dynamically",
    "builtins": "modules may not reach the interpreter's internals",
    "inspect": "modules may not reach the interpreter's internals",
    "gc": "modules may not reach the interpreter's internals",
    "operator": "attrgetter/methodcaller reach attributes by name, past this scan; write obj.name",
    "functools": "partial/reduce hide what is called from this scan; write the call out",
    "code": "modules may not run code interactively",
    "codeop": "modules may not compile code",
    "types": "modules may not build functions or code objects",
    "pathlib": "modules may not touch files; data comes from the API",
    "shutil": "modules may not touch files; data comes from the API",
    "io": "modules may not touch files; data comes from the API",
    "tempfile": "modules may not touch files; data comes from the API",
    "glob": "modules may not touch files; data comes from the API",
    "pickle": "modules may not load pickled objects",
    "marshal": "modules may not load code objects",
    "threading": "modules may not start threads",
    "multiprocessing": "modules may not start processes",
    "asyncio": "modules are synchronous; use self.http_session()",
    "signal": "modules may not handle signals",
    "shared": "import from shared.adapters only",
    "tools": "modules may not import the tool layer",
    "orchestrator": "modules may not import the orchestrator",
}
#: Builtins that run, load or reach code, files or the interpreter.
FORBIDDEN_NAMES = {
    "eval": "runs text as code",
    "exec": "runs text as code",
    "compile": "makes code from text",
    "__import__": "imports code dynamically",
    "open": "opens files; data comes from the API",
    "input": "reads the terminal",
    "breakpoint": "starts a debugger",
    "globals": "reaches the interpreter's internals",
    "locals": "reaches the interpreter's internals",
    "vars": "reaches the interpreter's internals",
    "exit": "stops the process",
    "quit": "stops the process",
    "help": "reads the terminal",
    "memoryview": "reaches raw memory",
    "__builtins__": "reaches the interpreter's internals",
    "__loader__": "reaches the interpreter's internals",
    "__spec__": "reaches the interpreter's internals",
}
#: Not ``__doc__``: a docstring read as a value is a format string the scan would not see
#: (``Adapter.__doc__.format(obj)`` with ``"{0.__globals__}"`` as the docstring).
ALLOWED_DUNDERS = frozenset({"__init__", "__name__", "__qualname__", "__post_init__", "__repr__", "__str__"})
ALLOWED_DUNDER_NAMES = frozenset({"__name__", "__file__", "__annotations__"})
#: Dunders a string constant may hold (``if __name__ == "__main__"``).
ALLOWED_STRING_DUNDERS = ALLOWED_DUNDERS | ALLOWED_DUNDER_NAMES | {"__main__"}
#: Attribute names that reach the interpreter, other modules or an HTTP transport.
FORBIDDEN_ATTRS = frozenset(
    {
        "mro",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_back",
        "f_code",
        "gi_frame",
        "gi_code",
        "cr_frame",
        "cr_code",
        "ag_frame",
        "tb_frame",
        "tb_next",
        "func_globals",
        "modules",
        "poolmanager",
        "proxy_manager",
        "proxy_manager_for",
        "init_poolmanager",
        "get_adapter",
        "get_connection",
        "get_connection_with_tls_context",
        "connection_from_url",
        "adapters",
        "mount",
        "proxies",
        "trust_env",
        "_session",
        "os",
        "sys",
        "subprocess",
        "socket",
        "builtins",
        "importlib",
        "ctypes",
        "shutil",
        "pathlib",
        "posix",
        "logging",
        "threading",
        "multiprocessing",
        "pickle",
        "marshal",
        "inspect",
        "gc",
        "tempfile",
        "operator",
        "functools",
        "codeop",
    }
)
#: Attribute names refused inside string constants only when part of a dotted path
#: (``"logging.os"``): alone they are common data keys and words (``"os"``, ``"modules"``).
STRING_PATH_ONLY = frozenset(
    {"modules", "adapters", "mount", "proxies", "os", "sys", "socket", "logging", "threading", "gc"}
)
#: Identifier-like tokens in a string (dotted paths are split on the dots).
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
DUNDER = re.compile(r"__[A-Za-z0-9_]+?__")
#: What a module may use from ``requests``: exceptions and types, never a request.
REQUESTS_OK = frozenset(
    {
        "RequestException",
        "HTTPError",
        "ConnectionError",
        "Timeout",
        "ConnectTimeout",
        "ReadTimeout",
        "JSONDecodeError",
        "TooManyRedirects",
        "Response",
        "exceptions",
        "codes",
    }
)
ATTR_BUILTINS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
URL = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,15})://[^\s'\"<>]*")
FORMAT_ATTRIBUTE = re.compile(r"\{[^{}]*(?:__|\.mro|\.f_)[^{}]*\}")
