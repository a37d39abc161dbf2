"""Numbers for people: units, three significant digits, aligned text tables and their HTML.

Every duration the kit prints goes through ``format_seconds`` and every rate
through ``format_rate``, so the same quantity always reads the same way.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._measurement import Measurement

__all__ = ["format_seconds", "format_rate", "format_ratio", "format_interval", "MeasurementTable", "table"]


def _round3(value: float) -> float:
    """``value`` rounded to three significant digits, so a unit is chosen for what will be printed.

    Without it 999.96 µs would be printed in µs, as "1.00e+03 µs".
    """
    return float(f"{value:.3g}") if value and math.isfinite(value) else value


def _sig3(value: float) -> str:
    """``value`` with three significant digits, trailing zeros kept (``2.50``, ``123``, ``1,230``)."""
    value = _round3(value)
    if value >= 1000:
        return f"{value:,.0f}"
    text = f"{value:#.3g}"
    return text.rstrip(".") if "e" not in text else text


def format_seconds(seconds: float) -> str:
    """Format a duration with a unit that keeps 1 to 3 digits before the point.

    >>> format_seconds(1.5e-7), format_seconds(2.346e-5), format_seconds(0.0123), format_seconds(2.0)
    ('150 ns', '23.5 µs', '12.3 ms', '2.00 s')
    >>> format_seconds(0.0009999), format_seconds(9.9996e-7), format_seconds(0.0)
    ('1.00 ms', '1.00 µs', '0.00 ns')
    """
    if seconds != seconds or seconds in (math.inf, -math.inf):
        return str(seconds)
    magnitude = _round3(abs(seconds))
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if magnitude >= scale:
            return f"{'-' if seconds < 0 else ''}{_sig3(magnitude / scale)} {unit}"
    return f"{'-' if seconds < 0 else ''}{_sig3(magnitude / 1e-9)} ns"


def format_rate(per_second: float, unit: str = "ops/s") -> str:
    """Format a throughput with an SI prefix and three significant digits.

    >>> format_rate(312_450), format_rate(1_234_567), format_rate(87.26), format_rate(999_960)
    ('312 k ops/s', '1.23 M ops/s', '87.3 ops/s', '1.00 M ops/s')
    """
    per_second = _round3(per_second)
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_second >= scale:
            return f"{_sig3(per_second / scale)} {prefix} {unit}"
    return f"{_sig3(per_second)} {unit}"


def format_ratio(ratio: float, interval: tuple[float, float] | None = None) -> str:
    """A ratio with as many digits as its interval supports (at most 3 significant), without the "x".

    The last digit printed is the first one the interval leaves uncertain, so
    "19599.87" becomes "19,600" and a ratio known to ±0.3 keeps one decimal.
    Without an interval: three significant digits.

    >>> format_ratio(19599.87, (18_700.0, 20_400.0)), format_ratio(14.27, (13.9, 14.6)), format_ratio(1.073, (1.05, 1.09))
    ('19,600', '14.3', '1.07')
    >>> format_ratio(2.346), format_ratio(1.5, (1.2, 1.9)), format_ratio(0.0123, (0.012, 0.0126))
    ('2.35', '1.5', '0.0123')
    """
    if not math.isfinite(ratio) or ratio <= 0:
        return str(ratio)
    digits = 3
    if interval is not None and all(math.isfinite(x) for x in interval):
        half = (interval[1] - interval[0]) / 2
        if half > 0:
            # significant digits up to (and including) the interval's half-width's leading digit
            digits = max(1, min(3, math.floor(math.log10(ratio)) - math.floor(math.log10(half)) + 1))
            if ratio < 10:
                digits = max(digits, 2)  # "1.1x" not "1x": a ratio near 1 needs its first decimal
    value = float(f"{ratio:.{digits}g}")
    if value >= 100:
        return f"{value:,.0f}"
    decimals = max(0, digits - 1 - math.floor(math.log10(value)))
    return f"{value:.{decimals}f}"


def format_interval(interval: tuple[float, float], marks: Sequence[float] = (1.0,)) -> str:
    """"low–high" with two decimals, more where fewer would put a bound on the other side of a mark.

    A verdict says which side of 1 (and of the negligible band's edges) the interval
    lies on; the printed bounds must agree with it. "1.03x slower (CI 1.00–1.05)"
    reads as touching 1 when the low end was 1.004: printed here as "1.004–1.05".

    >>> format_interval((1.004, 1.052)), format_interval((1.2, 1.3)), format_interval((0.9996, 1.0004))
    ('1.004–1.05', '1.20–1.30', '0.9996–1.0004')
    >>> format_interval((189.6, 209.48)), format_interval((13.94, 14.61))
    ('190–209', '13.9–14.6')
    """
    def one(x: float) -> str:
        if not math.isfinite(x):
            return str(x)
        if abs(x) >= 100:  # three significant digits are plenty, and no mark is near
            return f"{x:,.0f}"
        for decimals in range(1 if abs(x) >= 10 else 2, 7):
            text = f"{x:.{decimals}f}"
            shown = float(text)
            if all((shown > m) == (x > m) and (shown < m) == (x < m) for m in marks):
                return text
        return f"{x:.6f}"

    return f"{one(interval[0])}–{one(interval[1])}"


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f} %"


def _align(rows: list[list[str]]) -> list[str]:
    """Lay out text rows as columns: the first left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
        for r in rows
    ]


