"""The report's charts: inline SVG bar charts drawn from counts, and the numbers behind them
(histogram bins, cluster-size buckets, axis steps). No script, no plotting library; every text
escaped."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

# Bars of the similarity histogram: 20 bins of 0.05 over [0, 1].
JACCARD_BINS = 20
NEAR_COLOR = "#2f6fb0"


def histogram(values: np.ndarray, bins: int = JACCARD_BINS) -> list[int]:
    """Counts of values in ``bins`` equal bins over [0, 1]; 1.0 falls in the last bin.

    >>> histogram(np.array([0.0, 0.51, 0.55, 1.0]), bins=4)
    [1, 0, 2, 1]
    """
    # round first: 0.55 * 20 is 11.000000000000002 in floating point, and must land in bin 11
    index = np.floor(np.round(np.asarray(values, dtype=np.float64) * bins, 9)).astype(np.int64)
    return [int(c) for c in np.bincount(np.clip(index, 0, bins - 1), minlength=bins)]


def size_buckets(sizes: np.ndarray) -> tuple[list[str], list[int]]:
    """Clusters counted by size: one bar per size up to 10, then powers of two.

    >>> size_buckets(np.array([2, 2, 3, 12, 40]))
    (['2', '3', '11-16', '33-64'], [2, 1, 1, 1])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if len(sizes) == 0:
        return [], []
    # below 11 every size gets its bar; above, bucket (2^(j-1), 2^j] so a long tail stays readable
    upper = np.where(sizes <= 10, sizes, 2 ** np.ceil(np.log2(sizes)).astype(np.int64))
    keys, counts = np.unique(upper, return_counts=True)
    labels = [str(u) if u <= 10 else f"{max(u // 2 + 1, 11)}-{u}" for u in keys.tolist()]
    return labels, [int(c) for c in counts]


def nice_step(top: float, ticks: int = 5) -> float:
    """A round axis step (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks up to top.

    >>> nice_step(860), nice_step(7), nice_step(0.9)
    (200, 2, 0.2)
    """
    if top <= 0:
        return 1
    raw = top / ticks
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            step = m * power
            return int(step) if step >= 1 else round(step, 12)
    return 10 * power  # pragma: no cover


def esc(value: Any) -> str:
    """HTML-escape anything shown on the page, quotes included (safe in text and attributes)."""
    return html.escape(str(value), quote=True)


def number_label(value: float) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def bar_chart(
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float], str]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    chart_id: str,
    width: int = 720,
    height: int = 260,
) -> str:
    """A stacked vertical bar chart as inline SVG; each bar segment carries its value and a tooltip.

    Args:
        labels: one label per bar, left to right.
        series: (name, values per bar, colour) stacked bottom to top.
    """
    left, right, top, bottom = 56, 12, 28, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(s[1][i] for s in series) for i in range(len(labels))]
    peak = max(totals, default=0)
    step = nice_step(peak)
    axis_top = step * max(1, math.ceil(peak / step)) if peak > 0 else 1
    scale = plot_h / axis_top
    parts = [
        f'<svg id="{esc(chart_id)}" class="chart" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(title)}">',
        f"<title>{esc(title)}</title>",
        f'<text x="{left}" y="16" class="chart-title">{esc(title)}</text>',
    ]
    tick = 0.0
    while tick <= axis_top + 1e-9:
        y = top + plot_h - tick * scale
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
        )
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">'
            f"{esc(number_label(tick))}</text>"
        )
        tick += step
    slot = plot_w / max(len(labels), 1)
    bar_w = max(slot * 0.8, 1)
    every = max(1, math.ceil(len(labels) / 20))  # at most about 20 axis labels
    for i, label in enumerate(labels):
        x = left + i * slot + (slot - bar_w) / 2
        base: float = top + plot_h
        for name, values, color in series:
            value: float = values[i]
            h = value * scale
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{base - h:.1f}" width="{bar_w:.1f}" '
                f'height="{h:.1f}" fill="{color}" data-series="{esc(name)}" '
                f'data-label="{esc(label)}" data-value="{value:g}">'
                f"<title>{esc(label)}: {esc(number_label(value))} {esc(name)}</title></rect>"
            )
            base -= h
        if i % every == 0:
            cx = left + i * slot + slot / 2
            parts.append(
                f'<text x="{cx:.1f}" y="{top + plot_h + 14}" class="tick" text-anchor="end" '
                f'transform="rotate(-40 {cx:.1f} {top + plot_h + 14})">{esc(label)}</text>'
            )
    parts.append(
        f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" '
        'class="axis"/>'
    )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" class="axis-label" '
        f'text-anchor="middle">{esc(x_label)}</text>'
    )
    parts.append(
        f'<text x="14" y="{top + plot_h / 2:.1f}" class="axis-label" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">{esc(y_label)}</text>'
    )
    legend_x = width - right
    for name, _values, color in reversed(series):
        if len(series) < 2:
            break
        legend_x -= 8 + 7 * len(name) + 16
        parts.append(f'<rect x="{legend_x}" y="8" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{legend_x + 14}" y="17" class="tick">{esc(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)
