"""Server-drawn charts: the right shapes, round scales, every text escaped."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from xml.etree import ElementTree

from orchestrator.ui._svg import Bar, Series, TimePoint, bar_chart, line_chart, stacked_columns

T0 = datetime(2026, 11, 20, 9, tzinfo=timezone.utc)
NS = "{http://www.w3.org/2000/svg}"


def _parse(svg: str) -> ElementTree.Element:
    return ElementTree.fromstring(svg)  # well-formed XML, or this raises


def test_bars_are_proportional_and_their_texts_escaped() -> None:
    svg = str(bar_chart([Bar("main", 400, "400 tokens"), Bar("<script>alert(1)</script>", 100, "a & b")]))
    assert "<script>" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    root = _parse(svg)
    widths = [float(rect.get("width", "0")) for rect in root.iter(f"{NS}rect")]
    assert widths[0] == 4 * widths[1]
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "a & b" in texts


def test_a_bar_may_link_and_the_link_is_escaped() -> None:
    svg = str(bar_chart([Bar("coder", 1, "1", href='/routing/coder"onload="x')]))
    root = _parse(svg)
    links = list(root.iter(f"{NS}a"))
    assert links[0].get("href") == '/routing/coder"onload="x'  # one attribute value, not two attributes


def test_stacked_columns_put_failures_on_successes_with_a_round_scale() -> None:
    points = [TimePoint(T0, 30, 0), TimePoint(T0 + timedelta(hours=1), 20, 17)]
    root = _parse(str(stacked_columns(points, title="calls")))
    good = [r for r in root.iter(f"{NS}rect") if r.get("class") == "good"]
    bad = [r for r in root.iter(f"{NS}rect") if r.get("class") == "bad"]
    assert len(good) == 2
    assert len(bad) == 1
    labels = [t.text for t in root.iter(f"{NS}text")]
    assert "50" in labels  # 37 rounds up to 50
    assert any("37 calls, 17 failed" in (r.findtext(f"{NS}title") or "") for r in bad)
    assert float(good[0].get("height", "0")) > float(good[1].get("height", "0"))


def test_line_chart_leaves_gaps_where_there_is_no_value() -> None:
    hours = [T0 + timedelta(hours=i) for i in range(5)]
    p50 = Series("p50", "p50", [(h, v) for h, v in zip(hours, [10.0, 12.0, None, 8.0, 9.0], strict=True)])
    p95 = Series("p95", "p95", [(h, v) for h, v in zip(hours, [40.0, 80.0, None, 30.0, 35.0], strict=True)])
    root = _parse(str(line_chart([p50, p95], unit="ms", title="latency")))
    lines = list(root.iter(f"{NS}polyline"))
    assert [p.get("class") for p in lines] == ["p50", "p50", "p95", "p95"]
    assert all(len(p.get("points", "").split()) == 2 for p in lines)
    assert len(list(root.iter(f"{NS}circle"))) == 8
    assert "100 ms" in [t.text for t in root.iter(f"{NS}text")]


def test_an_empty_window_says_so() -> None:
    svg = str(stacked_columns([], title="calls"))
    assert "no calls in this window" in svg
    assert re.search(r"<rect", svg) is None
