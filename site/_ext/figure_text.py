"""IPython extension, loaded into the kernels the site build starts: a figure's text says what it shows.

A matplotlib figure's ``text/plain`` is ``<Figure size 640x480 with 1 Axes>``, which tells a
reader who cannot see the picture nothing. In the kernels that execute the chapters for the
website (and only there: site/conf.py loads this through an IPython profile of the build's own),
it is the figure's titles and axis labels instead, and the site uses it as the image's alt text.
Nothing else about the output changes.
"""

from __future__ import annotations

from typing import Any


def _axes_text(ax: Any) -> str:
    title = " ".join(t for t in (ax.get_title("left"), ax.get_title(), ax.get_title("right")) if t)
    labels = [f"{name}: {label}" for name, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())) if label]
    return f"{title or 'untitled panel'}" + (f" ({'; '.join(labels)})" if labels else "")


def describe(fig: Any) -> str:
    """One line: the figure's overall title, then each panel's title and axis labels.

    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.set(title="Latency", xlabel="messages", ylabel="µs")
    >>> describe(fig)
    'Figure: Latency (x: messages; y: µs).'
    """
    suptitle = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    panels = [_axes_text(ax) for ax in fig.get_axes() if ax.get_visible() and ax.axison]
    parts = [part for part in [suptitle, *panels] if part]
    return "Figure: " + ("; ".join(parts) if parts else "a chart without a title") + "."


def _pretty(fig: Any, printer: Any, cycle: bool) -> None:
    printer.text(describe(fig))


def _register(ipython: Any) -> None:
    ipython.display_formatter.formatters["text/plain"].for_type_by_name("matplotlib.figure", "Figure", _pretty)


def load_ipython_extension(ipython: Any) -> None:
    """Describe figures from now on; again before and after every cell, because ``%matplotlib
    inline`` removes every formatter registered for ``Figure`` when a chapter runs it."""
    _register(ipython)
    ipython.events.register("pre_run_cell", lambda *args: _register(ipython))
    ipython.events.register("post_execute", lambda: _register(ipython))
