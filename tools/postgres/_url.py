"""Database URLs: what tooldeck accepts, and how one is shown to people (never its password)."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

#: The environment variable that selects PostgreSQL for tooldeck's shared state (read at entry points).
DATABASE_URL_VARIABLE = "TOOLDECK_DATABASE_URL"
_SCHEMES = ("postgresql", "postgres")
_EXAMPLE = "postgresql://tooldeck@db.internal:5432/tooldeck"


def check_database_url(url: object, *, setting: str = DATABASE_URL_VARIABLE) -> str:
    """``url`` when it is a ``postgresql://`` URL, else a `ValueError` saying what one looks like.

    The message never repeats the value (it may hold a password).
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError(f"{setting} is empty; set it to a PostgreSQL URL such as {_EXAMPLE}")
    text = url.strip()
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme not in _SCHEMES:
        raise ValueError(
            f"{setting} is not a PostgreSQL URL (it must start with postgresql://), e.g. {_EXAMPLE} or, for a "
            "Unix socket, postgresql:///tooldeck?host=/run/postgresql"
        )
    return text


def redact_url(url: str) -> str:
    """``url`` as people may see it: user, host, port and database; never the password.

    ``postgresql://app:secret@db:5432/tooldeck?sslmode=require`` becomes
    ``postgresql://app@db:5432/tooldeck``; a socket directory given as ``?host=/run/pg`` is
    shown as the host.
    """
    try:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        host = unquote(parts.hostname or "") or (query.get("host") or [""])[0]
        port = parts.port
    except ValueError:  # an unparsable port, for one
        return "postgresql://(unreadable URL)"
    user = parts.username or (query.get("user") or [""])[0]
    database = parts.path.lstrip("/") or (query.get("dbname") or [""])[0]
    shown = f"{user}@" if user else ""
    if host.startswith("/"):  # a Unix socket directory
        return f"postgresql://{shown}/{database}?host={host}"
    shown += host or "localhost"
    if port is not None:
        shown += f":{port}"
    return f"postgresql://{shown}/{database}"
