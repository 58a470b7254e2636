"""IcsCalendarAdapter: parsing, recurrence expansion across DST, time zones, bad files."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from shared.adapters import CalendarEvent, IcsCalendarAdapter, calendar_ics

LISBON = ZoneInfo("Europe/Lisbon")


def _fetch(path: Path, now: datetime, **options: object) -> tuple[bool, str | None, list[CalendarEvent]]:
    adapter = IcsCalendarAdapter(clock=lambda: now)
    result = adapter.fetch({"path": str(path), "timezone": "Europe/Lisbon", **options})
    return result.success, result.error, result.data


def test_sample_calendar_expands_recurring_events(examples: Path, clock: Callable[[], datetime]) -> None:
    adapter = IcsCalendarAdapter(clock=clock)
    result = adapter.fetch({"path": str(examples / "calendar.ics"), "timezone": "Europe/Lisbon", "horizon_days": 6})
    assert result.success, result.error
    assert result.category == "calendar"
    assert result.platform == "ics"
    assert result.raw_count == 8  # VEVENT components in the file
    assert result.metadata["calendar"] == "Work and home"
    thursday = [e for e in result.data if e.start == datetime(2026, 11, 26, 9, 30, tzinfo=LISBON)]
    assert [e.title for e in thursday] == ["Team stand-up"]
    assert thursday[0].recurring is True
    dentist = next(e for e in result.data if e.title == "Dentist appointment")
    assert dentist.recurring is False
    assert dentist.end == datetime(2026, 11, 26, 11, 15, tzinfo=LISBON)
    # The EXDATE on Christmas is outside this window; the all-day holiday is inside.
    holiday = next(e for e in result.data if e.all_day)
    assert holiday.start == date(2026, 12, 1)
    assert holiday.end == date(2026, 12, 2)


def test_recurring_event_keeps_wall_clock_time_across_dst(examples: Path) -> None:
    # Lisbon leaves summer time on Sunday 25 October 2026.
    ok, error, events = _fetch(
        examples / "calendar.ics",
        datetime(2026, 10, 22, 12, tzinfo=timezone.utc),
        past_days=0,
        horizon_days=6,
    )
    assert ok, error
    standups = [e for e in events if e.title == "Team stand-up"]
    assert [e.start.isoformat() for e in standups] == [
        "2026-10-22T09:30:00+01:00",
        "2026-10-23T09:30:00+01:00",
        "2026-10-26T09:30:00+00:00",
        "2026-10-27T09:30:00+00:00",
        "2026-10-28T09:30:00+00:00",
    ]


def test_utc_event_is_shown_in_the_configured_zone(examples: Path) -> None:
    ok, _, events = _fetch(examples / "calendar.ics", datetime(2026, 11, 26, tzinfo=timezone.utc), horizon_days=3)
    assert ok
    call = next(e for e in events if e.title == "Call with New York team")
    assert isinstance(call.start, datetime)
    assert call.start.utcoffset() == timedelta(0)
    assert call.start.hour == 15
    ok, _, events = _fetch(
        examples / "calendar.ics",
        datetime(2026, 11, 26, tzinfo=timezone.utc),
        horizon_days=3,
        timezone="America/New_York",
    )
    call = next(e for e in events if e.title == "Call with New York team")
    assert call.start.isoformat() == "2026-11-27T10:00:00-05:00"


def test_moved_occurrence_replaces_the_original(examples: Path) -> None:
    ok, _, events = _fetch(
        examples / "calendar.ics",
        datetime(2026, 1, 21, tzinfo=timezone.utc),
        past_days=0,
        horizon_days=2,
    )
    assert ok
    titles = [(e.title, e.start) for e in events if "Ana" in e.title]
    assert titles == [("1:1 with Ana (moved)", datetime(2026, 1, 22, 16, 0, tzinfo=LISBON))]


def test_exdate_removes_an_occurrence(examples: Path) -> None:
    ok, _, events = _fetch(
        examples / "calendar.ics",
        datetime(2026, 12, 24, tzinfo=timezone.utc),
        past_days=0,
        horizon_days=1,
    )
    assert ok
    days = sorted({e.start.date() for e in events if e.title == "Team stand-up"})  # type: ignore[union-attr]
    assert days == [date(2026, 12, 24)]


def _broken(tmp_path: Path, examples: Path, old: str, new: str) -> Path:
    text = (examples / "calendar.ics").read_text(encoding="utf-8").replace(old, new)
    path = tmp_path / "broken.ics"
    path.write_text(text, encoding="utf-8")
    return path


def test_bad_datetime_names_file_and_line(tmp_path: Path, examples: Path, clock: Callable[[], datetime]) -> None:
    path = _broken(
        tmp_path,
        examples,
        "DTSTART;TZID=Europe/Lisbon:20261126T103000",
        "DTSTART;TZID=Europe/Lisbon:2026-11-26 10:30",
    )
    ok, error, events = _fetch(path, clock())
    line = path.read_text().splitlines().index("DTSTART;TZID=Europe/Lisbon:2026-11-26 10:30") + 1
    assert not ok
    assert events == []
    assert error is not None
    assert error.startswith(f"broken.ics line {line}: DTSTART")


def test_unparseable_content_line_names_file_and_line(
    tmp_path: Path, examples: Path, clock: Callable[[], datetime]
) -> None:
    path = _broken(tmp_path, examples, "SUMMARY:Gym", "SUMMARY Gym without colon")
    ok, error, _ = _fetch(path, clock())
    line = path.read_text().splitlines().index("SUMMARY Gym without colon") + 1
    assert not ok
    assert error is not None
    assert error.startswith(f"broken.ics line {line}:")


def test_not_a_calendar(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = tmp_path / "notes.ics"
    path.write_text("hello\nworld\n", encoding="utf-8")
    ok, error, _ = _fetch(path, clock())
    assert not ok
    assert error is not None
    assert error.startswith("notes.ics line 1: not a valid iCalendar file")


def test_missing_file_and_bad_options(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    ok, error, _ = _fetch(tmp_path / "nope.ics", clock())
    assert (ok, error) == (False, "nope.ics: file not found")
    result = IcsCalendarAdapter(clock=clock).fetch({"path": "a.ics", "url": "http://x/"})
    assert not result.success
    assert result.error is not None
    assert "exactly one of 'path' or 'url'" in result.error
    result = IcsCalendarAdapter(clock=clock).fetch({"path": "a.ics", "colour": "red"})
    assert result.error == "invalid options for calendar/ics: colour: Extra inputs are not permitted"
    result = IcsCalendarAdapter(clock=clock).fetch({"path": str(tmp_path), "timezone": "Mars/Olympus"})
    assert result.error == "unknown time zone 'Mars/Olympus' (use an IANA name such as 'Europe/Lisbon')"


def test_binary_garbage_is_reported_not_raised(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = tmp_path / "garbage.ics"
    path.write_bytes(b"BEGIN:VCALENDAR\n\xff\xfe\x00\x01\n")
    ok, error, _ = _fetch(path, clock())
    assert not ok
    assert error == "garbage.ics line 2: not valid utf-8 text"


def _calendar(tmp_path: Path, *events: str) -> Path:
    body = "\n".join(f"BEGIN:VEVENT\nDTSTAMP:20260101T000000Z\n{event}\nEND:VEVENT" for event in events)
    path = tmp_path / "cal.ics"
    path.write_text(f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//t//EN\n{body}\nEND:VCALENDAR\n")
    return path


def test_hostile_frequency_is_refused_with_its_line(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = _calendar(tmp_path, "UID:flood\nDTSTART:20261126T000000Z\nRRULE:FREQ=SECONDLY\nSUMMARY:flood")
    ok, error, _ = _fetch(path, clock())
    assert not ok
    assert error == "cal.ics line 8: event 'flood' repeats secondly, which is not supported"


def test_occurrence_explosion_is_capped(
    tmp_path: Path, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(calendar_ics, "MAX_OCCURRENCES", 100)  # fault injection: a small cap
    path = _calendar(tmp_path, "UID:hourly\nDTSTART:20261101T000000Z\nRRULE:FREQ=HOURLY\nSUMMARY:every hour")
    ok, error, _ = _fetch(path, clock())
    assert not ok
    assert error == "cal.ics: more than 100 event occurrences in the window; lower horizon_days"


def test_event_across_expansion_chunks_appears_once(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    # The window is expanded 14 days at a time; this trip spans a chunk boundary.
    path = _calendar(tmp_path, "UID:trip\nDTSTART;VALUE=DATE:20261206\nDTEND;VALUE=DATE:20261212\nSUMMARY:Trip")
    ok, error, events = _fetch(path, clock(), horizon_days=30)
    assert ok, error
    assert [(e.title, e.start, e.end) for e in events] == [("Trip", date(2026, 12, 6), date(2026, 12, 12))]
