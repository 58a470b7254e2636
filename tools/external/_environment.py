"""The environment of every external child process, and what is masked in its output.

CLI tools (:class:`~tools.external.CLIAdapter`), tool binaries served from a directory
(:class:`~tools.external.ToolExecutorService`) and adopted binaries
(:class:`~tools.store.ToolBuilder`) all start their children the same way. A child gets:

1. the **base** variables of the parent, when set: ``PATH``, ``HOME``, ``LANG``,
   ``LANGUAGE``, ``TZ``, every ``LC_*``, and the names the operator lists in ``pass_env``;
2. the **declared** variables of its config (values written in the config, not secrets);
3. **its own secrets**: the variables its config names as secrets (``secret_env``, the
   ``auth`` variable), read from the parent.

Nothing else of the parent reaches it: ``OPENAI_API_KEY``, a module signing key or
another tool's token stay with their owner. Everything the child hands back (stdout,
stderr, error messages, metadata) is masked of its own secrets and of every value of the
parent that looks secret (:func:`~tools.external._redact.looks_secret`), whether or not the
child was given it: a value can reach a child through a file or an argument too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from tools.external._redact import Redactor, secret_values

#: Variables of the parent environment every child gets (when set): search path, home,
#: locale, time zone. ``LC_*`` variables are passed too.
BASE_ENV: frozenset[str] = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TZ"})


class ChildEnvironment:
    """Builds children's environments from one parent environment.

    Args:
        parent: The parent environment (``os.environ`` read at the entry point). ``None``
            is an empty parent: children get only what their config declares.
        pass_env: More variable names of ``parent`` every child gets (``TMPDIR``,
            ``SSL_CERT_FILE``, ...); a secret belongs in the tool's own secrets instead.
    """

    def __init__(self, parent: Mapping[str, str] | None = None, *, pass_env: Collection[str] = ()) -> None:
        self._parent = dict(parent or {})
        inherited = BASE_ENV | frozenset(pass_env)
        self._base = {k: v for k, v in self._parent.items() if k in inherited or k.startswith("LC_")}
        self._parent_secrets = secret_values(self._parent)

    @property
    def parent(self) -> Mapping[str, str]:
        """The parent environment (where secrets are read)."""
        return self._parent

    def build(self, declared: Mapping[str, str] | None = None, secrets: Iterable[str] = ()) -> dict[str, str]:
        """A child's environment: base variables, then ``declared``, then ``secrets`` (the
        names of its own secret variables; those unset in the parent are left out)."""
        own = {name: self._parent[name] for name in secrets if name in self._parent}
        return {**self._base, **(declared or {}), **own}

    def redactor(self, secrets: Iterable[str] = ()) -> Redactor:
        """A :class:`Redactor` for a child with secret variables ``secrets``: masks their
        values and every secret-looking value of the parent."""
        return Redactor([*(self._parent.get(name) for name in secrets), *self._parent_secrets])
