"""``bench book``: what the full ``OrderBook`` costs over the bare heap book, and over ``NaiveBook``.

Method
------
* **Workload**: ``workloads.standard(N, seed)``, N = 1,000,000 operations (20,000
  with ``--quick``): about 70 % new GTC limit orders within ±20 ticks of the mid on
  both sides (so many cross and trade), about 30 % cancels of random live orders.
  ``BareBook`` accepts exactly this kind of flow.
* **One sample is one pass** over the whole workload on a new, empty book. The
  ``Order`` objects are built fresh before every pass, outside the timed region
  (a book mutates the orders it is given, so they cannot be reused); the book and
  its orders are torn down after the clock stops.
* **Interleaved**: OrderBook, BareBook, OrderBook, BareBook, ... after one warm-up
  pass each, so a drift of the machine during the run touches both alike.
* **The collector is off while timing**; young objects are collected between passes. A
  full collection would otherwise walk the harness's own million operations and
  bill that to whichever book happened to be running (the bimodal-benchmark trap).
  The collector's cost is the subject of ``bench gc``.
* **Figures**: median ops/s over at least 5 passes, with the min–max, and the
  ratio full/bare of the medians (OrderBook ops/s over BareBook ops/s). The issue's
  target is a ratio of at least 0.6; the run reports whether it met it and never
  fails on it. Each ``verdict:`` line is ``measure.compare`` of the two
  contenders: the ratio of medians with a 95 % bootstrap interval over the
  interleaved passes, resampled as pairs (see ``edumatcher.kit._compare``).
* **Correctness check**: both books must print the same number of trades and find
  the same number of orders to cancel, on every pass; otherwise a MISMATCH line is
  printed and the exit code is 1.
* Then ``NaiveBook`` (the O(n) reference) is timed against ``OrderBook`` the same
  way on the first 20,000 operations of the same workload (2,000 with ``--quick``).
* Last, the issues' conditions (``heap_book_goal``): 300,000 operations (20,000
  with ``--quick``), the collector **on**, each book building its ``Order``
  objects inside the timed loop, and the lean heap book (``lean_book.LeanBook``,
  the pure-Python limit: tuples in its heaps, no ``Order`` or ``Trade``) beside
  them. It prints OrderBook/LeanBook against the goal (>= 0.5), OrderBook/BareBook
  for the lesson, BareBook/LeanBook against the same goal (``OrderBook``'s data and
  API with no feature at all: what it would reach if every feature were free), and the
  issues' figures for the pure-Python peers beside them, labelled as quoted (they
  are not installed).
* Every target and goal is judged from the 95 % interval of its ratio, not from
  the median: met, NOT met, or too close to call when the interval straddles it.
"""

from __future__ import annotations

import time
from typing import Any

from edumatcher import CliError

from .. import workloads
from ..kit import (
    Measurement,
    Pass,
    PassRecord,
    compare,
    format_rate,
    format_seconds,
    interleave,
    interpreter,
    machine,
    table,
)
from . import heap_book_goal as goal
from . import peak_rss_text, resolve_repeat, say

__all__ = ["run", "FULL_OPS", "QUICK_OPS", "NAIVE_OPS", "QUICK_NAIVE_OPS", "TARGET_RATIO"]

FULL_OPS = 1_000_000
QUICK_OPS = 20_000
NAIVE_OPS = 20_000
QUICK_NAIVE_OPS = 2_000
TARGET_RATIO = 0.6
"""The issue's target for OrderBook ops/s over BareBook ops/s."""

Tally = workloads.Tally


def _load_books() -> tuple[type, type, type]:
    """Import the three books late, so a missing one is one clear error line."""
    try:
        from ..bare_book import BareBook
        from ..book import OrderBook
        from ..reference import NaiveBook
    except ImportError as exc:
        raise CliError(f"bench book needs OrderBook, BareBook and NaiveBook: {exc}") from None
    return OrderBook, BareBook, NaiveBook


def _contender(label: str, book_class: type, ops: list[workloads.Op]) -> Pass:
    def prepare() -> tuple[Any, list[tuple[str, Any]]]:
        return book_class(workloads.SYMBOL), workloads.prepare(ops)

    def run(data: tuple[Any, list[tuple[str, Any]]]) -> Tally:
        return workloads.apply_prepared(*data)

    return Pass(label, run, prepare, ops_per_call=len(ops))


