"""Reading the JSON files tooldeck keeps (registries, approvals): strictly, never guessing.

A file that cannot be used is an error naming the file, the line when known, the problem
and the fix; it is never silently replaced. The checks are the same for every such file:
a size cap, UTF-8, not empty, valid JSON, a schema version this tooldeck can read, then the
document model's own validation (its first problem, with the line it is on).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tools._jsonpos import line_of
from tools.errors import DataFileError

_M = TypeVar("_M", bound=BaseModel)


def read_text(
    path: Path, *, error: type[DataFileError], max_bytes: int, empty_example: str, shown: Path | None = None
) -> str | None:
    """The file's text; None when it does not exist.

    Args:
        path: The file to read.
        error: The error class to raise.
        max_bytes: The largest file accepted.
        empty_example: What an empty document looks like (for the "is empty" error).
        shown: The path to name in errors (e.g. the symlink the user knows), default ``path``.

    Raises:
        DataFileError (``error``): a directory, unreadable, over ``max_bytes``, not UTF-8, empty.
    """
    shown = shown or path
    try:
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise error(shown, "is a directory, not a file") from None
    except OSError as exc:
        raise error(shown, f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise error(shown, f"is larger than {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(shown, "is not UTF-8 text", line=raw[: exc.start].count(b"\n") + 1) from None
    if not text.strip():
        raise error(shown, f"is empty; an empty one is {empty_example}", line=1)
    return text


def parse_document(text: str, path: Path, model: type[_M], *, error: type[DataFileError], newest: int) -> _M:
    """``text`` as a ``model`` document of schema version ``newest`` or older.

    Raises:
        DataFileError (``error``): not JSON, too deep, a newer schema version, or invalid
            (the first problem, with its line).
    """
    try:
        return model.model_validate_json(text)  # the fast path: files tooldeck wrote
    except ValidationError:
        pass
    return model.model_validate(parse_json(text, path, error=error, newest=newest, model=model))


def parse_json(
    text: str, path: Path, *, error: type[DataFileError], newest: int, model: type[BaseModel] | None = None
) -> Any:
    """``text`` as JSON whose ``version`` is at most ``newest``, checked against ``model``.

    Returns the decoded data (valid for ``model`` when one is given).

    Raises:
        DataFileError (``error``): as :func:`parse_document`.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(path, f"is not valid JSON ({exc.msg}, column {exc.colno})", line=exc.lineno) from None
    except RecursionError:
        raise error(path, "is nested too deeply") from None
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > newest:
        raise error(
            path,
            f"has schema version {version}, newer than this tooldeck reads ({newest}); upgrade tooldeck",
            line=line_of(text, ["version"]),
        )
    if model is not None:
        try:
            model.model_validate(data)
        except ValidationError as exc:
            raise invalid(exc, text, path, error=error) from None
        except RecursionError:
            raise error(path, "is nested too deeply") from None
    return data


def invalid(exc: ValidationError, text: str, path: Path, *, error: type[DataFileError]) -> DataFileError:
    """The error for a document its model refused: the first problem, where it is, how many more."""
    first = exc.errors(include_url=False)[0]
    loc = [part for part in first["loc"] if isinstance(part, str | int)]
    where = ".".join(str(part)[:80] for part in loc) or "(top level)"
    try:
        line = line_of(text, loc)
    except RecursionError:
        line = None
    more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
    return error(path, f"{where}: {first['msg']}{more}", line=line)