def _warnings_html(warnings: Sequence[str], prefix: str = "") -> str:
    if not warnings:
        return ""
    items = "".join(f"<li>{html.escape(prefix + w)}</li>" for w in warnings)
    return (
        "<div style='color:#8a1c00;background:#fff3e0;border-left:4px solid #e65100;padding:4px 8px'>"
        f"<b>⚠ Do not trust these figures yet:</b><ul style='margin:2px 0'>{items}</ul></div>"
    )


@dataclass
class MeasurementTable:
    """Several measurements as one table; ``x fastest`` is each median over the fastest median."""

    measurements: list[Measurement]

    def _header(self) -> list[str]:
        head = ["", "median", "min", "max", "spread", "rel. stdev", "samples", "x fastest"]
        if any(m.ops_per_call != 1 for m in self.measurements):
            head.append("throughput (median)")
        return head

    def _rows(self) -> list[list[str]]:
        fastest = min(m.median for m in self.measurements)
        with_rate = any(m.ops_per_call != 1 for m in self.measurements)
        rows = []
        for m in self.measurements:
            row = [
                m.label or "?", format_seconds(m.median), format_seconds(m.min), format_seconds(m.max),
                _percent(m.spread), _percent(m.rel_stdev), f"{m.repeat}×{m.number:,}",
                f"{m.median / fastest:.2f}" if fastest else "-",
            ]
            if with_rate:
                row.append(format_rate(m.rate) if m.ops_per_call != 1 else "")
            rows.append(row)
        return rows

    def _footer(self) -> list[str]:
        where = {(str(m.interpreter), str(m.machine)) for m in self.measurements}
        gcs = {m.gc_enabled for m in self.measurements}
        lines = [f"interpreter: {i}; machine: {mc}" for i, mc in sorted(where)]
        lines.append("collector: " + ("mixed" if len(gcs) > 1 else ("on" if gcs.pop() else "off")) + " while timing")
        return lines

    def _warnings(self) -> list[str]:
        return [f"{m.label or '?'}: {w}" for m in self.measurements for w in m.warnings]

    def __str__(self) -> str:
        if not self.measurements:
            return "(no measurements)"
        lines = _align([self._header()] + self._rows())
        lines += self._footer()
        lines += [f"WARNING {w}" for w in self._warnings()]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        if not self.measurements:
            return "<p>(no measurements)</p>"
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in self._header())
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:{'left' if i == 0 else 'right'}'>{esc(c)}</td>" for i, c in enumerate(r)) + "</tr>"
            for r in self._rows()
        )
        footer = "<br>".join(esc(line) for line in self._footer())
        return f"<div><table><tr>{head}</tr>{body}</table><p style='font-size:smaller'>{footer}</p>{_warnings_html(self._warnings())}</div>"


def table(measurements: Sequence[Measurement]) -> MeasurementTable:
    """Render several measurements as one table (text in a terminal, HTML in Jupyter).

    >>> from edumatcher.kit import Measurement
    >>> str(table([Measurement.from_samples([1e-3] * 5, label="a")])).splitlines()[1].split()[:3]
    ['a', '1.00', 'ms']
    """
    return MeasurementTable(list(measurements))
