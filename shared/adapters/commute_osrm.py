"""Commute time from an OSRM-compatible routing API.

``GET {base_url}/route/v1/{profile}/{lon},{lat};{lon},{lat}?overview=false`` between two
places of the configured places table (or ``"lat,lon"`` coordinates). ``base_url`` is
configurable so tests point it at a local replay server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from shared.adapters._http import http_get_json
from shared.adapters.base import AdapterError, AdapterOptions, BaseAdapter
from shared.adapters.places import Place, resolve_place
from shared.adapters.records import Route
from shared.adapters.registry import register_adapter

__all__ = ["OsrmCommuteAdapter", "OsrmOptions", "normalize_commute"]

LONG_COMMUTE_MIN = 60


class OsrmOptions(AdapterOptions):
    """Options of :class:`OsrmCommuteAdapter`; ``destination`` may come with each request."""

    base_url: str = Field("https://router.project-osrm.org", description="API origin.")
    profile: Literal["driving", "car", "bike", "foot"] = "driving"
    origin: str = Field("home", max_length=200, description="Place name or 'lat,lon'.")
    destination: str | None = Field(None, max_length=200, description="Default destination.")
    places: dict[str, Place] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _RouteRaw:
    origin: str
    destination: str
    profile: str
    body: Any

    def __len__(self) -> int:
        routes = self.body.get("routes") if isinstance(self.body, dict) else None
        return len(routes) if isinstance(routes, list) else 0


@register_adapter(category="commute", platform="osrm")
class OsrmCommuteAdapter(BaseAdapter[Route]):
    """Travel time and distance from the origin place to a destination."""

    description = "OSRM-compatible routing API (/route/v1/...)"
    offline = False
    Options = OsrmOptions

    def fetch_raw(self, config: Mapping[str, Any]) -> _RouteRaw:
        """Resolve both places and ask the routing API for the fastest route."""
        options = self.parse_options(config, OsrmOptions)
        if not options.destination:
            known = ", ".join(sorted(options.places)) or "none configured"
            raise AdapterError(f"no destination given; pass one of the configured places ({known})")
        origin_name, origin = resolve_place(options.origin, options.places)
        dest_name, dest = resolve_place(options.destination, options.places)
        coords = f"{origin.lon:.6f},{origin.lat:.6f};{dest.lon:.6f},{dest.lat:.6f}"
        url = f"{options.base_url.rstrip('/')}/route/v1/{options.profile}/{coords}"
        body = http_get_json(
            self.http_session(),
            url,
            params={"overview": "false", "alternatives": "false", "steps": "false"},
            timeout=self._http_timeout,
            max_attempts=self._max_attempts,
            sleep=self._sleep,
            ok_statuses=frozenset({400, 404}),
        )
        if not isinstance(body, dict) or body.get("code") != "Ok":
            code = body.get("code") if isinstance(body, dict) else None
            message = body.get("message") if isinstance(body, dict) else None
            raise AdapterError(
                f"no route from {origin_name} to {dest_name}: {code or 'bad answer'}"
                + (f" ({str(message)[:200]})" if message else "")
            )
        return _RouteRaw(origin=origin_name, destination=dest_name, profile=options.profile, body=body)

    def transform(self, raw: _RouteRaw) -> list[Route]:
        """The first (fastest) route."""
        try:
            route = raw.body["routes"][0]
            summary = str(route.get("legs", [{}])[0].get("summary") or "")
            return [
                Route(
                    origin=raw.origin,
                    destination=raw.destination,
                    distance_km=round(float(route["distance"]) / 1000, 2),
                    duration_min=round(float(route["duration"]) / 60, 1),
                    via=tuple(part.strip() for part in summary.split(",") if part.strip()),
                    profile=raw.profile,
                )
            ]
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise AdapterError(f"unexpected answer from the routing API ({type(exc).__name__})") from None

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        """Travel time, distance and route for the requested destination."""
        return normalize_commute(data)


def normalize_commute(data: Any) -> dict[str, Any]:
    """Shape a commute payload (a list of routes) for a tool.

    Raises:
        TypeError, KeyError, ValueError: ``data`` is not a commute payload.
    """
    if not isinstance(data, list):
        raise TypeError("commute payload must be a list of routes")
    if not data:
        return {"routes": [], "alerts": []}
    routes: list[dict[str, Any]] = [
        {
            "origin": str(route["origin"]),
            "destination": str(route["destination"]),
            "travel_time_min": round(float(route["duration_min"])),
            "distance_km": float(route["distance_km"]),
            "via": list(route.get("via") or []),
        }
        for route in data
    ]
    alerts = [
        f"Long commute to {r['destination']}: about {r['travel_time_min']} minutes"
        for r in routes
        if r["travel_time_min"] >= LONG_COMMUTE_MIN
    ]
    return {**routes[0], "routes": routes, "alerts": alerts}
