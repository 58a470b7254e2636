"""The words that make an undeclared tool ``dangerous``: it destroys, sends, pays, deploys or
executes.

A name proves nothing about a tool (PEERS 23), so the fail-closed rules never *lower* risk
from a name; they only raise it. An undeclared tool is ``moderate``; one whose name (or,
for a CLI tool, the program it runs) contains one of these words is ``dangerous``. The
words are matched whole, after splitting ``snake_case``, ``kebab-case``, ``dot.case`` and
``camelCase`` names, with a plain English inflection stripped (``sends``, ``deleted``,
``pushing``), so that ``dropbox`` or ``format`` do not match ``drop`` or ``rm``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

_KINDS: dict[str, tuple[str, ...]] = {
    "destroys data": (
        "delete", "del", "drop", "wipe", "rm", "rmdir", "remove", "purge", "destroy", "truncate",
        "erase", "shred", "unlink", "nuke", "overwrite", "reset", "revoke", "uninstall", "evict",
        "dd", "mkfs", "fdisk",
    ),
    "sends messages or data": (
        "send", "email", "mail", "sendmail", "smtp", "sms", "post", "tweet", "publish", "broadcast",
        "notify", "reply", "forward", "share", "upload", "invite", "dm",
    ),
    "moves money": (
        "pay", "payment", "payout", "charge", "refund", "transfer", "withdraw", "wire", "purchase",
        "buy", "sell", "trade",
    ),
    "deploys or changes systems": (
        "deploy", "rollout", "rollback", "promote", "migrate", "provision", "apply", "scale",
        "restart", "reboot", "shutdown", "halt", "install", "upgrade", "merge", "push", "sudo",
        "su", "chmod", "chown", "kill", "pkill", "killall", "terminate", "systemctl", "crontab",
    ),
    "executes commands or code": (
        "exec", "execute", "run", "eval", "shell", "bash", "sh", "zsh", "cmd", "powershell", "pwsh",
        "terminal", "spawn", "subprocess", "sql", "psql", "mysql", "sqlite", "mongo", "mongosh",
        "kubectl", "helm", "docker", "podman", "terraform", "ansible", "ssh", "scp", "rsync", "aws",
        "gcloud", "az", "curl", "wget", "nc", "netcat",
    ),
}  # fmt: skip

# Programs that run other programs or code: risky as the program a CLI tool runs, but too
# common as words of a name (``get_node``, ``python_docs``) to count there.
_RUNNERS = (
    "env", "xargs", "nohup", "nice", "timeout", "find", "python", "node", "deno", "ruby",
    "perl", "php", "lua", "awk", "make", "npx", "npm", "pip", "uv", "cargo", "go", "java",
)  # fmt: skip

#: Each word and what it says the tool does (read-only).
RISKY_WORDS: Mapping[str, str] = MappingProxyType({w: kind for kind, words in _KINDS.items() for w in words})
#: :data:`RISKY_WORDS` plus the program runners, for the program a CLI tool runs (read-only).
RISKY_PROGRAMS: Mapping[str, str] = MappingProxyType(
    {**dict.fromkeys(_RUNNERS, "runs other programs or code"), **RISKY_WORDS}
)

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+[a-z]*")
_INFLECTIONS = ("ing", "es", "ed", "s", "d")


def name_words(name: str) -> list[str]:
    """The lower-cased words of a name: ``sendEmail`` -> ``["send", "email"]``,
    ``git-push`` -> ``["git", "push"]``, ``python3`` -> ``["python", "3"]``."""
    return [word.lower() for word in _WORD.findall(name)]


def _stems(word: str) -> Iterable[str]:
    yield word
    for ending in _INFLECTIONS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            stem = word[: -len(ending)]
            yield stem
            yield stem + "e"  # deleting -> delet -> delete
            if ending in ("ing", "ed") and stem[-1] == stem[-2]:
                yield stem[:-1]  # running -> runn -> run


def risky_word(*names: str, words: Mapping[str, str] = RISKY_WORDS) -> tuple[str, str] | None:
    """The first word of ``names`` that makes a tool dangerous, and what it says the tool does.

    Args:
        names: Names to look at (a tool's name, the server's name for it, its action names).
        words: The risky words (:data:`RISKY_PROGRAMS` for the programs a CLI tool runs).

    Returns:
        ``(word, "destroys data")`` and the like, or None when no word is risky.
    """
    for name in names:
        for word in name_words(name):
            for stem in _stems(word):
                kind = words.get(stem)
                if kind is not None:
                    return stem, kind
    return None


def risky_program(argv0: str) -> tuple[str, str] | None:
    """:func:`risky_word` for the program a CLI tool runs (its path's last part)."""
    base = argv0.replace("\\", "/").rsplit("/", 1)[-1]
    return risky_word(base.removesuffix(".exe"), words=RISKY_PROGRAMS)
