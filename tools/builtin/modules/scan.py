"""The static stage of validation: an AST scan of a module's files.

It reads the code without running it and refuses what a data-source adapter has no use
for: imports outside an allowlist (``os``, ``subprocess``, ``socket``, ``ctypes``,
``importlib``... are named with a reason), the builtins that run or load code or open
files (``eval``, ``exec``, ``compile``, ``__import__``, ``open``, ``globals``...), dunder
attributes (``__class__``, ``__globals__``, ``__subclasses__``...) and the attributes that
reach an interpreter or a transport (``mro``, ``f_globals``, ``poolmanager``,
``get_adapter``...), also when a string constant names them (``"__globals__"``,
``"f_globals"``, ``"logging.os"``: strings reach attributes through ``getattr``,
``operator.attrgetter`` or format strings; docstrings may hold neither a dunder name nor a
format field reaching an attribute, and ``__doc__`` is refused), ``getattr``/``setattr`` with a computed name,
format strings that reach attributes, direct HTTP through ``requests`` (modules must use
``self.http_session()``) and URL literals outside the manifest's ``api_url``. ``operator``,
``functools``, ``ctypes``, ``importlib``, ``pickle``, ``marshal``, ``code``, ``inspect``
and ``gc`` are refused in every import form. It also checks the file set: a valid manifest
with an ``api_url``, ``adapter.py`` defining the manifest's adapter class, and at least
one test.

This is an early, friendly check, not the boundary: a static scan of Python can be
bypassed. The boundary is the worker: an installed module runs only in a sandboxed process
with no network and no host secrets, and its HTTP is sent by the host, confined to its
``api_url`` (see ``docs/modules.md``, "The boundary").
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from shared.modules import ManifestError, ModuleManifest, within_base_url
from tools.builtin.modules._scan_rules import (
    ALLOWED_DUNDER_NAMES,
    ALLOWED_DUNDERS,
    ALLOWED_IMPORTS,
    ALLOWED_STRING_DUNDERS,
    ATTR_BUILTINS,
    DUNDER,
    FORBIDDEN_ATTRS,
    FORBIDDEN_NAMES,
    FORMAT_ATTRIBUTE,
    IDENTIFIER,
    IMPORT_REASONS,
    REQUESTS_OK,
    STRING_PATH_ONLY,
    TEST_IMPORTS,
    URL,
)
from tools.builtin.modules.report import Finding

__all__ = ["ALLOWED_IMPORTS", "TEST_IMPORTS", "StaticScanner"]


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _root(dotted: str) -> str:
    return dotted.split(".", 1)[0]


class _Visitor(ast.NodeVisitor):
    """Collects findings for one file."""

    def __init__(self, path: str, *, allowed: frozenset[str], base_url: str) -> None:
        self.path = path
        self.allowed = allowed
        self.base_url = base_url
        self.findings: list[Finding] = []
        self.requests_names: set[str] = set()
        self._attribute_bases: set[int] = set()

    def add(self, node: ast.AST, rule: str, message: str) -> None:
        self.findings.append(
            Finding(stage="static", file=self.path, line=getattr(node, "lineno", None), rule=rule, message=message)
        )

    def _import_refused(self, node: ast.AST, name: str) -> None:
        reason = IMPORT_REASONS.get(name) or IMPORT_REASONS.get(_root(name))
        allowed = ", ".join(sorted(self.allowed))
        text = f"import of {name!r} is not allowed"
        text += f": {reason}." if reason else "."
        self.add(node, "forbidden-import", f"{text} Modules may import: {allowed}.")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            name = alias.name
            if name not in self.allowed:
                self._import_refused(node, name)
                continue
            if alias.asname is None and "." in name and _root(name) not in self.allowed:
                head, tail = name.rsplit(".", 1)
                self.add(
                    node,
                    "import-form",
                    f"'import {name}' also binds {_root(name)!r}; write 'from {head} import {tail}' "
                    f"or 'from {name} import <name>' instead.",
                )
                continue
            bound = alias.asname or _root(name)
            if (alias.asname and name == "requests") or (alias.asname is None and _root(name) == "requests"):
                self.requests_names.add(bound)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.add(node, "relative-import", "relative imports are not allowed; keep the adapter in adapter.py.")
            return
        module = node.module or ""
        if module not in self.allowed:
            self._import_refused(node, module)
            return
        for alias in node.names:
            if alias.name == "*":
                self.add(node, "star-import", f"'from {module} import *' is not allowed; import the names you use.")
            elif alias.name in FORBIDDEN_ATTRS or alias.name in FORBIDDEN_NAMES or _dunder(alias.name):
                self.add(node, "forbidden-import", f"importing {alias.name!r} from {module!r} is not allowed.")
            elif _root(module) == "requests" and alias.name not in REQUESTS_OK:
                self.add(node, "direct-http", _direct_http(f"requests.{alias.name}"))

    def visit_Name(self, node: ast.Name) -> None:
        reason = FORBIDDEN_NAMES.get(node.id)
        if node.id in self.requests_names and id(node) not in self._attribute_bases:
            self.add(
                node,
                "direct-http",
                "use requests only for its exceptions (requests.RequestException...); "
                + _direct_http("passing the requests module around"),
            )
        elif reason is not None:
            self.add(node, "forbidden-call", f"{node.id!r} is not allowed: it {reason}.")
        elif _dunder(node.id) and node.id not in ALLOWED_DUNDER_NAMES:
            self.add(node, "forbidden-name", f"the name {node.id!r} is not allowed.")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if isinstance(node.value, ast.Name):
            self._attribute_bases.add(id(node.value))
        if _dunder(attr) and attr not in ALLOWED_DUNDERS:
            self.add(node, "forbidden-attribute", f"the attribute {attr!r} is not allowed.")
        elif attr in FORBIDDEN_ATTRS:
            self.add(node, "forbidden-attribute", _forbidden_attr(attr))
        elif isinstance(node.value, ast.Name) and node.value.id in self.requests_names and attr not in REQUESTS_OK:
            self.add(node, "direct-http", _direct_http(f"requests.{attr}"))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ATTR_BUILTINS:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.add(
                    node,
                    "dynamic-attribute",
                    f"{func.id}() needs a literal attribute name; write obj.name instead of a computed name.",
                )
            elif _dunder(name.value) or name.value in FORBIDDEN_ATTRS:
                self.add(node, "forbidden-attribute", f"{func.id}() of {name.value!r} is not allowed.")
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            # A docstring or bare string: prose (URLs and words are fine), but never a
            # format string or a dunder name (``__doc__`` is refused, yet be sure).
            text = node.value.value
            if FORMAT_ATTRIBUTE.search(text):
                self.add(node.value, "format-attribute", "format strings may not reach dunder or frame attributes.")
            elif (found := _dunder_named(text)) is not None:
                self.add(node.value, "forbidden-string", _named(found))
            return
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if not isinstance(value, str):
            return
        if FORMAT_ATTRIBUTE.search(value):
            self.add(node, "format-attribute", "format strings may not reach dunder or frame attributes.")
        else:
            self._named_in_string(node, value)
        if isinstance(node.value, bytes):
            return
        for match in URL.finditer(value):
            url, scheme = match.group(0), match.group(1).lower()
            if scheme not in ("http", "https"):
                self.add(
                    node, "url-scheme", f"only http(s) URLs under the manifest's api_url are allowed, not {scheme}://."
                )
            elif not self.base_url:
                self.add(node, "url-outside-base", "set api_url in manifest.json; every URL must be under it.")
            elif not within_base_url(url, self.base_url):
                self.add(
                    node,
                    "url-outside-base",
                    f"the URL {url[:100]!r} is outside the manifest's api_url ({self.base_url}); the adapter may "
                    "only reach URLs under it (build them from config['base_url']).",
                )

    def _named_in_string(self, node: ast.Constant, value: str) -> None:
        """Refuse a string that names a dunder or a forbidden attribute (once per string)."""
        if (found := _dunder_named(value)) is not None:
            self.add(node, "forbidden-string", _named(found))
            return
        for match in IDENTIFIER.finditer(URL.sub(" ", value)):
            parts = match.group(0).split(".")
            for part in parts:
                if part in FORBIDDEN_ATTRS and (len(parts) > 1 or part not in STRING_PATH_ONLY):
                    self.add(node, "forbidden-string", _named(match.group(0) if len(parts) > 1 else part))
                    return


def _dunder_named(value: str) -> str | None:
    """The first dunder name in ``value`` that strings may not hold, if any."""
    for match in DUNDER.finditer(value):
        if match.group(0) not in ALLOWED_STRING_DUNDERS:
            return match.group(0)
    return None


def _named(name: str) -> str:
    return (
        f"a string may not name {name!r}: names in strings reach attributes through getattr, "
        "operator.attrgetter or format strings, and modules may not reach the interpreter's internals."
    )


def _direct_http(what: str) -> str:
    return (
        f"{what} is not allowed: make requests with self.http_session() (confined to the manifest's api_url), "
        "e.g. self.http_session().get(config['base_url'], timeout=10)."
    )


def _forbidden_attr(attr: str) -> str:
    if attr in ("get_adapter", "poolmanager", "proxy_manager", "mount", "adapters", "proxies", "trust_env", "_session"):
        return f"the attribute {attr!r} is not allowed: use self.http_session().get(...) / .post(...) as they are."
    return f"the attribute {attr!r} is not allowed: it reaches the interpreter or another module."


class StaticScanner:
    """Scans a module's files without running them.

    Args:
        allowed_imports: Modules the adapter and tests may import.
        test_imports: Further modules the tests may import (besides the module's own files).
    """

    def __init__(
        self,
        *,
        allowed_imports: Iterable[str] = ALLOWED_IMPORTS,
        test_imports: Iterable[str] = TEST_IMPORTS,
    ) -> None:
        self._allowed = frozenset(allowed_imports)
        self._test_allowed = self._allowed | frozenset(test_imports)

    def scan(self, files: Mapping[str, bytes]) -> tuple[ModuleManifest | None, list[Finding]]:
        """The manifest (None when invalid) and every finding, in file order."""
        findings: list[Finding] = []
        manifest = self._manifest(files, findings)
        base_url = manifest.api_url if manifest is not None else ""
        siblings = frozenset(p[:-3] for p in files if p.endswith(".py") and "/" not in p)
        tests = [p for p in files if p.rsplit("/", 1)[-1].startswith("test") and p.endswith(".py")]
        if not tests:
            findings.append(
                Finding(
                    stage="manifest",
                    file="test_adapter.py",
                    rule="no-tests",
                    message="the module has no tests; add test_adapter.py with unittest tests of fetch and "
                    "normalize_for_tools (use a fake session, the network is off).",
                )
            )
        trees: dict[str, ast.Module] = {}
        for path, data in files.items():
            if not path.endswith(".py"):
                continue
            tree = self._parse(path, data, findings)
            if tree is None:
                continue
            trees[path] = tree
            is_test = path in tests
            allowed = (self._test_allowed | siblings) if is_test else self._allowed
            visitor = _Visitor(path, allowed=allowed, base_url=base_url)
            visitor.visit(tree)
            findings.extend(visitor.findings)
        if manifest is not None:
            self._adapter_class(manifest, trees, files, findings)
        return manifest, findings

    @staticmethod
    def _manifest(files: Mapping[str, bytes], findings: list[Finding]) -> ModuleManifest | None:
        data = files.get("manifest.json")
        if data is None:
            findings.append(Finding(stage="manifest", file="manifest.json", rule="manifest", message="missing"))
            return None
        try:
            manifest = ModuleManifest.from_json(data)
        except ManifestError as exc:
            findings.append(Finding(stage="manifest", file="manifest.json", rule="manifest", message=str(exc)))
            return None
        if not manifest.api_url:
            findings.append(
                Finding(
                    stage="manifest",
                    file="manifest.json",
                    rule="manifest",
                    message="api_url is empty; set the base URL of the data source's API.",
                )
            )
        return manifest

    @staticmethod
    def _parse(path: str, data: bytes, findings: list[Finding]) -> ast.Module | None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            findings.append(Finding(stage="static", file=path, rule="encoding", message="the file is not UTF-8 text."))
            return None
        try:
            return ast.parse(text, filename=path)
        except SyntaxError as exc:
            findings.append(
                Finding(stage="static", file=path, line=exc.lineno, rule="syntax", message=f"syntax error: {exc.msg}")
            )
        except (ValueError, RecursionError, MemoryError):
            findings.append(Finding(stage="static", file=path, rule="syntax", message="the file cannot be parsed."))
        return None

    @staticmethod
    def _adapter_class(
        manifest: ModuleManifest, trees: Mapping[str, ast.Module], files: Mapping[str, bytes], findings: list[Finding]
    ) -> None:
        if "adapter.py" not in files:
            findings.append(
                Finding(stage="manifest", file="adapter.py", rule="no-adapter", message="adapter.py is missing.")
            )
            return
        tree = trees.get("adapter.py")
        if tree is None:
            return  # a syntax finding says why
        names = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        if manifest.adapter_class not in names:
            findings.append(
                Finding(
                    stage="manifest",
                    file="adapter.py",
                    rule="no-adapter",
                    message=f"adapter.py must define the class {manifest.adapter_class} (a BaseAdapter subclass), "
                    "as manifest.json's adapter_class says.",
                )
            )
