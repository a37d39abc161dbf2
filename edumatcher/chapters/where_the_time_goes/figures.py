"""A profile's top entries as a bar chart of own-time share, with the 1 % gate drawn."""

from __future__ import annotations

from matplotlib.figure import Figure

from .profiling import ONE_PERCENT, ProfileReport

__all__ = ["profile_bars"]


def _short(name: str, width: int = 48) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def profile_bars(report: ProfileReport, *, top: int = 12, title: str = "") -> Figure:
    """Horizontal bars of the ``top`` rows' own-time share, largest at the top; a line at 1 %.

    Bars at or above the 1 % gate are dark, those below it pale: the picture
    answers "which of these may an optimisation target?" at a glance.
    """
    rows = list(report.rows[:top])
    if not rows:
        raise ValueError("profile_bars needs a report with at least one row")
    fig = Figure(figsize=(8.5, 0.32 * len(rows) + 1.3), layout="constrained")
    ax = fig.add_subplot()
    names = [_short(r.function) for r in reversed(rows)]
    shares = [r.own_share * 100 for r in reversed(rows)]
    colours = ["#1565c0" if s >= ONE_PERCENT * 100 else "#bbdefb" for s in shares]
    ax.barh(names, shares, color=colours)
    ax.axvline(ONE_PERCENT * 100, color="#c62828", linestyle="--", linewidth=1.2)
    ax.annotate("1 % gate", xy=(ONE_PERCENT * 100, 1), xycoords=("data", "axes fraction"), xytext=(4, -12),
                textcoords="offset points", color="#c62828", fontsize=9)
    for y, s in enumerate(shares):
        ax.annotate(f"{s:.1f} %", xy=(s, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xlabel("share of own time in the profile (%)")
    ax.tick_params(axis="y", labelsize=8)
    ax.set_xlim(0, max(shares) * 1.18)
    ax.set_title(title or f"Where the time goes: top {len(rows)} functions by own time")
    return fig
