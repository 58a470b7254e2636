"""Charts drawn on the server as SVG: no chart library, no script, nothing to load.

Every text placed in a chart (labels, tooltips) is escaped here; the result is
:class:`markupsafe.Markup` so the templates insert it as is. Sizes are in SVG user units and
the charts scale to their container (``viewBox`` and ``width="100%"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup

__all__ = ["Bar", "Series", "TimePoint", "bar_chart", "line_chart", "stacked_columns"]

_PAD_LEFT = 56
_PAD_RIGHT = 12
_PAD_TOP = 12
_PAD_BOTTOM = 28


@dataclass(frozen=True)
class Bar:
    """One bar of a horizontal bar chart."""

    label: str
    value: float
    note: str = ""
    href: str | None = None


@dataclass(frozen=True)
class TimePoint:
    """One time slot of a column chart: ``good`` and ``bad`` stack (e.g. successes, failures)."""

    start: datetime
    good: int
    bad: int


@dataclass(frozen=True)
class Series:
    """One line of a line chart (None values leave a gap)."""

    name: str
    css_class: str
    points: Sequence[tuple[datetime, float | None]]


def bar_chart(bars: Sequence[Bar], *, width: int = 720, row: int = 26, label_width: int = 150) -> Markup:
    """Horizontal bars, longest = full width; each with its label and note."""
    height = max(row * len(bars), row)
    most = max((b.value for b in bars), default=0.0) or 1.0
    span = width - label_width - 190
    parts = [_open(width, height, "bar chart")]
    for i, bar in enumerate(bars):
        y = i * row
        length = max(span * bar.value / most, 1.0 if bar.value else 0.0)
        label = _text(label_width - 8, y + row * 0.65, bar.label, anchor="end", css="label")
        if bar.href is not None:
            label = Markup('<a href="{}">{}</a>').format(bar.href, label)
        parts.append(label)
        parts.append(
            Markup('<rect class="bar" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>').format(
                label_width, _n(y + row * 0.2), _n(length), _n(row * 0.6), f"{bar.label}: {bar.note}"
            )
        )
        parts.append(_text(label_width + length + 6, y + row * 0.65, bar.note, css="value"))
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def stacked_columns(points: Sequence[TimePoint], *, width: int = 720, height: int = 180, title: str = "") -> Markup:
    """Columns over time: ``good`` at the bottom, ``bad`` on top; y axis from 0 to the busiest slot."""
    top = max((p.good + p.bad for p in points), default=0)
    scale = _nice(top)
    plot_w, plot_h = width - _PAD_LEFT - _PAD_RIGHT, height - _PAD_TOP - _PAD_BOTTOM
    parts = [_open(width, height, title), *_y_axis(scale, plot_h, width, "")]
    slot = plot_w / max(len(points), 1)
    for i, point in enumerate(points):
        x = _PAD_LEFT + i * slot + slot * 0.1
        w = max(slot * 0.8, 0.5)
        good_h = plot_h * point.good / scale
        bad_h = plot_h * point.bad / scale
        base = _PAD_TOP + plot_h
        tip = f"{point.start:%Y-%m-%d %H:00} UTC: {point.good + point.bad} calls, {point.bad} failed"
        for css, y, h in (("good", base - good_h, good_h), ("bad", base - good_h - bad_h, bad_h)):
            if h > 0:
                parts.append(
                    Markup('<rect class="{}" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>').format(
                        css, _n(x), _n(y), _n(w), _n(h), tip
                    )
                )
    parts += _x_axis([p.start for p in points], plot_w, height)
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def line_chart(
    series: Sequence[Series], *, width: int = 720, height: int = 180, unit: str = "ms", title: str = ""
) -> Markup:
    """Lines over shared time slots (the first series' times), y axis from 0."""
    values = [v for s in series for _, v in s.points if v is not None]
    scale = _nice(max(values, default=0.0))
    plot_w, plot_h = width - _PAD_LEFT - _PAD_RIGHT, height - _PAD_TOP - _PAD_BOTTOM
    parts = [_open(width, height, title), *_y_axis(scale, plot_h, width, unit)]
    times = [t for t, _ in series[0].points] if series else []
    step = plot_w / max(len(times) - 1, 1)
    for line in series:
        runs: list[list[str]] = [[]]  # a gap (None) starts a new run
        for i, (moment, value) in enumerate(line.points):
            if value is None:
                runs.append([])
                continue
            x = _PAD_LEFT + (i * step if len(times) > 1 else plot_w / 2)
            y = _PAD_TOP + plot_h - plot_h * value / scale
            runs[-1].append(f"{_n(x)},{_n(y)}")
            parts.append(
                Markup('<circle class="{}" cx="{}" cy="{}" r="2.5"><title>{}</title></circle>').format(
                    line.css_class, _n(x), _n(y), f"{line.name} {moment:%Y-%m-%d %H:00} UTC: {value:g} {unit}"
                )
            )
        for run in runs:
            if len(run) > 1:
                parts.append(Markup('<polyline class="{}" points="{}"/>').format(line.css_class, " ".join(run)))
    parts += _x_axis(times, plot_w, height)
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def _open(width: int, height: int, title: str) -> Markup:
    return Markup(
        '<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="100%" role="img" '
        'aria-label="{}"><title>{}</title>'
    ).format(width, height, title, title)


def _text(x: float, y: float, text: str, *, anchor: str = "start", css: str = "") -> Markup:
    return Markup('<text class="{}" x="{}" y="{}" text-anchor="{}">{}</text>').format(css, _n(x), _n(y), anchor, text)


def _y_axis(scale: float, plot_h: float, width: int, unit: str) -> list[Markup]:
    parts = []
    for fraction in (0.0, 0.5, 1.0):
        y = _PAD_TOP + plot_h - plot_h * fraction
        parts.append(
            Markup('<line class="grid" x1="{}" x2="{}" y1="{}" y2="{}"/>').format(
                _PAD_LEFT, width - _PAD_RIGHT, _n(y), _n(y)
            )
        )
        label = f"{scale * fraction:g}{(' ' + unit) if unit and fraction else ''}"
        parts.append(_text(_PAD_LEFT - 6, y + 4, label, anchor="end", css="axis"))
    return parts


def _x_axis(times: Sequence[datetime], plot_w: float, height: int) -> list[Markup]:
    if not times:
        return [_text(_PAD_LEFT + plot_w / 2, height - 8, "no calls in this window", anchor="middle", css="axis")]
    first, last = times[0], times[-1]
    return [
        _text(_PAD_LEFT, height - 8, f"{first:%Y-%m-%d %H:00}", css="axis"),
        _text(_PAD_LEFT + plot_w, height - 8, f"{last:%Y-%m-%d %H:00} UTC", anchor="end", css="axis"),
    ]


def _nice(top: float) -> float:
    """A round axis maximum at or above ``top`` (1, 2 or 5 times a power of ten)."""
    if top <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(top))
    for step in (1, 2, 5, 10):
        if top <= step * power:
            return float(step * power)
    return float(10 * power)  # pragma: no cover - the loop always returns


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value % 1 else str(int(value))
