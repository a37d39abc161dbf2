"""The Python engine notes, "interpreter-level micro-optimisations", as pairs of small functions to time.

Each pair is *what the technique avoids* and *what it does*, written so that the
difference is the technique and nothing else, and so that one call does enough
of it (a loop of reads, a batch of fills) to stand well above the timer's and the
call's own cost. Chapter 13 times each pair with ``compare_interleaved`` and shows
the bytecode with ``dis``.

* §7.1 ``attribute_reads`` / ``local_reads``: four slotted attributes read on
  every pass of a loop, against the same four bound to locals before it
  (``LOAD_ATTR`` against ``LOAD_FAST``).
* §7.2 ``ended_by_display`` / ``ended_by_frozenset``: a membership test against
  a set display of names (rebuilt on every call) against a module-level frozenset.
* §7.3 ``fills_as_counters`` / ``fills_as_events``: what the hot path records per
  fill: two counter increments, or one event record to interpret later.
* §7.4 ``LEFT_ALONE``: the notes' "tried and left alone" table, each row with its
  quoted reason and, where this engine has one, the nearest pair to measure.

>>> from edumatcher.workloads import standard, to_order
>>> o = to_order(standard(1, seed=1)[0])
>>> attribute_reads(o, 3) == local_reads(o, 3)
True
>>> [ended_by_display(s) == ended_by_frozenset(s) for s in OrderStatus]
[True, True, True, True, True, True]
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from edumatcher.model import Order, OrderStatus, new_order_id

__all__ = [
    "attribute_reads", "local_reads", "READS_PER_PASS",
    "ENDED_STATUSES", "ended_by_display", "ended_by_frozenset", "ended_by_constant_literal",
    "FILL_BATCH", "fills_as_counters", "fills_as_events",
    "LeftAlone", "LEFT_ALONE", "SPEED_UP_WORTH_NAMING", "left_alone_verdict",
]

# --- §7.1 bind hot attributes to locals -------------------------------------------------

READS_PER_PASS = 4
"""Attribute reads per loop pass in ``attribute_reads`` (the per-read cost divides by this)."""


def attribute_reads(order: Order, n: int = 100) -> int:
    """Read four attributes of ``order`` on every one of ``n`` passes (4n ``LOAD_ATTR``)."""
    total = 0
    for _ in range(n):
        total += order.qty + order.remaining_qty + order.filled_qty + order.visible_qty
    return total


def local_reads(order: Order, n: int = 100) -> int:
    """The same sum with the four attributes bound to locals once, before the loop (4n ``LOAD_FAST``)."""
    qty, remaining, filled, visible = order.qty, order.remaining_qty, order.filled_qty, order.visible_qty
    total = 0
    for _ in range(n):
        total += qty + remaining + filled + visible
    return total


# --- §7.2 constants built once ----------------------------------------------------------

_FILLED, _CANCELLED, _REJECTED = OrderStatus.FILLED, OrderStatus.CANCELLED, OrderStatus.REJECTED
ENDED_STATUSES = frozenset({_FILLED, _CANCELLED, _REJECTED})
"""Built once, at import: the statuses after which an order can no longer trade."""


def ended_by_display(status: OrderStatus) -> bool:
    """Membership in a set display of three names: the set is built (three lookups, three hashes) on every call."""
    return status in {_FILLED, _CANCELLED, _REJECTED}


def ended_by_frozenset(status: OrderStatus) -> bool:
    """Membership in the module-level frozenset: one global lookup and one hash probe."""
    return status in ENDED_STATUSES


def ended_by_constant_literal(status: str) -> bool:
    """A set *of constants* in an ``in`` test: the compiler folds it into one frozenset constant."""
    return status in {"FILLED", "CANCELLED", "REJECTED"}


# --- §7.3 counters, not events ----------------------------------------------------------

FILL_BATCH: tuple[tuple[str, str, int], ...] = tuple(
    (buyer, seller, qty) for buyer, seller, qty in itertools.islice(
        itertools.cycle([("ana", "ben", 5), ("cai", "dee", 3), ("eli", "ana", 7), ("ben", "fay", 2)]), 100)
)
"""100 fills as (buyer, seller, qty): what ``fills_as_counters`` and ``fills_as_events`` record."""


def fills_as_counters(batch: Sequence[tuple[str, str, int]]) -> dict[str, int]:
    """Count fills per owner, as ``Engine._event_frames`` does: two dict increments per fill, memory O(owners)."""
    fills: dict[str, int] = {}
    for buyer, seller, _qty in batch:
        fills[buyer] = fills.get(buyer, 0) + 1
        fills[seller] = fills.get(seller, 0) + 1
    return fills


def fills_as_events(batch: Sequence[tuple[str, str, int]], ts: int = 1_700_000_000_000_000_000) -> list[dict[str, Any]]:
    """Record every fill as an event dict for someone to interpret later: one dict per fill, memory O(fills).

    An event carries its time (``ts``, the message's one timestamp, so no clock is
    read here): a reader that turns events into rates needs it. Counters need no time,
    because their reader samples them at known moments and differences the samples.
    """
    events: list[dict[str, Any]] = []
    for buyer, seller, qty in batch:
        events.append({"kind": "fill", "buyer": buyer, "seller": seller, "qty": qty, "ts": ts})
    return events


# --- §7.4 what was tried and left alone -------------------------------------------------

_log = logging.getLogger("edumatcher.micro_demo")
_DEBUG = logging.DEBUG
_DEBUG_ON = False  # the "cached flag": right until someone changes the log level at run time


def _guard_by_logger(n: int = 100) -> int:
    hits = 0
    for _ in range(n):
        if _log.isEnabledFor(_DEBUG):
            hits += 1
    return hits


def _guard_by_cached_flag(n: int = 100) -> int:
    hits = 0
    for _ in range(n):
        if _DEBUG_ON:
            hits += 1
    return hits


def _order() -> Order:
    from edumatcher.workloads import standard, to_order  # a plain resting limit order
    return to_order(standard(1, seed=1)[0])


_O = _order()


def _enums_with_value(o: Order = _O) -> tuple[Any, ...]:
    return (o.side.value, o.order_type.value, o.tif.value, o.smp.value, o.status.value)


def _enums_without_value(o: Order = _O) -> tuple[Any, ...]:
    return (o.side, o.order_type, o.tif, o.smp, o.status)  # orjson writes a str enum as its value


_IMBALANCES = tuple(i / 7 for i in range(100))


def _coerce_by_class_test(values: Sequence[float] = _IMBALANCES) -> float:
    total = 0.0
    for v in values:
        total += round(v if v.__class__ is float else float(v), 4)
    return total


def _coerce_by_call(values: Sequence[float] = _IMBALANCES) -> float:
    total = 0.0
    for v in values:
        total += round(float(v), 4)  # what messages.py's generated builders do for a float field
    return total


_run_counter = itertools.count(1)


def _id_from_counter() -> str:
    return f"g1-{next(_run_counter)}"


def _id_from_urandom() -> str:
    return new_order_id()  # os.urandom(16).hex(): what model.new_order_id does


@dataclass(frozen=True)
class LeftAlone:
    """One row of the Python engine notes' §7.4: the idea, the notes' reason (quoted), our nearest analogue and its pair.

    ``idea`` and ``current`` are zero-argument callables (the idea, and what the
    code does now), or None where there is nothing honest to time here; ``unit`` is
    how many operations one call performs.
    """

    idea_text: str
    reason_quoted: str
    analogue: str
    idea: Callable[[], object] | None = None
    current: Callable[[], object] | None = None
    labels: tuple[str, str] = ("idea", "as is")
    unit: int = 1


LEFT_ALONE: tuple[LeftAlone, ...] = (
    LeftAlone(
        "Compile out the _dbg_count guards (≈ 1.3 % of wall time)",
        "A cached \"debug on\" flag goes stale when the log level changes at runtime; not worth a sub-300 ns win",
        "no debug guards on our message path; the nearest analogue is a logging guard: "
        "logger.isEnabledFor(DEBUG) against a cached module-level flag, per guard",
        _guard_by_cached_flag, _guard_by_logger, ("cached flag", "isEnabledFor"), 100),
    LeftAlone(
        "Remove .value from Order.to_dict()",
        "Used far outside order entry; only the two fill-loop sites were verified",
        "Order.to_dict reads .value of five enums; the same five reads with and without .value, per order",
        _enums_without_value, _enums_with_value, ("without .value", "with .value"), 1),
    LeftAlone(
        "A __class__ type test instead of the coercion call in the generated builder",
        "Measured slower",
        "messages.py's builders coerce a float field with round(float(x), 4); a __class__ test skips float() "
        "for a float, per value",
        _coerce_by_class_test, _coerce_by_call, ("__class__ test", "float() call"), 100),
    LeftAlone(
        "Coerce only numeric fields in the unchecked builder",
        "Halves the overhead but weakens its byte-identity guarantee to typed call sites",
        "already what ours does: make_x_unchecked coerces only float fields (messages._coerce_lines), and "
        "tests/test_messages.py pins its bytes to make_x's; nothing different to time"),
    LeftAlone(
        "Per-gateway counter for order ids",
        "208 ns does not justify a durable run sequence in five producers",
        "model.new_order_id (os.urandom(16).hex()) against a per-process counter id, per id",
        _id_from_counter, _id_from_urandom, ("counter id", "urandom id"), 1),
    LeftAlone(
        "Pooling Order objects",
        "See §10",
        "measured in chapter 11 (pooling against allocation, and the stale-reference hazard)"),
)
"""the Python engine notes' rows (reasons quoted: Python engine notes, CPython 3.14), each with this engine's nearest analogue."""

SPEED_UP_WORTH_NAMING = 0.05
"""A speed-up smaller than this fraction is inside the course's "same" band: not a win the chapter names."""


