"""The Energy page's charts as inline SVG, drawn on the server: no script, nothing fetched.

Heights are worked out in Decimal and rounded to tenths of a pixel: the figures are
money, and no float comes near them. Every bar carries a ``<title>``: hovering it shows
the exact figure, in any browser, without a script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from html import escape
from typing import Final

WIDTH: Final = 880
HEIGHT: Final = 230
LEFT: Final = 64
BOTTOM: Final = 28
TOP: Final = 14
TENTH: Final = Decimal("0.1")


@dataclass(frozen=True)
class Series:
    """One kind of bar: its name, colour and one value per column."""

    name: str
    colour: str
    values: Sequence[Decimal]
    unit: str = "TRX"


def _px(value: Decimal) -> str:
    return str(value.quantize(TENTH, rounding=ROUND_HALF_UP))


def _nice_top(value: Decimal) -> Decimal:
    """A round number at or above ``value``, for the axis (1, 2 or 5 times a power of 10)."""
    if value <= 0:
        return Decimal(1)
    exponent = value.adjusted()
    for step in (1, 2, 5, 10):
        top = Decimal(step).scaleb(exponent)
        if top >= value:
            return top
    return Decimal(10).scaleb(exponent)  # pragma: no cover - the loop ends at 10


def amount(value: Decimal) -> str:
    """A figure for a label: thousands separated, at most six decimals, no trailing zeros."""
    text = f"{value.normalize():,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def bars(labels: Sequence[str], groups: Sequence[Sequence[Series]], *, title: str,
         every: int = 1) -> str:
    """Columns of bars side by side (each group one bar; a group of several series is one
    stacked bar), one column per label; ``every``: label one column in so many."""
    series = [s for group in groups for s in group]
    count = len(labels)
    top = _nice_top(max((sum((s.values[i] for s in group), Decimal(0))
                         for group in groups for i in range(count)), default=Decimal(0)))
    plot_w, plot_h = Decimal(WIDTH - LEFT - 8), Decimal(HEIGHT - TOP - BOTTOM)
    column = plot_w / max(count, 1)
    bar = column * Decimal("0.8") / max(len(groups), 1)
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
             f"<title>{escape(title)}</title>"]
    for tick in (Decimal(0), top / 2, top):
        y = TOP + plot_h - plot_h * tick / top
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - 8}" y1="{_px(y)}" y2="{_px(y)}" '
                     'class="grid"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{_px(y + 4)}" text-anchor="end" '
                     f'class="tick">{escape(amount(tick))}</text>')
    for i, label in enumerate(labels):
        x0 = LEFT + column * i + column * Decimal("0.1")
        for g, group in enumerate(groups):
            base = Decimal(0)
            for s in group:
                value = s.values[i]
                if value <= 0:
                    continue
                h = plot_h * value / top
                y = TOP + plot_h - plot_h * base / top - h
                parts.append(
                    f'<rect x="{_px(x0 + bar * g)}" y="{_px(y)}" width="{_px(bar)}" '
                    f'height="{_px(h)}" fill="{s.colour}"><title>{escape(label)}: '
                    f'{escape(s.name)} {escape(amount(value))} {s.unit}</title></rect>')
                base += value
        if i % every == 0 or i == count - 1:
            x = LEFT + column * i + column / 2
            parts.append(f'<text x="{_px(x)}" y="{HEIGHT - 10}" text-anchor="middle" '
                         f'class="tick">{escape(label)}</text>')
    parts.append("</svg>")
    legend = "".join(f'<span class="key"><i style="background:{s.colour}"></i>'
                     f"{escape(s.name)}</span>" for s in series)
    return f'<figure>{"".join(parts)}<figcaption>{legend}</figcaption></figure>'


def meter(rows: Sequence[tuple[str, int, str]], *, title: str, unit: str) -> str:
    """Horizontal bars on one scale: ``(label, value, colour)`` each."""
    top = _nice_top(Decimal(max((v for _, v, _ in rows), default=0)))
    row_h, width = 30, Decimal(WIDTH - 260)
    height = row_h * len(rows) + 8
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
             f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
             f"<title>{escape(title)}</title>"]
    for n, (label, value, colour) in enumerate(rows):
        y = 4 + n * row_h
        w = width * Decimal(value) / top
        parts.append(f'<text x="210" y="{y + 19}" text-anchor="end" class="label">'
                     f"{escape(label)}</text>")
        parts.append(f'<rect x="220" y="{y + 4}" width="{_px(w)}" height="20" '
                     f'fill="{colour}"><title>{escape(label)}: {value:,} {unit}</title></rect>')
        parts.append(f'<text x="{_px(Decimal(226) + w)}" y="{y + 19}" class="label">'
                     f"{value:,} {escape(unit)}</text>")
    parts.append("</svg>")
    return "".join(parts)