class _PassLog:
    """Prints one line per pass and keeps every pass's tally for the correctness check."""

    def __init__(self, total_rounds: int) -> None:
        self.total_rounds = total_rounds
        self.tallies: dict[str, list[tuple[str, Tally]]] = {}

    def __call__(self, record: PassRecord) -> None:
        tally = record.result
        assert isinstance(tally, Tally)
        which = "warm-up" if record.warmup else f"pass {record.round + 1}/{self.total_rounds}"
        self.tallies.setdefault(record.label, []).append((which, tally))
        say(f"      {which:<11} {record.label:<10} {format_seconds(record.seconds):>9}   trades {tally.trades:,}")


def _tally_problems(log: _PassLog, labels: list[str]) -> list[str]:
    """Every pass of every contender must agree on trades, cancels and rejects."""
    problems = []
    reference_label = labels[0]
    reference = log.tallies[reference_label][0][1]
    for label in labels:
        for which, tally in log.tallies[label]:
            if tally != reference:
                problems.append(f"MISMATCH: {label} {which} gave {tally} but {reference_label}'s warm-up gave {reference}")
    return problems


def _collector_off(contenders: list[Pass], repeat: int, on_pass: Any) -> list[Measurement]:
    return interleave(contenders, repeat=repeat, warmup=1, gc=False, on_pass=on_pass)


def _race(contenders: list[Pass], repeat: int, progress_title: str, *,
          run: Any = _collector_off) -> tuple[list[Measurement], list[str], dict[str, Tally]]:
    """Time the contenders interleaved (``run``: collector off by default); return measurements, mismatches, first tallies."""
    say(progress_title)
    log = _PassLog(repeat)
    started = time.perf_counter()
    results = run(contenders, repeat, log)
    say(f"      done in {time.perf_counter() - started:.1f} s")
    labels = [c.label for c in contenders]
    return results, _tally_problems(log, labels), {label: log.tallies[label][0][1] for label in labels}


def _ratio(full: Measurement, bare: Measurement) -> tuple[float, float, float]:
    """Full/bare throughput ratio of the medians, and its extremes over the passes."""
    # Throughput is ops / seconds and both books run the same ops, so the ratio of
    # throughputs is the inverse ratio of times.
    return bare.median / full.median, bare.min / full.max, bare.max / full.min


def _issue_goal(order_book: type, bare_book: type, seed: int, repeat: int, quick: bool) -> list[str]:
    """Phase 5: the issues' conditions (collector on, orders built in the loop); the goal against the lean book."""
    n = goal.QUICK_ISSUE_OPS if quick else goal.ISSUE_OPS
    ops = workloads.standard(n, seed)
    title = (f"[5/5] the issues' conditions: standard({n:,}, seed={seed}), collector ON, each book builds its "
             f"orders inside the timed loop (LeanBook takes the fields positionally); interleaved, "
             f"1 warm-up + {repeat} passes each ...")
    (full, bare, lean), problems, _ = _race(
        [goal.building_pass("OrderBook", order_book, ops), goal.building_pass("BareBook", bare_book, ops),
         goal.lean_pass("LeanBook", ops)],
        repeat, title, run=goal.race_collector_on,
    )
    say(f"      OrderBook {format_rate(full.rate)}, BareBook {format_rate(bare.rate)}, LeanBook {format_rate(lean.rate)} (medians)")
    say(f"      {goal.goal_line(full, lean, goal.BOOK_GOAL, 'OrderBook ops/s / LeanBook ops/s (issue 26)')}")
    say(f"      the lesson: OrderBook/BareBook {bare.median / full.median:.2f}, LeanBook/BareBook "
        f"{bare.median / lean.median:.2f} (the lean book without Order and Trade objects)")
    for line in goal.bare_goal_line(bare, lean, goal.BOOK_GOAL).splitlines():
        say(f"      {line}")
    say(f"      verdict: {compare(full, lean).verdict}")
    for line in goal.quoted_peer_lines():
        say(f"      {line}")
    return problems


