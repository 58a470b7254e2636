"""What every knowledge store checks the same way: texts and metadata to store, metadata
filters, document ids. Bad input raises :class:`~tools.errors.InvalidArgumentsError` with a
message for the model, before anything is written."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping

from tools.builtin.knowledge.store import FilterValue, KnowledgeItem
from tools.errors import InvalidArgumentsError

MAX_TEXT_CHARS = 100_000
MAX_METADATA_BYTES = 16_384
MAX_FILTERS = 8
MAX_LIMIT = 100
_FILTER_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,4}$")


def prepare_row(index: int, item: KnowledgeItem) -> tuple[str, bytes, str]:
    """``(text, sha256 of the text, metadata as JSON)`` of one item to store.

    The text is stripped; lone surrogates become U+FFFD.
    """
    text = clean(item.text).strip() if isinstance(item.text, str) else ""
    where = "" if index == 0 else f" (item {index})"
    if not text:
        raise InvalidArgumentsError(f"The text to store is empty{where}. Send the text itself.")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidArgumentsError(
            f"The text to store has {len(text)} characters{where}; at most {MAX_TEXT_CHARS} "
            "are allowed. Store it in several parts."
        )
    if not isinstance(item.metadata, Mapping):
        raise InvalidArgumentsError(f"Metadata must be a JSON object{where}.")
    try:
        metadata = json.dumps(dict(item.metadata), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentsError(
            f"Metadata must hold only JSON values (text, numbers, true/false, lists){where}."
        ) from exc
    metadata = clean(metadata)
    if len(metadata.encode()) > MAX_METADATA_BYTES:
        raise InvalidArgumentsError(f"Metadata is larger than {MAX_METADATA_BYTES} bytes{where}; keep it short.")
    return text, hashlib.sha256(text.encode()).digest(), metadata


def clean(text: str) -> str:
    """Replace lone surrogates (which no database can store) with U+FFFD."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def check_filters(filters: Mapping[str, FilterValue]) -> list[tuple[str, FilterValue]]:
    """The filters as ``(dotted key, value)`` pairs, checked."""
    if len(filters) > MAX_FILTERS:
        raise InvalidArgumentsError(f"At most {MAX_FILTERS} metadata filters are allowed.")
    checked: list[tuple[str, FilterValue]] = []
    for key, value in filters.items():
        if not isinstance(key, str) or not _FILTER_KEY.match(key):
            raise InvalidArgumentsError(
                f"Filter key {key!r} is not valid: use letters, digits and underscores, "
                "with dots for nested keys (e.g. 'source' or 'author.name')."
            )
        if not isinstance(value, str | int | float) or (isinstance(value, float) and not math.isfinite(value)):
            raise InvalidArgumentsError(f"Filter {key!r} needs a text, number or true/false value.")
        checked.append((key, value))
    return checked


def parse_id(doc_id: str) -> int | None:
    """A document id as an integer; None when malformed."""
    text = doc_id.strip() if isinstance(doc_id, str) else ""
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        return None
    return int(text)
