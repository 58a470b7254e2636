"""Why a connection failed, in words a person can act on.

``requests`` wraps the real cause three layers deep (``ConnectionError(MaxRetryError(
reason=NewConnectionError(...) from ConnectionRefusedError(...)))``) and its text is a
paragraph of pool internals. `connection_cause` digs out the operating system's cause
(refused, unresolvable host, reset, TLS failure, timeout) and `public_url` the address
to name beside it (no credentials, no query: query strings can carry keys).
"""

from __future__ import annotations

import socket
import ssl
from urllib.parse import urlsplit, urlunsplit

__all__ = ["connection_cause", "public_url"]

_MAX_DEPTH = 12


def public_url(url: str) -> str:
    """``url`` without user info, query and fragment (what can be shown to anyone)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "(an invalid URL)"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def connection_cause(exc: BaseException) -> str:
    """The root cause of a failed connection as a short phrase, e.g. ``connection refused
    (nothing is listening on that port)``; the exception's class name when none is known."""
    fallback: str | None = None
    for error in _chain(exc):
        known = _known(error)
        if known is not None:
            return known
        if fallback is None and isinstance(error, OSError) and error.strerror:
            fallback = error.strerror[:200].lower()
    return fallback or type(exc).__name__


_PHRASES: tuple[tuple[type[BaseException], str], ...] = (
    (socket.gaierror, "the host name could not be resolved (check the spelling, or the network's DNS)"),
    (ConnectionRefusedError, "connection refused (nothing is listening on that port)"),
    (ConnectionResetError, "the connection was reset by the other side"),
    (TimeoutError, "the connection timed out"),
)


def _known(error: BaseException) -> str | None:
    for kind, phrase in _PHRASES:
        if isinstance(error, kind):
            return phrase
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"the TLS certificate was not accepted ({(error.verify_message or 'verification failed')[:200]})"
    if isinstance(error, ssl.SSLError):
        said = getattr(error, "reason", None) or error.strerror or type(error).__name__
        return f"the TLS handshake failed ({str(said)[:200]})"
    if isinstance(error, OSError) and error.errno is not None:
        return _NETWORK_ERRNOS.get(error.errno)
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: causes, contexts, a ``reason`` attribute, exceptions in
    ``args`` (how urllib3 and requests nest them); breadth-first, bounded."""
    seen: set[int] = set()
    queue = [exc]
    out: list[BaseException] = []
    while queue and len(out) < _MAX_DEPTH:
        error = queue.pop(0)
        if id(error) in seen:
            continue
        seen.add(id(error))
        out.append(error)
        nested = [error.__cause__, error.__context__, getattr(error, "reason", None), *error.args]
        queue += [item for item in nested if isinstance(item, BaseException)]
    return out


def _errno_phrases() -> dict[int, str]:
    import errno

    phrases = {
        "ENETUNREACH": "the network is unreachable",
        "EHOSTUNREACH": "the host is unreachable",
        "ECONNABORTED": "the connection was aborted",
        "EADDRNOTAVAIL": "the address is not available on this machine",
    }
    return {getattr(errno, name): text for name, text in phrases.items() if hasattr(errno, name)}


_NETWORK_ERRNOS = _errno_phrases()
