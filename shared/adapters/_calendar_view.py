"""The calendar category's context payload and its tool-facing summary (pure functions)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta, tzinfo
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from shared.adapters.records import CalendarEvent

MAX_PAYLOAD_EVENTS = 300
MAX_UPCOMING = 15
SOON_MINUTES = 60


def _zone(name: Any) -> ZoneInfo:
    try:
        return ZoneInfo(str(name or "UTC"))
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def _bounded_int(value: Any, default: int, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return min(max(number, low), high)


def calendar_payload(records: Sequence[CalendarEvent], *, now: datetime, options: Mapping[str, Any]) -> dict[str, Any]:
    """Events from the start of today (in ``options['timezone']``) to ``days`` ahead."""
    zone = _zone(options.get("timezone"))
    days = _bounded_int(options.get("days"), 7, 1, 60)
    local_now = now.astimezone(zone)
    first_day = local_now.date()
    last_day = first_day + timedelta(days=days)
    day_start = datetime.combine(first_day, datetime.min.time(), zone)
    window_end = datetime.combine(last_day + timedelta(days=1), datetime.min.time(), zone)
    selected: list[CalendarEvent] = []
    for event in records:
        if _in_window(event, first_day, last_day, day_start, window_end):
            selected.append(event)
    return {
        "timezone": str(zone),
        "now": local_now.isoformat(),
        "days": days,
        "events": selected[:MAX_PAYLOAD_EVENTS],
        "truncated": len(selected) > MAX_PAYLOAD_EVENTS,
    }


def _in_window(
    event: CalendarEvent, first_day: date, last_day: date, day_start: datetime, window_end: datetime
) -> bool:
    start, end = event.start, event.end
    if not isinstance(start, datetime):
        last = end - timedelta(days=1) if isinstance(end, date) and not isinstance(end, datetime) else start
        return start <= last_day and max(start, last) >= first_day
    finish = end if isinstance(end, datetime) else start
    return start < window_end and finish >= day_start


def _parse_when(value: Any, zone: tzinfo) -> datetime | date:
    text = str(value)
    if len(text) == 10:
        return date.fromisoformat(text)
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    return when.astimezone(zone)


def _hhmm(when: datetime | date | None) -> str | None:
    return when.strftime("%H:%M") if isinstance(when, datetime) else None


def normalize_calendar(data: Any) -> dict[str, Any]:
    """Today's events, the next event, the coming days and alerts, from a calendar payload.

    Raises:
        TypeError, KeyError, ValueError: ``data`` is not a calendar payload.
    """
    if not isinstance(data, Mapping):
        raise TypeError("calendar payload must be an object")
    zone = _zone(data.get("timezone"))
    now = _parse_when(data["now"], zone)
    if not isinstance(now, datetime):
        raise ValueError("calendar payload 'now' must be a datetime")
    today = now.date()
    today_items: list[dict[str, Any]] = []
    upcoming: list[dict[str, Any]] = []
    timed_today: list[tuple[datetime, datetime, str]] = []
    next_event: dict[str, Any] | None = None
    for raw in data["events"]:
        start = _parse_when(raw["start"], zone)
        end = _parse_when(raw["end"], zone) if raw.get("end") else None
        item = {
            "title": str(raw.get("title") or "(no title)"),
            "start": _hhmm(start),
            "end": _hhmm(end),
            "all_day": not isinstance(start, datetime),
            "location": raw.get("location"),
        }
        day = start.date() if isinstance(start, datetime) else start
        if day <= today:
            today_items.append(item)
        elif len(upcoming) < MAX_UPCOMING:
            upcoming.append({"date": day.isoformat(), "weekday": day.strftime("%a"), **item})
        if isinstance(start, datetime):
            if day == today:
                timed_today.append((start, end if isinstance(end, datetime) else start, item["title"]))
            if next_event is None and start > now:
                minutes = int((start - now).total_seconds() // 60)
                next_event = {**item, "date": day.isoformat(), "starts_in_minutes": minutes}
    return {
        "timezone": str(zone),
        "now": now.isoformat(),
        "today": today_items,
        "next_event": next_event,
        "upcoming": upcoming,
        "counts": {"today": len(today_items), "window": len(data["events"])},
        "alerts": _alerts(timed_today, next_event),
    }


def _alerts(timed_today: list[tuple[datetime, datetime, str]], next_event: dict[str, Any] | None) -> list[str]:
    alerts: list[str] = []
    timed_today.sort()
    for (start_a, end_a, title_a), (start_b, _, title_b) in pairwise(timed_today):
        if start_b < end_a:
            alerts.append(
                f"Calendar conflict: '{title_a}' ({start_a:%H:%M}-{end_a:%H:%M}) overlaps "
                f"'{title_b}' (starts {start_b:%H:%M})"
            )
    if next_event is not None and 0 <= next_event["starts_in_minutes"] <= SOON_MINUTES:
        alerts.append(
            f"'{next_event['title']}' starts in {next_event['starts_in_minutes']} minutes"
            + (f" at {next_event['location']}" if next_event.get("location") else "")
        )
    return alerts