def run(*, quick: bool, seed: int, repeat: int | None) -> int:
    """Run the benchmark and print its figures; return 0, or 1 when the books disagree.

    ``repeat`` is the number of timed passes per contender (None: 5; fewer than 5
    is refused). Takes about a minute and under 1 GiB in full, seconds with ``quick``.
    """
    repeat = resolve_repeat(repeat)
    n_ops = QUICK_OPS if quick else FULL_OPS
    n_naive = QUICK_NAIVE_OPS if quick else NAIVE_OPS
    order_book, bare_book, naive_book = _load_books()

    say("bench book: OrderBook (full) against BareBook (bare heaps), then NaiveBook" + (" [--quick]" if quick else ""))
    say("method:")
    say(f"  workload   standard({n_ops:,}, seed={seed}): ~70 % new GTC limits within ±20 ticks of {workloads.MID:,},")
    say("             both sides, qty 1-100; ~30 % cancels of random live orders")
    say("  sample     one pass over the whole workload on a new book; fresh Order objects built")
    say("             before the clock starts, book torn down after it stops")
    say(f"  schedule   interleaved A B A B ..., 1 warm-up pass each, then {repeat} timed passes each")
    say("  collector  off while timing, young objects collected between passes (its cost is `bench gc`'s subject)")
    say("  figures    median ops/s over the passes (min–max); ratio full/bare of the medians")
    say("  verdicts   ratio of median times with a 95 % bootstrap CI over the paired passes (edumatcher.kit._compare)")
    say(f"interpreter: {interpreter()}")
    say(f"machine:     {machine()}")
    say()

    say(f"[1/5] building the standard workload: {n_ops:,} operations, seed {seed} ...")
    started = time.perf_counter()
    ops = workloads.standard(n_ops, seed)
    kinds = workloads.composition(ops)
    say(f"      done in {time.perf_counter() - started:.1f} s: {kinds[workloads.NEW]:,} new orders, "
         f"{kinds[workloads.CANCEL]:,} cancels")

    (full, bare), problems, tallies = _race(
        [_contender("OrderBook", order_book, ops), _contender("BareBook", bare_book, ops)],
        repeat,
        f"[2/5] timing OrderBook and BareBook, interleaved: 1 warm-up + {repeat} passes each ...",
    )
    del ops  # the NaiveBook phase needs only a prefix; give the memory back

    say("[3/5] results")
    for line in str(table([full, bare])).splitlines():
        say(f"      {line}")
    for m in (full, bare):
        slow, fast = m.rate_range
        say(f"      {m.label:<10} {format_rate(m.rate):>14}   (min–max {format_rate(slow)}–{format_rate(fast)})")
    ratio, low, high = _ratio(full, bare)
    say(f"      ratio full/bare (OrderBook ops/s / BareBook ops/s): {ratio:.2f}   (pass-to-pass range {low:.2f}–{high:.2f})")
    times = compare(full, bare)
    say(f"      verdict: {times.verdict}")
    say(f"      target (issue): {goal.goal_line(full, bare, TARGET_RATIO, 'full/bare').removeprefix('goal: ')}")
    full_tally, bare_tally = tallies["OrderBook"], tallies["BareBook"]
    say(f"      trades: OrderBook {full_tally.trades:,}, BareBook {bare_tally.trades:,}"
         + ("   !!! MISMATCH (details at the end)" if problems else " (agree, on every pass)"))
    say(f"      cancels that found their order: OrderBook {full_tally.cancelled:,}, BareBook {bare_tally.cancelled:,}"
         f"; that missed (already filled): {full_tally.cancel_misses:,}, {bare_tally.cancel_misses:,}")

    naive_ops = workloads.standard(n_naive, seed)  # the same flow's first n_naive operations
    (naive, full_small), naive_problems, naive_tallies = _race(
        [_contender("NaiveBook", naive_book, naive_ops), _contender("OrderBook", order_book, naive_ops)],
        repeat,
        f"[4/5] NaiveBook against OrderBook on the first {n_naive:,} operations, interleaved: 1 warm-up + {repeat} passes each ...",
    )
    for line in str(table([naive, full_small])).splitlines():
        say(f"      {line}")
    slowdown = naive.median / full_small.median
    say(f"      NaiveBook is {slowdown:.1f}x slower than OrderBook on {n_naive:,} operations "
         f"({format_rate(naive.rate)} against {format_rate(full_small.rate)})")
    say(f"      trades: NaiveBook {naive_tallies['NaiveBook'].trades:,}, OrderBook {naive_tallies['OrderBook'].trades:,}"
         + ("   !!! MISMATCH (details at the end)" if naive_problems else " (agree, on every pass)"))
    say(f"      verdict: {compare(naive, full_small).verdict}")
    problems += naive_problems
    problems += _issue_goal(order_book, bare_book, seed, repeat, quick)

    say()
    say(f"peak memory: {peak_rss_text()} (max resident set size of this process)")
    if problems:
        shown = 6
        for line in problems[:shown]:
            say(f"!!! {line}")
        if len(problems) > shown:
            say(f"!!! ... and {len(problems) - shown} more passes that disagree")
        say("!!! MISMATCH: the books disagree, so the timings above compare different work. Exit code 1.")
        return 1
    return 0
