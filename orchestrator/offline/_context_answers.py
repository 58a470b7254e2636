"""Sentences from the user's context (calendar, weather, commute, finances), not raw JSON.

Each category of a ``user_context`` result is written from the fields the context service
serves (see ``shared/adapters/_*_view.py``): "Dentist appointment: today (Thursday 26
November), 10:30-11:15, at Clinica Dentaria Baixa." A payload of an unknown shape falls
back to a short JSON excerpt, so nothing is ever invented.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_CURRENCY = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥"}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_WORD = re.compile(r"[\w'-]+")
_TOPIC_STOPWORDS = frozenset(
    """a an the my our your is are was were what whats what's who when where which do does did
    you i me to of for about in on at and or please tell show give list any have has had be
    with next today today's tomorrow tomorrow's this week day days coming upcoming there
    calendar calendars schedule agenda meeting meetings appointment appointments event events
    busy free time weather forecast commute finance finances spending spend briefing brief
    how long much many get drive am can could would will should s daily morning evening summary
    overview everything all status update need know like going happening plan plans""".split()  # noqa: SIM905
)
MAX_LISTED = 6


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _clip(value: Any, limit: int) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def topic_words(question: str) -> list[str]:
    """The words of a calendar question that name what to look for ("dentist")."""
    words = [w.lower().strip("'-") for w in _WORD.findall(question[:2000])]
    words = [w[:-2] if w.endswith("'s") else w for w in words]
    return list(dict.fromkeys(w for w in words if len(w) > 2 and w not in _TOPIC_STOPWORDS))[:5]


def long_date(day: date, today: date | None = None) -> str:
    """ "Friday 27 November" (with "today"/"tomorrow" when it is)."""
    text = f"{day:%A} {day.day} {day:%B}"
    if today is not None and day == today:
        return f"today ({text})"
    if today is not None and day == today + timedelta(days=1):
        return f"tomorrow ({text})"
    return text


def _parse_date(text: Any) -> date | None:
    try:
        return date.fromisoformat(str(text)[:10])
    except ValueError:
        return None


def _today(data: Mapping[str, Any]) -> date | None:
    try:
        now = datetime.fromisoformat(str(data.get("now")))
    except ValueError:
        return None
    try:
        zone = ZoneInfo(str(data.get("timezone")))
    except (ZoneInfoNotFoundError, ValueError):
        return now.date()
    return now.astimezone(zone).date() if now.tzinfo else now.date()


def _number(value: Any) -> str:
    """14.2 -> "14.2", 17.0 -> "17"."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:.1f}".rstrip("0").rstrip(".")


def money(amount: Any, currency: Any = None, *, signed: bool = False) -> str:
    """ "2713.17", "EUR" -> "€2,713.17" (``signed``: "+€25.00", "-€58.90")."""
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        return f"{amount} {currency or ''}".strip()
    sign = "-" if value < 0 else ("+" if signed and value > 0 else "")
    digits = f"{abs(value):,.2f}"
    symbol = _CURRENCY.get(str(currency or "").upper())
    return f"{sign}{symbol}{digits}" if symbol else f"{sign}{digits} {currency or ''}".rstrip()


def _dates_in(text: str) -> str:
    """ISO dates in ``text`` written out: "2026-10-28" -> "28 October"."""

    def spell(match: re.Match[str]) -> str:
        day = _parse_date(match.group(0))
        return f"{day.day} {day:%B}" if day else match.group(0)

    return _ISO_DATE.sub(spell, text)


# ---------------------------------------------------------------------------- calendar


def _event_text(event: Mapping[str, Any], *, with_place: bool = True) -> str:
    title = _clip(event.get("title") or "(no title)", 80)
    if event.get("all_day"):
        when = "all day"
    elif event.get("start"):
        when = f"{event['start']}-{event['end']}" if event.get("end") else str(event["start"])
    else:
        when = ""
    place = f" at {_clip(event['location'], 60)}" if with_place and event.get("location") else ""
    return f"{title} {when}{place}".replace("  ", " ").strip()


def _calendar(data: Mapping[str, Any], question: str) -> list[str]:
    today = _today(data)
    events = [(today, e) for e in data.get("today") or [] if isinstance(e, Mapping)]
    events += [(_parse_date(e.get("date")), e) for e in data.get("upcoming") or [] if isinstance(e, Mapping)]
    topic = topic_words(question)
    if topic:
        return _calendar_topic(events, topic, today, data.get("next_event"))
    lowered = question.lower()
    if "tomorrow" in lowered and today is not None:
        day = today + timedelta(days=1)
        chosen = [e for d, e in events if d == day]
        if not chosen:
            return [f"Nothing is on your calendar {long_date(day, today)}."]
        return [f"{_capital(long_date(day, today))}: " + "; ".join(_event_text(e) for e in chosen) + "."]
    lines: list[str] = []
    todays = [e for d, e in events if d == today]
    label = _capital(long_date(today, today)) if today else "Today"
    if todays:
        count = f"{len(todays)} event{'s' if len(todays) != 1 else ''}"
        lines.append(f"{label} you have {count}: " + "; ".join(_event_text(e) for e in todays[:MAX_LISTED]) + ".")
    else:
        lines.append(f"{label} your calendar is free.")
    upcoming: dict[date, list[Mapping[str, Any]]] = {}
    for when, event in events:
        if when is not None and today is not None and when > today:
            upcoming.setdefault(when, []).append(event)
    if upcoming:
        days = list(upcoming.items())[:3]
        parts = [f"{long_date(d, today)}: " + ", ".join(_event_text(e, with_place=False) for e in es) for d, es in days]
        lines.append("Coming up: " + "; ".join(parts) + ".")
    return lines


