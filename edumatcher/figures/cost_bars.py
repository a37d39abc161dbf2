"""Bar charts of measured costs: medians with their min-max range, and savings side by side.

Three shapes the chapters on representation, construction and serialisation need:

* ``cost_bars``: one bar per ``Measurement`` (its median per operation), a whisker
  from its fastest to its slowest sample, so the reader sees the spread next to
  the difference; a ``Comparison`` gives two bars, a above b, and the ratio a/b
  with its confidence interval written beside the b bar. On a logarithmic axis a
  bar has no zero to start from, so its length would mean nothing: there each
  median is a dot with its whisker instead;
* ``ratio_bars``: one bar per ``Comparison``, its ratio a/b on a linear axis that
  starts at 0, with the 95 % confidence interval as the whisker and a line at 1,
  for pairs whose absolute costs differ by orders of magnitude;
* ``saving_bars``: one bar per technique, the time it saves per order, so a
  macro saving and a handful of micro ones can be compared at a glance.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..comparison import Comparison
from ..measure import Measurement

__all__ = ["cost_bars", "ratio_bars", "saving_bars", "time_unit", "FASTER_B_COLOUR", "SLOWER_B_COLOUR",
           "UNDECIDED_COLOUR"]

FASTER_B_COLOUR = "#1565c0"
"""``ratio_bars``: a pair whose second form (b) is the cheaper one."""
SLOWER_B_COLOUR = "#ef6c00"
"""``ratio_bars``: a pair whose second form (b) is the dearer one."""
UNDECIDED_COLOUR = "#90a4ae"
"""``ratio_bars``: a pair the same to within the band, or undetermined."""


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
    colours: Sequence[str] | None = None, legend: Sequence[tuple[str, str]] = (),
) -> Figure:
    """Horizontal bars of each measurement's median, whiskers from min to max, first one at the top.

    Each item is a ``Measurement`` (one bar) or a ``Comparison`` (two bars, its
    ``a`` then its ``b``, with "a/b = ratio (95 % CI lo–hi)" written beside the ``b`` bar).
    ``colours`` gives one colour per bar, in the same order; ``legend`` is a list of
    ``(colour, meaning)`` drawn as a legend, so what a colour means is stated by the
    caller beside the colours it chose. ``per_op`` divides by ``ops_per_call`` (a pass
    over 1 000 messages shows per message). ``log`` uses a logarithmic axis, for
    costs that differ by orders of magnitude, and draws each median as a dot (a bar
    on a log axis starts nowhere, so its length would mislead); to compare pairs of
    very different sizes, ``ratio_bars`` is usually the clearer figure.
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
    if colours is not None and len(colours) != len(ms):
        raise ValueError(f"colours gives {len(colours)} colours for {len(ms)} bars")
    palette = list(reversed(colours)) if colours else ["#1565c0"] * len(ms)
    labels = [m.label or f"#{i}" for i, m in enumerate(ms)]
    if log:
        ax.set_xscale("log")
        ax.errorbar(med, range(len(ms)), xerr=[low, high], fmt="none", ecolor="#37474f", elinewidth=1, capsize=3)
        ax.scatter(med, range(len(ms)), c=palette, s=40, zorder=3)
        ax.set_yticks(range(len(ms)), labels)
        ax.grid(axis="x", which="both", alpha=0.3)
    else:
        ax.barh(labels, med, xerr=[low, high], color=palette,
                alpha=0.8, capsize=3, error_kw={"elinewidth": 1, "ecolor": "#37474f"})
        ax.set_xlim(0, max(m + h for m, h in zip(med, high, strict=True)) * 1.2)
    for y, v in enumerate(med):
        text = f"{v:,.3g} {unit}" + (f"   {ratio_at[y]}" if y in ratio_at else "")
        ax.annotate(text, xy=(v, y), xytext=(4, 6), textcoords="offset points", fontsize=8)
    if legend:
        ax.legend(handles=[Patch(color=c, label=text) for c, text in legend], fontsize=8, loc="lower right")
    if log:
        ax.set_xlim(right=max(med) * 4)  # room for the labels right of the last dot
    scale_note = ", log scale" if log else ""
    ax.set_xlabel(f"median time per {'operation' if per_op else 'call'} ({unit}{scale_note}); "
                  "whisker: fastest to slowest sample")
    ax.tick_params(axis="y", labelsize=9)
    ax.set_title(title)
    return fig


def ratio_bars(comparisons: Sequence[Comparison], *, title: str = "") -> Figure:
    """One horizontal bar per comparison: its ratio a/b (linear axis from 0), whisker the 95 % CI, first at the top.

    Each bar is labelled "a / b" with both forms' labels, and its ratio and interval
    are written beside it. A line at 1 marks equal cost, and the comparison's
    "same" band around it is shaded. The colour is the comparison's outcome (b
    cheaper, b dearer, or no difference shown), and the legend names exactly the
    colours drawn.
    """
    if not comparisons:
        raise ValueError("ratio_bars needs at least one comparison")
    items = list(reversed(comparisons))
    ratios = [c.ratio for c in items]
    low = [c.ratio - c.ci[0] for c in items]
    high = [c.ci[1] - c.ratio for c in items]
    by_outcome = {"slower": FASTER_B_COLOUR, "faster": SLOWER_B_COLOUR}  # outcome words describe a against b
    colours = [by_outcome.get(c.outcome, UNDECIDED_COLOUR) for c in items]
    fig = Figure(figsize=(8.5, 0.55 * len(items) + 1.5), layout="constrained")
    ax = fig.add_subplot()
    ax.barh([f"{c.a.label}\n/ {c.b.label}" for c in items], ratios, xerr=[low, high], color=colours, alpha=0.85,
            capsize=3, error_kw={"elinewidth": 1, "ecolor": "#37474f"})
    band = items[0].negligible
    ax.axvspan(1 / (1 + band), 1 + band, color="#cfd8dc", alpha=0.6, zorder=0)
    ax.axvline(1, color="#37474f", linewidth=0.8)
    for y, c in enumerate(items):
        ax.annotate(f"{c.ratio:.2f}x ({c.ci_text})", xy=(c.ci[1], y), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=8)
    ax.set_xlim(0, max(c.ci[1] for c in items) * 1.35)
    shown = dict.fromkeys(reversed(colours))  # legend in reading order, top pair first
    meaning = {FASTER_B_COLOUR: "second form (b) is cheaper", SLOWER_B_COLOUR: "second form (b) is dearer",
               UNDECIDED_COLOUR: "same, or undetermined"}
    ax.legend(handles=[Patch(color=c, label=meaning[c]) for c in shown]
              + [Patch(color="#cfd8dc", label=f"'same' band (±{band * 100:.0f} %)")], fontsize=8, loc="lower right")
    ax.set_xlabel("ratio of medians a / b (how many times b's time a takes); whisker: 95 % confidence interval")
    ax.tick_params(axis="y", labelsize=8)
    ax.set_title(title)
    return fig


def saving_bars(savings: Sequence[tuple[str, float]], *, title: str = "", highlight: Sequence[str] = (),
                per: str = "order") -> Figure:
    """Bars of ``(label, seconds saved per <per>)``, largest first; labels in ``highlight`` drawn dark.

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
    ax.set_xlabel(f"time saved per {per} ({unit}, median of each side)")
    ax.tick_params(axis="y", labelsize=9)
    ax.set_title(title)
    return fig
