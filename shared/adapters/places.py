"""A small configured places table: names such as ``home`` or ``office`` -> coordinates.

Used by the weather and commute adapters instead of a geocoding service: the user lists
the places they care about in the context service config.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from shared.adapters.base import AdapterError

__all__ = ["Place", "resolve_place"]

_COORDS = re.compile(r"^\s*(-?\d{1,3}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$")


class Place(BaseModel):
    """Coordinates of a named place (WGS 84 degrees)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lat: float = Field(ge=-90, le=90)
    lon: float = Field(ge=-180, le=180)
    label: str | None = Field(None, max_length=200, description="Name shown to the user.")


def resolve_place(text: str, places: Mapping[str, Place]) -> tuple[str, Place]:
    """Find ``text`` in ``places`` (case-insensitive), or read it as ``"lat,lon"``.

    Returns:
        The display name and the place.

    Raises:
        AdapterError: Unknown name or coordinates out of range; the message lists the
            known places.
    """
    wanted = text.strip()
    for name, place in places.items():
        if name.lower() == wanted.lower() or (place.label or "").lower() == wanted.lower():
            return place.label or name, place
    match = _COORDS.match(wanted)
    if match:
        lat, lon = float(match.group(1)), float(match.group(2))
        if -90 <= lat <= 90 and -180 <= lon <= 180:
            return f"{lat:.4f},{lon:.4f}", Place(lat=lat, lon=lon)
    known = ", ".join(sorted(places)) or "none configured"
    shown = wanted[:80]
    raise AdapterError(
        f"unknown place {shown!r}; use one of the configured places ({known}) or coordinates as 'lat,lon'"
    )
