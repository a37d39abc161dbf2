"""What holding n values costs every full collection, timed in a fresh, light process.

A full collection (``gc.collect()``) walks every container the collector tracks,
and for each one visits every reference it holds (the type's ``tp_traverse``), to
find which objects only cycles keep alive. So two things make a held structure
cost the collector something:

* the **tracked objects** it adds (a slotted ``Order`` is one each: it is
  examined, moved between the collector's lists, and its 18 slots visited);
* the **references** its tracked containers hold. A list of a million ints is
  one tracked object, yet a collection still visits its million references (twice:
  once to subtract internal references, once to mark what is reachable) and reads
  each int's type to learn that an int is no container. Cheap per reference, but
  it grows with the length: "one object" is not "free".

``HOLDINGS`` builds n values in a few ways. ``added_pause_worker`` runs in a fresh
process (``edumatcher.kit._worker.run_isolated``): it freezes its own start-up heap
(``gc.freeze``) so collections skip it, then for each ``(holding, n)`` times
``collections`` full collections with nothing kept, builds the holding, times as
many with it alive, and drops it. The difference is what the holding adds to every
full collection of any process that keeps it. This module imports nothing heavy (no
numpy, no matplotlib), so the worker starts fast. Samples are read from the
thread's CPU clock where it is precise, so time the machine gave to other
processes is not charged to a collection.

``added_pauses`` is the parent side: ``HeldCost`` rows with the pause each holding
adds (difference of medians) and its bootstrap interval; ``growth_verdict`` and
``contrast_verdict`` word what the intervals allow.

>>> [name for name in HOLDINGS][:2]
['Order objects, one per item', 'ints in one list (a filled ring)']
>>> worker = added_pause_worker([["ints in one list (a filled ring)", 1_000]], collections=3)
>>> row = worker["rows"][0]
>>> row["holding"], row["n"], row["tracked_added"], len(row["baseline"]), len(row["loaded"])
('ints in one list (a filled ring)', 1000, 1, 3, 3)
"""

from __future__ import annotations

import gc
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from edumatcher.gc_policy import frozen_beyond_startup, unfreeze_to
from edumatcher.model import TIF, Order, OrderStatus, OrderType, SelfMatch, Side

if TYPE_CHECKING:  # the parent's types; the worker never imports them (they pull in numpy)
    from edumatcher.kit import Measurement

__all__ = [
    "ORDERS", "INTS", "HOLDINGS", "COLLECTIONS", "clock", "added_pause_worker", "HeldCost", "added_pauses",
    "difference_interval", "growth_verdict", "contrast_verdict",
]

ORDERS = "Order objects, one per item"
INTS = "ints in one list (a filled ring)"

_ORDER_FIELDS: dict[str, Any] = {
    "id": "o", "symbol": "EDU", "side": Side.BUY, "order_type": OrderType.LIMIT, "tif": TIF.GTC, "qty": 1,
    "price": 10_000, "owner": "ana", "smp": SelfMatch.NONE, "status": OrderStatus.NEW, "remaining_qty": 1,
    "visible_qty": 1,
}


def _orders(n: int) -> list[Order]:
    fields = dict(_ORDER_FIELDS)
    out = []
    for i in range(n):
        fields["id"], fields["price"] = f"o{i}", 10_000 + i % 100
        out.append(Order(**fields))
    return out


HOLDINGS: dict[str, Callable[[int], object]] = {
    ORDERS: _orders,
    # A ring that has wrapped holds n distinct ints (durations, timestamps), not n zeros.
    INTS: lambda n: list(range(n)),
    "deque(maxlen=64) after n appends": lambda n: deque(range(n), maxlen=64),
    "dicts of ints, one per item, in a list": lambda n: [{"qty": i, "price": i} for i in range(n)],
    "tuples of two ints, one per item, in a list": lambda n: [(i, -i) for i in range(n)],
}
"""Ways to hold ``n`` values, by name: each builder returns the structure (the holder keeps it alive)."""

