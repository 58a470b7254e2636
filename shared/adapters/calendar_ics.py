"""Calendar from iCalendar (RFC 5545): a local ``.ics`` file or an ``.ics`` URL.

Recurring events (RRULE, RDATE, EXDATE, moved occurrences with RECURRENCE-ID) are expanded
with ``recurring-ical-events`` within a window around today, in the configured time zone;
times keep their own zone across DST changes. Parsing needs the ``context`` extra
(``icalendar``, ``recurring-ical-events``), imported on first use.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, model_validator
from pydantic_core import to_jsonable_python

from shared.adapters._calendar_view import calendar_payload, normalize_calendar
from shared.adapters._http import http_get, safe_origin
from shared.adapters._sources import decode_text, file_token, find_line, read_file_bytes
from shared.adapters.base import AdapterError, AdapterOptions, BaseAdapter
from shared.adapters.records import CalendarEvent
from shared.adapters.registry import register_adapter

__all__ = ["IcsCalendarAdapter", "IcsOptions"]

# Properties whose breakage makes an event unusable.
_ESSENTIAL = frozenset({None, "DTSTART", "DTEND", "DURATION", "RRULE", "RDATE", "EXDATE"})
_QUOTED = re.compile(r"'([^']{1,200})'")
_CHUNK = timedelta(days=14)
#: Occurrences one calendar may expand to within its window.
MAX_OCCURRENCES = 20_000
_TOO_FREQUENT = frozenset({"SECONDLY", "MINUTELY"})


class IcsOptions(AdapterOptions):
    """Options of :class:`IcsCalendarAdapter` (exactly one of ``path`` and ``url``)."""

    path: str | None = Field(None, description="Path of a local .ics file.")
    url: str | None = Field(None, description="http(s) URL of an .ics feed.")
    name: str | None = Field(None, description="Calendar name shown with its events.")
    timezone: str = Field("UTC", description="IANA zone for floating times and the window.")
    past_days: int = Field(1, ge=0, le=366, description="Days before today to expand.")
    horizon_days: int = Field(60, ge=1, le=800, description="Days after today to expand.")

    @model_validator(mode="after")
    def _one_source(self) -> IcsOptions:
        if (self.path is None) == (self.url is None):
            raise ValueError("give exactly one of 'path' or 'url'")
        return self


@dataclass(frozen=True, slots=True)
class _IcsRaw:
    source: str
    text: str
    calendar: Any
    zone: tzinfo
    start: date
    end: date
    name: str | None
    recurring_uids: frozenset[str]

    def __len__(self) -> int:
        return sum(1 for _ in self.calendar.walk("VEVENT"))


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise AdapterError(f"unknown time zone {name!r} (use an IANA name such as 'Europe/Lisbon')") from None


@register_adapter(category="calendar", platform="ics")
class IcsCalendarAdapter(BaseAdapter[CalendarEvent]):
    """Events from an iCalendar file or feed, recurring events expanded."""

    description = "iCalendar (.ics) file or URL; recurring events expanded"
    offline = True
    Options = IcsOptions

    def fetch_raw(self, config: Mapping[str, Any]) -> _IcsRaw:
        """Read and parse the calendar; malformed files raise with file and line."""
        options = self.parse_options(config, IcsOptions)
        zone = _zone(options.timezone)
        if options.path is not None:
            source = Path(options.path).name
            data = read_file_bytes(options.path)
        else:
            url = options.url or ""
            if not url.startswith(("http://", "https://")):
                raise AdapterError("the calendar url must start with http:// or https://")
            source = safe_origin(url)
            data = http_get(
                self.http_session(),
                url,
                timeout=self._http_timeout,
                max_attempts=self._max_attempts,
                sleep=self._sleep,
            )
        text = decode_text(data, source=source)
        calendar = _parse_calendar(text, source)
        today = self._clock().astimezone(zone).date()
        name = options.name or _text(calendar.get("X-WR-CALNAME"))
        return _IcsRaw(
            source=source,
            text=text,
            calendar=calendar,
            zone=zone,
            start=today - timedelta(days=options.past_days),
            end=today + timedelta(days=options.horizon_days + 1),
            name=name,
            recurring_uids=frozenset(
                str(event.get("UID"))
                for event in calendar.walk("VEVENT")
                if event.get("RRULE") is not None or event.get("RDATE") is not None
            ),
        )

    def transform(self, raw: _IcsRaw) -> list[CalendarEvent]:
        """Expand recurrences within the window and build sorted :class:`CalendarEvent` s."""
        import recurring_ical_events

        query = recurring_ical_events.of(raw.calendar, keep_recurrence_attributes=True)
        events: list[CalendarEvent] = []
        seen: set[tuple[str, str]] = set()
        chunk_start = raw.start
        # Expand in chunks so that a hostile rule (thousands of occurrences a day) stops at
        # MAX_OCCURRENCES instead of exhausting memory.
        while chunk_start < raw.end:
            chunk_end = min(chunk_start + _CHUNK, raw.end)
            try:
                occurrences = query.between(chunk_start, chunk_end)
            except Exception as exc:
                # recurring-ical-events raises its own errors and ValueError for bad rules.
                raise AdapterError(f"cannot expand recurring events: {exc}", source=raw.source) from None
            for component in occurrences:
                start = component.get("DTSTART")
                key = (str(component.get("UID")), repr(start.dt) if start is not None else "")
                if key not in seen:
                    seen.add(key)
                    events.append(_event(component, raw))
            if len(events) > MAX_OCCURRENCES:
                raise AdapterError(
                    f"more than {MAX_OCCURRENCES} event occurrences in the window; lower horizon_days",
                    source=raw.source,
                )
            chunk_start = chunk_end
        events.sort(key=lambda event: _sort_key(event.start))
        return events

    def cache_token(self, config: Mapping[str, Any]) -> Hashable | None:
        """The file's mtime and size for a local file; None for URLs."""
        path = config.get("path")
        return file_token(path) if isinstance(path, str) else None

    def result_metadata(self, raw: _IcsRaw) -> dict[str, Any]:
        """Source name, calendar name and the expansion window."""
        return {
            "source": raw.source,
            "calendar": raw.name,
            "window": [raw.start.isoformat(), raw.end.isoformat()],
        }

    @classmethod
    def merge_records(cls, batches: Sequence[Sequence[CalendarEvent]]) -> list[CalendarEvent]:
        """Events of every calendar, sorted by start."""
        merged = [event for batch in batches for event in batch]
        merged.sort(key=lambda event: _sort_key(event.start))
        return merged

    @classmethod
    def context_payload(cls, records: Sequence[CalendarEvent], *, now: datetime, options: Mapping[str, Any]) -> Any:
        """Events from the start of today up to ``options['days']`` (default 7) ahead."""
        return to_jsonable_python(calendar_payload(records, now=now, options=options))

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        """Today's events, the next event, the coming days, and conflict/soon alerts."""
        return normalize_calendar(data)