def left_alone_verdict(row: LeftAlone, ratio: float, ci: tuple[float, float]) -> str:
    """One ``verdict:`` line for a row: does the idea make its analogue faster here, and by how much.

    Two categories only, decided by the whole confidence interval of
    ``idea / as is``: *faster* when the interval lies below ``1 / 1.05``; otherwise
    *no speed-up* (the idea is slower, the same, or too close to call, and the
    numbers say which). A row whose true ratio is near 1 then cannot flip between
    runs the way "same" against "undetermined" would.

    >>> row = LEFT_ALONE[4]
    >>> left_alone_verdict(row, 0.25, (0.24, 0.26)).split(":")[1].strip()
    'counter id is 4.00x faster than urandom id (95 % CI 3.85–4.17)'
    >>> "no speed-up" in left_alone_verdict(row, 1.01, (0.97, 1.05))
    True
    """
    idea, current = row.labels
    low, high = ci
    if high < 1 / (1 + SPEED_UP_WORTH_NAMING):
        return (f"verdict: {idea} is {1 / ratio:.2f}x faster than {current} (95 % CI {1 / high:.2f}–{1 / low:.2f})"
                f": a real saving here, left alone for the reason quoted")
    return (f"verdict: {idea}: no speed-up over {current} here (ratio {ratio:.2f}, 95 % CI {low:.2f}–{high:.2f})"
            f": nothing to win, so nothing to weigh against the reason quoted")