def _calendar_topic(
    events: Sequence[tuple[date | None, Mapping[str, Any]]], topic: list[str], today: date | None, next_event: Any
) -> list[str]:
    def matches(event: Mapping[str, Any]) -> bool:
        text = f"{event.get('title') or ''} {event.get('location') or ''}".lower()
        return any(word in text for word in topic)

    found = [(d, e) for d, e in events if matches(e)]
    if not found:
        words = " or ".join(repr(w) for w in topic)
        line = f"I found nothing about {words} on your calendar in the coming days."
        if isinstance(next_event, Mapping):
            day = _parse_date(next_event.get("date"))
            line += f" Your next event is {_event_text(next_event)}" + (f", {long_date(day, today)}." if day else ".")
        return [line]
    lines = []
    for day, event in found[:3]:
        when = long_date(day, today) if day else "soon"
        title = _clip(event.get("title") or "(no title)", 80)
        hours = "all day" if event.get("all_day") else "-".join(str(event[k]) for k in ("start", "end") if event.get(k))
        place = f", at {_clip(event['location'], 60)}" if event.get("location") else ""
        lines.append(f"{title}: {when}, {hours}{place}.")
    if len(found) > 3:
        lines.append(f"({len(found) - 3} more in the coming days.)")
    return lines


# ---------------------------------------------------------------------------- weather, commute


def _day_weather(day: Mapping[str, Any]) -> str:
    parts = [str(day.get("conditions") or "no forecast")]
    if day.get("min_c") is not None and day.get("max_c") is not None:
        parts.append(f"{_number(day['min_c'])} to {_number(day['max_c'])} °C")
    if day.get("rain_chance_pct") is not None:
        rain = f"{_number(day['rain_chance_pct'])}% chance of rain"
        if day.get("rain_mm"):
            rain += f" ({_number(day['rain_mm'])} mm)"
        parts.append(rain)
    return ", ".join(parts)


def _weather(data: Mapping[str, Any], question: str) -> list[str]:
    where = f" at {data['location']}" if data.get("location") else ""
    lines: list[str] = []
    now = data.get("now")
    if isinstance(now, Mapping) and now.get("temperature_c") is not None:
        conditions = now.get("conditions") or "unknown conditions"
        text = f"Weather{where} now: {conditions}, {_number(now['temperature_c'])} °C"
        if now.get("feels_like_c") is not None:
            text += f" (feels like {_number(now['feels_like_c'])} °C)"
        if now.get("wind_kmh") is not None:
            text += f", wind {_number(now['wind_kmh'])} km/h"
        lines.append(text + ".")
    today = data.get("today")
    if isinstance(today, Mapping):
        lines.append(f"Today: {_day_weather(today)}.")
    start = _parse_date(today.get("date")) if isinstance(today, Mapping) else None
    for day in (data.get("next_days") or [])[:2]:
        if isinstance(day, Mapping):
            when = long_date(_parse_date(day.get("date")) or date.min, start)
            lines.append(f"{_capital(when.split(' (')[0])}: {_day_weather(day)}.")
    if not lines and {"now", "today"} & set(data):
        lines.append(f"No weather data{where} right now.")
    return lines


def _commute(data: Mapping[str, Any], question: str) -> list[str]:
    routes = [r for r in data.get("routes") or [] if isinstance(r, Mapping)]
    if not routes:
        return ["I found no route for that trip."]
    lines = []
    for route in routes[:3]:
        text = f"From {route.get('origin')} to {route.get('destination')}: about {route.get('travel_time_min')} minutes"
        if route.get("distance_km") is not None:
            text += f" by car ({_number(route['distance_km'])} km)"
        via = [str(v) for v in route.get("via") or []][:3]
        if via:
            text += " via " + " and ".join(via)
        lines.append(text + ".")
    return lines


# ---------------------------------------------------------------------------- finance


def _transaction(tx: Mapping[str, Any]) -> str:
    day = _parse_date(tx.get("date"))
    when = f"{day.day} {day:%B}" if day else str(tx.get("date") or "")
    return f"{when} {_clip(tx.get('description') or '', 40)} {money(tx.get('amount'), tx.get('currency'), signed=True)}"