def _parse_calendar(text: str, source: str) -> Any:
    import icalendar

    try:
        calendar: Any = icalendar.Calendar.from_ical(text)
    except ValueError as exc:
        raise AdapterError(
            f"not a valid iCalendar file: {_first_line(exc)}",
            source=source,
            line=_line_of(text, str(exc)),
        ) from None
    if isinstance(calendar, list) or calendar.name != "VCALENDAR":
        raise AdapterError("not a valid iCalendar file: no VCALENDAR", source=source, line=1)
    for component in calendar.walk("VEVENT"):
        rules = component.get("RRULE")
        for rule in rules if isinstance(rules, list) else [rules] if rules is not None else []:
            freq = next(iter(rule.get("FREQ") or []), None)
            if freq in _TOO_FREQUENT:
                uid = _text(component.get("UID")) or "?"
                raise AdapterError(
                    f"event {uid!r} repeats {str(freq).lower()}, which is not supported",
                    source=source,
                    line=find_line(text, f"FREQ={freq}"),
                )
    for component in calendar.walk():
        for prop, message in getattr(component, "errors", []):
            if prop in _ESSENTIAL:
                line = _line_of(text, message)
                label = f"{prop}: " if prop else ""
                raise AdapterError(f"{label}{message}", source=source, line=line)
    return calendar


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def _line_of(text: str, message: str) -> int | None:
    quoted = _QUOTED.search(message)
    if quoted:
        return find_line(text, quoted.group(1))
    if ": " in message:
        return find_line(text, message.rsplit(": ", 1)[1])
    return None


def _text(value: Any) -> str | None:
    return str(value) if value is not None else None


def _when(value: Any, zone: tzinfo) -> datetime | date | None:
    if value is None:
        return None
    when = value.dt
    if isinstance(when, datetime):
        if when.tzinfo is None:
            return when.replace(tzinfo=zone)
        return when.astimezone(zone)
    if isinstance(when, date):
        return when
    return None


def _event(component: Any, raw: _IcsRaw) -> CalendarEvent:
    start = _when(component.get("DTSTART"), raw.zone)
    if start is None:
        uid = _text(component.get("UID")) or "?"
        raise AdapterError(f"event {uid!r} has no DTSTART", source=raw.source, line=find_line(raw.text, uid))
    end = _when(component.get("DTEND"), raw.zone)
    if end is None and component.get("DURATION") is not None:
        end = start + component.get("DURATION").dt
    return CalendarEvent(
        uid=_text(component.get("UID")) or "",
        title=_text(component.get("SUMMARY")) or "(no title)",
        start=start,
        end=end,
        all_day=not isinstance(start, datetime),
        location=_text(component.get("LOCATION")),
        description=_text(component.get("DESCRIPTION")),
        calendar=raw.name,
        recurring=str(component.get("UID")) in raw.recurring_uids,
    )


def _sort_key(when: datetime | date) -> tuple[date, int, float]:
    # All-day events first within their day, then timed ones by instant.
    if isinstance(when, datetime):
        return (when.date(), 1, when.timestamp())
    return (when, 0, 0.0)