COLLECTIONS = 15
"""Full collections timed with nothing kept, and as many with the holding alive, per row."""


def clock() -> tuple[Callable[[], int], str]:
    """``(read_ns, name)``: the thread's CPU clock if it is precise (Linux, macOS), else ``perf_counter_ns``."""
    if time.get_clock_info("thread_time").resolution <= 1e-6:
        return time.thread_time_ns, "thread CPU time"
    return time.perf_counter_ns, "wall time"


def _time_collections(read_ns: Callable[[], int], k: int) -> list[int]:
    # The timed loop: one full collection per sample. The list is allocated before timing.
    samples = [0] * k
    for i in range(k):
        start = read_ns()
        gc.collect()
        samples[i] = read_ns() - start
    return samples


def _tracked() -> int:
    return len(gc.get_objects())


def added_pause_worker(jobs: Sequence[Sequence[Any]], collections: int = COLLECTIONS) -> dict[str, Any]:
    """The worker: for each ``(holding, n)`` in ``jobs``, collections timed without and with it (ns). Runs anywhere.

    Returns ``{"rows": [...], "python": version, "clock": name}``; each row holds
    the ``baseline`` and ``loaded`` samples in ns and ``tracked_added``, the tracked
    objects the holding added once a collection had untracked what it could.
    """
    for name, _ in jobs:
        if name not in HOLDINGS:
            raise ValueError(f"unknown holding {name!r}; choose one of {list(HOLDINGS)}")
    read_ns, clock_name = clock()
    rows = []
    # Freeze the worker's own heap (its modules, functions, classes: chapter 09's gc.freeze) so that
    # every collection timed here walks only what a row adds: a collection's work is the sum of the
    # work per tracked container, and without the heap in it the baseline is tens of microseconds,
    # so a busy machine's jitter on it cannot pass for a holding's cost.
    others = frozen_beyond_startup()
    if others:  # unfreezing at the end would release them too
        raise RuntimeError(f"{others} objects are already frozen by someone else; refusing to freeze and unfreeze")
    found = gc.get_freeze_count()
    gc.collect()
    gc.freeze()
    try:
        for name, n in jobs:
            baseline = _time_collections(read_ns, collections)
            gc.collect()
            base_objects = _tracked()
            held = HOLDINGS[name](int(n))
            gc.collect()  # untracks the tuples (and, before 3.14, the dicts) holding only atomic values
            added = _tracked() - base_objects
            loaded = _time_collections(read_ns, collections)
            del held
            rows.append({"holding": name, "n": int(n), "tracked_added": added, "baseline": baseline,
                         "loaded": loaded})
    finally:
        unfreeze_to(found)  # 3.12 parks a few immortal objects there at start-up: put them back
    gc.collect()
    return {"rows": rows, "python": sys.version.split()[0], "clock": clock_name}


def difference_interval(loaded: Sequence[float], baseline: Sequence[float], *,
                        confidence: float = 0.95) -> tuple[float, float]:
    """Bootstrap interval of ``median(loaded) - median(baseline)`` (independent samples, percentile method, fixed seed)."""
    import numpy as np

    from edumatcher.kit._compare import _bootstrap

    a, b = np.asarray(loaded, dtype=float), np.asarray(baseline, dtype=float)
    if len(a) < 2 or len(b) < 2:
        raise ValueError("an interval needs at least two samples a side")
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        point = float(np.median(a) - np.median(b))
        return point, point
    bootstrap, seed_arg = _bootstrap()
    result = bootstrap(
        (a, b), lambda x, y, axis=-1: np.median(x, axis=axis) - np.median(y, axis=axis), paired=False,
        vectorized=True, n_resamples=2000, confidence_level=confidence, method="percentile",
        **{seed_arg: np.random.default_rng(13)},
    )
    low, high = result.confidence_interval
    return float(low), float(high)


