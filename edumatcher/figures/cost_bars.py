"""Bar charts of measured costs: medians with their min-max range, and savings side by side.

Two shapes the chapters on representation, construction and serialisation need:

* ``cost_bars``: one bar per ``Measurement`` (its median per operation), a whisker
  from its fastest to its slowest sample, so the reader sees the spread next to
  the difference; a ``Comparison`` gives two bars, a above b, and the ratio a/b
  with its confidence interval written beside the b bar;
* ``saving_bars``: one bar per technique, the time it saves per order, so a
  macro saving and a handful of micro ones can be compared at a glance.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from ..comparison import Comparison
from ..measure import Measurement

__all__ = ["cost_bars", "saving_bars", "time_unit"]


def time_unit(seconds: float) -> tuple[float, str]:
    """The scale and unit that show ``seconds`` with 1 to 3 digits before the point.

    >>> time_unit(2.5e-7), time_unit(3e-5)
    ((1000000000.0, 'ns'), (1000000.0, 'µs'))
    """
    magnitude = abs(seconds)
    if magnitude >= 1:
        return 1.0, "s"
    if magnitude >= 1e-3:
        return 1e3, "ms"
    if magnitude >= 1e-6:
        return 1e6, "µs"
    return 1e9, "ns"


def cost_bars(
    measurements: Sequence[Measurement | Comparison], *, title: str = "", per_op: bool = True, log: bool = False,
    colours: Sequence[str] | None = None,
) -> Figure:
    """Horizontal bars of each measurement's median, whiskers from min to max, first one at the top.

    Each item is a ``Measurement`` (one bar) or a ``Comparison`` (two bars, its
    ``a`` then its ``b``, with "a/b = ratio (95 % CI lo–hi)" written beside the ``b`` bar).
    ``colours`` gives one colour per bar, in the same order. ``per_op`` divides by
    ``ops_per_call`` (a pass over 1 000 messages shows per message). ``log`` uses a
    logarithmic axis, for costs that differ by orders of magnitude.
    """
    if not measurements:
        raise ValueError("cost_bars needs at least one measurement")
    flat: list[Measurement] = []
    notes: dict[int, str] = {}  # index in flat of a comparison's b bar -> the ratio written beside it
    for item in measurements:
        if isinstance(item, Comparison):
            flat += [item.a, item.b]
            notes[len(flat) - 1] = f"a/b = {item.ratio:.2f} ({item.ci_text})"
        else:
            flat.append(item)
    ms = list(reversed(flat))
    ratio_at = {len(flat) - 1 - i: text for i, text in notes.items()}  # positions after reversing
    div = [m.ops_per_call if per_op else 1 for m in ms]
    scale, unit = time_unit(max(m.median / d for m, d in zip(ms, div, strict=True)))
    med = [m.median / d * scale for m, d in zip(ms, div, strict=True)]
    low = [(m.median - m.min) / d * scale for m, d in zip(ms, div, strict=True)]
    high = [(m.max - m.median) / d * scale for m, d in zip(ms, div, strict=True)]
    fig = Figure(figsize=(8.5, 0.42 * len(ms) + 1.3), layout="constrained")
    ax = fig.add_subplot()
    palette = list(reversed(colours)) if colours else ["#1565c0"] * len(ms)
    ax.barh([m.label or f"#{i}" for i, m in enumerate(ms)], med, xerr=[low, high], color=palette,
            alpha=0.8, capsize=3, error_kw={"elinewidth": 1, "ecolor": "#37474f"})
    for y, v in enumerate(med):
        text = f"{v:,.3g} {unit}" + (f"   {ratio_at[y]}" if y in ratio_at else "")
        ax.annotate(text, xy=(v, y), xytext=(4, 6), textcoords="offset points", fontsize=8)
    if log:
        ax.set_xscale("log")
    else:
        ax.set_xlim(0, max(m + h for m, h in zip(med, high, strict=True)) * 1.2)
    ax.set_xlabel(f"median time per {'operation' if per_op else 'call'} ({unit}); whisker: fastest to slowest sample")
    ax.tick_params(axis="y", labelsize=9)
    ax.set_title(title)
    return fig


def saving_bars(savings: Sequence[tuple[str, float]], *, title: str = "", highlight: Sequence[str] = ()) -> Figure:
    """Bars of ``(label, seconds saved per order)``, largest first; labels in ``highlight`` drawn dark.

    A negative saving (the "optimisation" made things slower here) is drawn to the
    left of zero, so it cannot be mistaken for a gain.
    """
    if not savings:
        raise ValueError("saving_bars needs at least one saving")
    items = sorted(savings, key=lambda s: s[1])
    scale, unit = time_unit(max(abs(s) for _, s in items) or 1e-9)
    values = [s * scale for _, s in items]
    fig = Figure(figsize=(8.5, 0.42 * len(items) + 1.3), layout="constrained")
    ax = fig.add_subplot()
    colours = ["#1565c0" if label in highlight else "#90caf9" for label, _ in items]
    ax.barh([label for label, _ in items], values, color=colours)
    ax.axvline(0, color="#37474f", linewidth=0.8)
    for y, v in enumerate(values):
        ax.annotate(f"{v:,.3g} {unit}", xy=(v, y), xytext=(4 if v >= 0 else -4, 0), textcoords="offset points",
                    va="center", ha="left" if v >= 0 else "right", fontsize=8)
    top = max(values + [0.0])
    ax.set_xlim(min(values + [0.0]) * 1.3, top * 1.25 if top > 0 else 1)
    ax.set_xlabel(f"time saved per order ({unit}, median of each side)")
    ax.tick_params(axis="y", labelsize=9)
    ax.set_title(title)
    return fig