def _finance(data: Mapping[str, Any], question: str) -> list[str]:
    period = _dates_in(str(data.get("period") or "the recent period"))
    lines = []
    for row in (data.get("totals") or [])[:3]:
        if isinstance(row, Mapping):
            cur = row.get("currency")
            lines.append(
                f"In the {period}: {money(row.get('expenses'), cur)} spent and {money(row.get('income'), cur)} "
                f"received (net {money(row.get('net'), cur, signed=True)}) over {row.get('count')} transactions."
            )
    if not lines:
        lines.append(f"No transactions in the {period}.")
    top = [r for r in data.get("top_expense_categories") or [] if isinstance(r, Mapping)][:3]
    if top:
        currency = next((r.get("currency") for r in data.get("totals") or [] if isinstance(r, Mapping)), None)
        spent = [f"{r.get('category')} {money(r.get('spent'), currency)}" for r in top]
        lines.append("Top spending: " + ", ".join(spent) + ".")
    recent = [t for t in data.get("recent_transactions") or [] if isinstance(t, Mapping)][:3]
    if recent:
        lines.append("Latest: " + "; ".join(_transaction(t) for t in recent) + ".")
    return lines


def finance_query_answer(data: Mapping[str, Any]) -> str:
    """A finance query (search, transactions, summary, categories) in sentences."""
    result = data.get("result")
    if data.get("status") not in (None, "ok", "partial") or not isinstance(result, Mapping):
        reason = _clip(data.get("reason") or "no details", 200)
        return f"Your finances are {data.get('status') or 'unavailable'}: {reason}."
    if isinstance(result.get("transactions"), list):
        txs = [t for t in result["transactions"] if isinstance(t, Mapping)]
        search = (result.get("filters") or {}).get("search") if isinstance(result.get("filters"), Mapping) else None
        what = f" matching {search!r}" if search else ""
        head = f"{result.get('total', len(txs))} transactions{what}"
        if not txs:
            return f"I found no transactions{what}."
        return (
            f"{head}; page {result.get('page', 1)} of {result.get('pages', 1)}: "
            + "; ".join(_transaction(t) for t in txs[:MAX_LISTED])
            + "."
        )
    if isinstance(result.get("totals"), list):
        found = result.get("period")
        period: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        span = f"{period.get('from')} to {period.get('to')}" if period.get("from") else "no transactions"
        view = {
            **result,
            "period": f"period {span}",
            "top_expense_categories": [
                {"category": r.get("key"), "spent": r.get("expenses")}
                for r in result.get("top_expense_categories") or []
                if isinstance(r, Mapping)
            ],
        }
        return " ".join(_finance(view, ""))
    if isinstance(result.get("categories"), list):
        rows = [r for r in result["categories"] if isinstance(r, Mapping)][:MAX_LISTED]
        return (
            "Spending by category: "
            + ", ".join(
                f"{r.get('category') or r.get('key')} {money(r.get('expenses') or r.get('spent'), r.get('currency'))}"
                for r in rows
            )
            + "."
        )
    return "Finance summary: " + _clip(json.dumps(result, ensure_ascii=False), 500)


# ---------------------------------------------------------------------------- the whole result

_WRITERS: dict[str, Callable[[Mapping[str, Any], str], list[str]]] = {
    "calendar": _calendar,
    "weather": _weather,
    "commute": _commute,
    "finance": _finance,
}


_SHAPES = {  # a payload with none of these keys is not one the writer knows
    "calendar": {"today", "upcoming", "next_event"},
    "weather": {"now", "today", "next_days"},
    "commute": {"routes"},
    "finance": {"totals", "recent_transactions"},
}


def context_answer(data: Mapping[str, Any], question: str) -> str:
    """The answer for a ``user_context`` summary (``data["categories"]``)."""
    lines: list[str] = []
    missing: list[str] = []
    for name, entry in data["categories"].items():
        if not isinstance(entry, Mapping):
            continue
        status = entry.get("status")
        if status == "not_configured":
            missing.append(str(name))
        elif status not in ("ok", "partial"):
            reason = _clip(entry.get("reason") or "no reason given", 200)
            lines.append(f"Your {name} is {status or 'unavailable'} right now: {reason.rstrip('.')}.")
        elif name in _WRITERS and _SHAPES[name] & set(entry):
            try:
                written = _WRITERS[name](entry, question)
            except (TypeError, ValueError, KeyError, AttributeError):
                written = []
            lines += written or [_excerpt(name, entry)]  # an unknown shape: an excerpt, nothing invented
        else:
            lines.append(_excerpt(name, entry))
    if missing:
        names = ", ".join(missing[:-1]) + f" or {missing[-1]}" if len(missing) > 1 else missing[0]
        lines.append(f"(No {names} source is set up.)")
    alerts = [a for a in data.get("alerts") or [] if isinstance(a, str)]
    if alerts:
        lines.append("Heads-up: " + "; ".join(_clip(a, 150) for a in alerts[:5]) + ".")
    return "\n".join(lines) if lines else "Your context is empty."


def _excerpt(name: Any, entry: Mapping[str, Any]) -> str:
    details = {k: v for k, v in entry.items() if k not in ("status", "reason")}
    return f"{str(name).capitalize()}: {_clip(json.dumps(details, ensure_ascii=False), 300)}"