@dataclass(frozen=True)
class HeldCost:
    """One holding of ``n`` values: full collections without it (``baseline``) and with it (``loaded``), seconds.

    ``added`` is the difference of the medians, ``added_ci`` its 95 % bootstrap
    interval; ``tracked_added`` the tracked objects the holding adds; ``python``
    the worker's interpreter.
    """

    holding: str
    n: int
    tracked_added: int
    baseline: Measurement
    loaded: Measurement
    added_ci: tuple[float, float]
    python: str

    @property
    def added(self) -> float:
        """Seconds the holding adds to a full collection: median with it minus median without."""
        return self.loaded.median - self.baseline.median

    @property
    def per_value_ns(self) -> float:
        """Nanoseconds added per held value."""
        return self.added / self.n * 1e9

    @property
    def added_text(self) -> str:
        """``"+1.23 ms (95 % CI 1.10–1.40)"``."""
        low, high = self.added_ci
        return f"{self.added * 1e3:+,.2f} ms (95 % CI {low * 1e3:,.2f}–{high * 1e3:,.2f})"


def added_pauses(jobs: Sequence[tuple[str, int]], *, collections: int = COLLECTIONS, isolated: bool = True,
                 timeout: float = 120.0) -> list[HeldCost]:
    """Run ``added_pause_worker`` on ``jobs`` in one fresh process (or here) and wrap its rows. O(jobs x build)."""
    from edumatcher.kit import Measurement, run_isolated

    kwargs = {"jobs": [[name, n] for name, n in jobs], "collections": collections}
    if isolated:
        got = run_isolated("edumatcher.chapters.the_java_question.held_values:added_pause_worker", kwargs, timeout=timeout)
    else:
        got = added_pause_worker(**kwargs)
    where = "fresh process" if isolated else "this process"
    out = []
    for row in got["rows"]:
        fields = {"number": 1, "clock": got["clock"]}
        base = Measurement.from_samples([s / 1e9 for s in row["baseline"]], label=f"{where}, nothing kept", **fields)
        loaded = Measurement.from_samples([s / 1e9 for s in row["loaded"]],
                                          label=f"{where}, {row['n']:,} as {row['holding']}", **fields)
        out.append(HeldCost(row["holding"], row["n"], row["tracked_added"], base, loaded,
                            difference_interval(loaded.samples, base.samples), got["python"]))
    return out


def growth_verdict(rows: Sequence[HeldCost]) -> str:
    """A ``verdict:`` line on whether the added pause grows with n, judged from the intervals of successive rows.

    "grows" when each row's interval lies wholly above the previous one's
    (rows in increasing n); otherwise "undetermined". The category depends on the
    intervals only.
    """
    if len(rows) < 2 or any(b.n <= a.n for a, b in zip(rows[:-1], rows[1:], strict=True)):
        raise ValueError("growth_verdict needs two or more rows in increasing n")
    figures = ", ".join(f"{r.added_text} at {r.n:,}" for r in rows)
    if all(b.added_ci[0] > a.added_ci[1] for a, b in zip(rows[:-1], rows[1:], strict=True)):
        return f"verdict: the pause {rows[0].holding} adds to a full collection grows with n\n    {figures}"
    return f"verdict: no growth with n detectable at this noise (intervals overlap)\n    {figures}"


def contrast_verdict(heavy: HeldCost, light: HeldCost) -> str:
    """A ``verdict:`` line: does ``heavy`` add more to a full collection than ``light`` (intervals disjoint)?"""
    first, second = f"{heavy.n:,} {heavy.holding}", f"{light.n:,} {light.holding}"
    figures = f"{heavy.added_text} against {light.added_text}"
    if heavy.added_ci[0] > light.added_ci[1]:
        return f"verdict: {first} add more to every full collection than {second}\n    {figures}"
    if heavy.added_ci[1] < light.added_ci[0]:
        return f"verdict: {first} add less to every full collection than {second}\n    {figures}"
    return f"verdict: no difference detectable at this noise between {first} and {second}\n    {figures}"
