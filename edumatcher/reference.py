"""``NaiveBook``: the matching rules of ``rules.py`` written the obvious way.

This is the reference the fast ``OrderBook`` is tested against (``differential.py``).
It is never optimised and never benchmarked for its own sake: every question is
answered by scanning plain Python lists, so each method can be read side by side
with the paragraph of ``rules.py`` it implements. When the two books disagree, the
spec decides which one is wrong.

Where ``rules.py`` is silent, this book takes the readings below (the fast book takes
the same ones; /work/divergences.md lists them for the spec's owner):

* a refused ``submit`` leaves ``events`` as they were ("changes nothing");
* a stop that is elected when submitted takes two ``arrival_seq`` values, one when
  accepted and one when it fires;
* a triggered stop keeps its ``order_type`` (STOP, STOP_LIMIT) and the ``timestamp_ns``
  of its own submit; only the trades carry the clock of the call that triggered it;
* when one trade refreshes both a resting and an aggressing iceberg, the resting one
  takes the lower ``arrival_seq``;
* CANCEL_BOTH and an equal DECREMENT cancel the resting order first, then the aggressor;
* a DECREMENT that shrinks the aggressor also clamps its ``visible_qty`` to its
  ``remaining_qty``, as the spec says for the resting order;
* an ordinary order's ``visible_qty`` is its ``remaining_qty`` at all times (so 0 once
  filled, the cancelled quantity once cancelled);
* the first accepted order gets ``arrival_seq`` 1; ``validate_new_order`` runs before
  the duplicate-id check, so a malformed duplicate gets the malformed code;
* outstanding work (elected stops, mass cancels) is kept as the rules describe it,
  literally: an election price updated after every trade, a queue of mass cancels each
  holding a list of orders, and a counter of steps per call.

>>> from edumatcher.model import Order
>>> book = NaiveBook("XYZ")
>>> book.submit(Order.from_dict({"id": "s1", "symbol": "XYZ", "side": "SELL",
...     "order_type": "LIMIT", "qty": 5, "price": 101, "owner": "ann"}))
[]
>>> [t.to_dict()["qty"] for t in book.submit(Order.from_dict({"id": "b1", "symbol": "XYZ",
...     "side": "BUY", "order_type": "LIMIT", "qty": 3, "price": 102, "owner": "bob"}))]
[3]
>>> book.depth()
([], [(101, 1, 2)])
"""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

from .model import (
    TIF,
    CancelReason,
    Order,
    OrderRejected,
    OrderStatus,
    OrderType,
    RejectReason,
    SelfMatch,
    Side,
    Trade,
)
from .rules import PROTECTION_TICKS, check_book_settings, validate_new_order

__all__ = ["NaiveBook"]

Event = tuple[str, Any]

# Order types that carry no limit price: they cross every price on the other side.
_MARKET_LIKE = (OrderType.MARKET, OrderType.STOP)
_STOP_TYPES = (OrderType.STOP, OrderType.STOP_LIMIT)
_LIVE_STATUSES = (OrderStatus.NEW, OrderStatus.PARTIALLY_FILLED)
_R = CancelReason


def _priority(order: Order) -> tuple[int, int]:
    """Sort key of a resting order: better price first, then lower ``arrival_seq``."""
    if order.side is Side.BUY:
        return (-order.price, order.arrival_seq)  # type: ignore[operator]
    return (order.price, order.arrival_seq)  # type: ignore[return-value]


def _stop_priority(order: Order) -> tuple[int, int]:
    """Sort key of a pending stop: the one closest to triggering first, then lower ``arrival_seq``."""
    if order.side is Side.BUY:
        return (order.stop_price, order.arrival_seq)  # type: ignore[return-value]
    return (-order.stop_price, order.arrival_seq)  # type: ignore[operator]


class NaiveBook:
    """The reference order book for one symbol: same public API and answers as ``OrderBook``.

    State is three plain lists (resting bids, resting asks, pending stops) kept in
    arrival order; every read sorts or scans them. Costs are O(n) or O(n log n) per
    step in the number of live orders, on purpose: there is no heap, index or lazy
    deletion to get wrong.

    Reading: ``best_bid``, ``best_ask``, ``depth``, ``get``, ``len``, ``last_price``,
    ``has_outstanding_work``.
    Changing: ``submit``, ``cancel``, ``cancel_owner``, ``maintain`` (each first clears
    ``events``; a refused ``submit`` changes nothing, ``events`` included).
    Checking: ``check_invariants``.
    """

    def __init__(self, symbol: str, last_price: int | None = None, *, protection: int = PROTECTION_TICKS,
                 budget: int | None = None) -> None:
        check_book_settings(last_price, protection, budget)
        self.symbol = symbol
        self.protection = protection  # the price protection of rules.py, in ticks
        self.budget = budget  # the work budget of rules.py, in steps (None: unlimited)
        self.last_price = last_price
        self.events: list[Event] = []
        self._bids: list[Order] = []  # resting buy orders, unsorted
        self._asks: list[Order] = []  # resting sell orders, unsorted
        self._stops: list[Order] = []  # pending STOP and STOP_LIMIT orders, both sides
        self._last_seq = 0  # the one arrival_seq counter; the first order gets 1
        self._last_trade_seq = 0  # trades are numbered from 1
        self._now_ns = 0  # the clock of the call in progress
        self._elect = {Side.BUY: last_price, Side.SELL: last_price}  # the election prices
        self._entered: dict[Order, int] = {}  # live order -> when it last entered the book
        self._entries = 0  # the counter behind _entered
        self._requested: dict[str, int] = {}  # owner -> the entry counter at its last mass cancel
        self._jobs: deque[list[Any]] = deque()  # mass cancels in progress: [owner, orders, next index]
        self._collecting: list[Any] | None = None
        self._collected: list[str] = []
        self._skips = 0  # steps of this call that recorded no event (entries a mass cancel skipped)
        self._cut = False  # whether the last _match stopped at its protection price
        self._guard = 0  # the protection price of the last _match
        self.work_left = False  # True when maintain() may have work (a call ran out of budget)

    # ------------------------------------------------------------------ reading

    def best_bid(self) -> int | None:
        """Return the highest resting bid price, or None. O(n).

        >>> NaiveBook("XYZ").best_bid() is None
        True
        """
        return max((o.price for o in self._bids), default=None)  # type: ignore[type-var]

    def best_ask(self) -> int | None:
        """Return the lowest resting ask price, or None. O(n)."""
        return min((o.price for o in self._asks), default=None)  # type: ignore[type-var]

    def depth(self, levels: int | None = None) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """Return ``(bids, asks)``: ``(price, order_count, displayed_qty)`` per level, best first. O(n log n).

        Only ``visible_qty`` is counted, so an iceberg shows its peak alone.
        ``levels`` keeps the first N levels of each side.
        """
        if levels is not None and (type(levels) is not int or levels < 0):
            raise ValueError(f"levels must be None or an int >= 0, not {levels!r}")
        return self._levels(self._bids)[:levels], self._levels(self._asks)[:levels]

    def get(self, order_id: str) -> Order | None:
        """Return the live order (resting or pending stop) with this id, or None. O(n)."""
        for order in self._live_orders():
            if order.id == order_id:
                return order
        return None

    def __len__(self) -> int:
        """Number of live orders: resting plus pending stops. O(1)."""
        return len(self._bids) + len(self._asks) + len(self._stops)

    def has_outstanding_work(self) -> bool:
        """True while a mass cancel is in progress or a stop is elected and waiting. O(n)."""
        return bool(self._jobs) or any(self._elected(o) for o in self._stops)

    # ----------------------------------------------------------------- changing

    def submit(self, order: Order, *, now_ns: int = 0) -> list[Trade]:
        """Accept or refuse ``order``, match it, then continue the outstanding work; return the trades. O(n^2) worst case.

        A refusal raises ``OrderRejected`` and changes nothing: not the book, not
        ``order``, not even ``events`` (they still describe the previous call).
        ``now_ns`` stamps the accepted order and every trade of this call.
        """
        # Acceptance: the spec's checks, then the ones that need the book.
        validate_new_order(order, self.symbol)
        if self.get(order.id) is not None:
            raise OrderRejected(RejectReason.DUPLICATE_ID, f"order id {order.id!r} is already live in the book")
        if order.arrival_seq and order.status in (*_LIVE_STATUSES, OrderStatus.PENDING):
            raise OrderRejected(RejectReason.ORDER_IN_USE, f"this Order object ({order.id!r}) is live in a book")
        # A fresh list rather than .clear(): whoever kept the previous call's events keeps them.
        self.events = []
        self._skips = 0
        self._now_ns = now_ns
        order.timestamp_ns = now_ns
        order.status = OrderStatus.NEW
        order.cancel_reason = None
        order.filled_qty = 0
        order.remaining_qty = order.qty
        order.visible_qty = order.qty if order.display_qty is None else min(order.display_qty, order.qty)
        order.arrival_seq = self._take_seq()

        if order.order_type in _STOP_TYPES:
            self._election_price(order.side)  # brought up to date before the new stop is compared with it
            order.status = OrderStatus.PENDING
            self._stops.append(order)
            self._enter(order)
        else:
            self._execute(order)
        self._continue()
        return [payload for kind, payload in self.events if kind == "trade"]

    def cancel(self, order_id: str, now_ns: int = 0) -> bool:
        """Cancel a resting order or pending stop; return False (changing nothing) for any other id. O(n)."""
        self.events = []
        order = self.get(order_id)
        if order is None:
            return False
        self._skips = 0
        self._now_ns = now_ns
        self._remove_live(order)
        self._cancel(order, _R.OWNER_CANCEL)
        self._continue()
        return True

    def cancel_owner(self, owner: str, *, now_ns: int = 0) -> list[str]:
        """Start a mass cancel of ``owner``'s orders not already covered by one; return the ids this call cancelled for it. O(n log n)."""
        self.events = []
        since = self._requested.get(owner, 0)
        mine = sorted((o for o in self._live_orders() if o.owner == owner and self._entered[o] > since),
                      key=self._entered.__getitem__)
        if not mine:
            return []
        self._requested[owner] = self._entries
        job = [owner, mine, 0]
        self._jobs.append(job)
        self._skips = 0
        self._now_ns = now_ns
        self._collecting, self._collected = job, []
        self._continue()
        self._collecting = None
        return self._collected

    def maintain(self, *, now_ns: int = 0) -> bool:
        """Start a new ``events`` list, continue the outstanding work within the budget; return whether some is left. O(budget * n)."""
        self.events = []
        if self.has_outstanding_work():
            self._skips = 0
            self._now_ns = now_ns
            self._continue()
        self.work_left = more = self.has_outstanding_work()
        return more

    def needs_maintenance(self) -> bool:
        """The same as ``has_outstanding_work``: this book has no heaps to compact."""
        return self.has_outstanding_work()

    # ----------------------------------------------------------------- checking

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` (showing the whole book) if the state breaks a rule. O(n).

        Checks: resting orders are live LIMIT-priced orders with DAY or GTC on the right
        list with ``1 <= visible_qty <= remaining_qty``; pending stops are PENDING; every
        live order still passes ``validate_new_order``, has ``filled_qty >= 0``,
        ``filled_qty + remaining_qty <= qty`` (``==`` but for a DECREMENT) and no
        ``cancel_reason``; live ids and ``arrival_seq`` values are unique; the counters are
        not negative; the book is not crossed; without a budget no stop is elected and no
        mass cancel is in progress.
        """
        problems: list[str] = []
        if self._last_seq < 0 or self._last_trade_seq < 0:
            problems.append(f"negative counter: seq {self._last_seq}, trade seq {self._last_trade_seq}")
        for o in self._live_orders():
            try:
                validate_new_order(o, self.symbol)
            except OrderRejected as exc:
                problems.append(f"breaks an acceptance rule ({exc}): {o.to_dict()}")
            if not (o.filled_qty >= 0 and o.filled_qty + o.remaining_qty <= o.qty) or o.cancel_reason is not None:
                problems.append(f"quantities or reason out of range {o.to_dict()}")
        seqs = [o.arrival_seq for o in self._live_orders()]
        if len(seqs) != len(set(seqs)):
            problems.append("two live orders share an arrival_seq")
        for side, orders in ((Side.BUY, self._bids), (Side.SELL, self._asks)):
            for o in orders:
                if (o.side is not side or o.price is None or o.status not in _LIVE_STATUSES
                        or o.tif not in (TIF.DAY, TIF.GTC)):
                    problems.append(f"bad resting order {o.to_dict()}")
                if not 1 <= o.visible_qty <= o.remaining_qty:
                    problems.append(f"visible/remaining out of range {o.to_dict()}")
        for o in self._stops:
            if o.status is not OrderStatus.PENDING or (self.budget is None and self._elected(o)):
                problems.append(f"bad pending stop {o.to_dict()}")
        if self.budget is None and self._jobs:
            problems.append("a mass cancel is in progress without a budget")
        ids = [o.id for o in self._live_orders()]
        if len(ids) != len(set(ids)):
            problems.append("duplicate live ids")
        bid, ask = self.best_bid(), self.best_ask()
        if bid is not None and ask is not None and bid >= ask:
            problems.append(f"crossed book: bid {bid} >= ask {ask}")
        if problems:
            state = "\n".join(f"  {o.to_dict()}" for o in self._live_orders())
            raise AssertionError("; ".join(problems) + f"\nlive orders:\n{state}")

    # -------------------------------------------------------- matching (private)

    def _execute(self, aggressor: Order) -> None:
        """Run one accepted (or just fired) order to completion: FOK check, match, rest or cancel."""
        if aggressor.tif is TIF.FOK and not self._fok_fills(aggressor):
            self._cancel(aggressor, _R.FOK_KILLED)  # killed untouched
            return
        self._match(aggressor)
        if aggressor.status is OrderStatus.CANCELLED or aggressor.remaining_qty == 0:
            return  # self-match prevention ended it, or it filled
        if aggressor.order_type not in _MARKET_LIKE and aggressor.tif in (TIF.DAY, TIF.GTC):
            if self._cut:  # the rest stays on the book as a limit at its protection price
                aggressor.price = self._guard
            self._side_list(aggressor.side).append(aggressor)
            self._enter(aggressor)
        else:  # MARKET, IOC and FOK never rest
            self._cancel(aggressor, _R.PRICE_PROTECTION if self._cut else _R.IOC_REMAINDER)

    def _match(self, aggressor: Order, max_steps: int | None = None) -> int:
        """Trade ``aggressor`` against the best crossing resting orders within its protection price.

        Sets ``_cut`` when the protection price stopped it while it still crossed.
        Returns the steps taken (trades and self-match actions); with ``max_steps`` (the
        FOK decision of ``_fok_fills``) it stops before a step beyond it.
        """
        self._cut = False
        steps = 0
        opposite = self._opposite_list(aggressor.side)
        first = self._best_resting(opposite)
        if first is None:
            return 0
        buy = aggressor.side is Side.BUY
        self._guard = first.price + self.protection if buy else first.price - self.protection  # type: ignore[operator]
        while aggressor.remaining_qty > 0:
            resting = self._best_resting(opposite)
            if resting is None or not self._crosses(aggressor, resting.price):  # type: ignore[arg-type]
                return steps
            if (resting.price > self._guard) if buy else (resting.price < self._guard):  # type: ignore[operator]
                self._cut = True
                return steps
            if max_steps is not None and steps == max_steps:
                return steps + 1  # it needed one more
            steps += 1
            if aggressor.smp is not SelfMatch.NONE and resting.owner == aggressor.owner:
                if not self._prevent_self_match(aggressor, resting):
                    return steps
                continue
            self._trade(aggressor, resting)
        return steps

    def _crosses(self, aggressor: Order, resting_price: int) -> bool:
        """Whether ``aggressor`` may trade at ``resting_price`` by its own limit (MARKET and a fired STOP always may)."""
        if aggressor.order_type in _MARKET_LIKE:
            return True
        if aggressor.side is Side.BUY:
            return resting_price <= aggressor.price  # type: ignore[operator]
        return resting_price >= aggressor.price  # type: ignore[operator]

    def _fok_fills(self, aggressor: Order) -> bool:
        """Whether a FOK fills completely, by the rule of ``rules.py``: played out on a copy of the book.

        Match a copy of the order as an IOC against a copy of the book; it fills when all
        of its ``qty`` was filled by trades (a self-match action other than CANCEL_OLDEST's
        leaves some of it unfilled). With a budget, self-match prevention and an owner with
        live orders, the play may take at most ``budget`` steps.
        """
        trial = copy.deepcopy(self)
        probe = copy.deepcopy(aggressor)
        limited = (self.budget is not None and aggressor.smp is not SelfMatch.NONE
                   and any(o.owner == aggressor.owner for o in self._live_orders()))
        steps = trial._match(probe, self.budget if limited else None)
        return probe.filled_qty == probe.qty and (not limited or steps <= self.budget)  # type: ignore[operator]

    def _trade(self, aggressor: Order, resting: Order) -> None:
        """Print one trade at the resting price for ``min(aggressor.remaining_qty, resting.visible_qty)``."""
        qty = min(aggressor.remaining_qty, resting.visible_qty)
        buy, sell = (aggressor, resting) if aggressor.side is Side.BUY else (resting, aggressor)
        self._last_trade_seq += 1
        trade = Trade(
            symbol=self.symbol,
            price=resting.price,  # type: ignore[arg-type]
            qty=qty,
            buy_order_id=buy.id,
            sell_order_id=sell.id,
            aggressor_order_id=aggressor.id,
            resting_order_id=resting.id,
            buy_owner=buy.owner,
            sell_owner=sell.owner,
            aggressor_side=aggressor.side,
            seq=self._last_trade_seq,
            timestamp_ns=self._now_ns,
        )
        self.events.append(("trade", trade))
        self._print(resting.price)  # type: ignore[arg-type]
        # The resting side is settled first, so when both peaks refresh on one
        # trade the resting order takes the lower of the two new arrival_seqs.
        self._fill(resting, qty)
        if resting.remaining_qty == 0:
            self._remove_live(resting)
        self._fill(aggressor, qty)

    def _fill(self, order: Order, qty: int) -> None:
        """Apply one fill of ``qty`` to ``order``, resting or aggressing, with the iceberg refresh."""
        order.filled_qty += qty
        order.remaining_qty -= qty
        order.visible_qty = max(order.visible_qty - qty, 0)
        if order.visible_qty == 0 and order.remaining_qty > 0:
            # Only an iceberg gets here (an ordinary order's visible_qty is its remaining_qty).
            # The new arrival_seq puts a resting iceberg at the back of its price level.
            order.visible_qty = min(order.display_qty, order.remaining_qty)  # type: ignore[type-var]
            order.arrival_seq = self._take_seq()
        order.status = OrderStatus.FILLED if order.remaining_qty == 0 else OrderStatus.PARTIALLY_FILLED

    def _prevent_self_match(self, aggressor: Order, resting: Order) -> bool:
        """Apply the aggressor's ``smp`` mode to a same-owner pair; return whether matching goes on."""
        mode = aggressor.smp
        if mode is SelfMatch.CANCEL_NEWEST:
            self._cancel(aggressor, _R.SELF_MATCH)
            return False
        if mode is SelfMatch.CANCEL_OLDEST:
            self._remove_live(resting)
            self._cancel(resting, _R.SELF_MATCH)
            return True
        if mode is SelfMatch.CANCEL_BOTH:
            self._remove_live(resting)
            self._cancel(resting, _R.SELF_MATCH)
            self._cancel(aggressor, _R.SELF_MATCH)
            return False
        # DECREMENT: the smaller side is cancelled, the larger shrinks by it.
        a, r = aggressor.remaining_qty, resting.remaining_qty
        if a > r:
            self._remove_live(resting)
            self._cancel(resting, _R.SELF_MATCH)
            aggressor.remaining_qty -= r
            aggressor.visible_qty = min(aggressor.visible_qty, aggressor.remaining_qty)
            return True
        if r > a:
            resting.remaining_qty -= a
            resting.visible_qty = min(resting.visible_qty, resting.remaining_qty)  # keeps its place
            self._cancel(aggressor, _R.SELF_MATCH)
            return False
        self._remove_live(resting)
        self._cancel(resting, _R.SELF_MATCH)
        self._cancel(aggressor, _R.SELF_MATCH)
        return False

    # ------------------------------------------------------------ stops (private)

    def _elected(self, stop: Order) -> bool:
        """A pending stop is elected while its side's election price reaches it."""
        price = self._election_price(stop.side)
        if price is None:
            return False
        if stop.side is Side.BUY:
            return stop.stop_price <= price  # type: ignore[operator]
        return stop.stop_price >= price  # type: ignore[operator]

    def _election_price(self, side: Side) -> int | None:
        """The side's election price, which is the last price whenever no stop of the side is elected."""
        price = self._elect[side]
        if price is not None:
            for o in self._stops:
                if o.side is side and (o.stop_price <= price if side is Side.BUY else o.stop_price >= price):  # type: ignore[operator]
                    return price
        self._elect[side] = self.last_price
        return self.last_price

    def _print(self, price: int) -> None:
        """A trade at ``price``: the last price moves and so do the election prices, as rules.py says."""
        for side, better in ((Side.BUY, max), (Side.SELL, min)):
            current = self._elect[side]
            elected = current is not None and any(
                o.side is side and (o.stop_price <= current if side is Side.BUY else o.stop_price >= current)  # type: ignore[operator]
                for o in self._stops)
            self._elect[side] = better(current, price) if elected else price  # type: ignore[type-var]
        self.last_price = price

    def _fire(self, stop: Order) -> None:
        """Status NEW, a new ``arrival_seq``, a "triggered" event, then match as MARKET or LIMIT."""
        self._stops.remove(stop)
        self._entered.pop(stop, None)
        stop.status = OrderStatus.NEW
        stop.arrival_seq = self._take_seq()
        self.events.append(("triggered", stop))
        self._execute(stop)

    def _continue(self) -> None:
        """Outstanding work, one unit at a time while the call has steps left: mass cancels, then elected stops."""
        while self.budget is None or len(self.events) + self._skips < self.budget:
            if self._jobs:
                self._mass_cancel_step()
                continue
            for side in (Side.BUY, Side.SELL):
                elected = [o for o in self._stops if o.side is side and self._elected(o)]
                if elected:
                    self._fire(min(elected, key=_stop_priority))
                    break  # a new round: buy stops are looked at first again
            else:
                return
        self.work_left = True

    def _mass_cancel_step(self) -> None:
        job = self._jobs[0]
        _, orders, i = job
        order = orders[i]
        job[2] = i + 1
        if job[2] == len(orders):
            self._jobs.popleft()
        if any(o is order for o in self._live_orders()):
            self._remove_live(order)
            self._cancel(order, _R.MASS_CANCEL)
            if job is self._collecting:
                self._collected.append(order.id)
        else:
            self._skips += 1

    # ------------------------------------------------------ bookkeeping (private)

    def _take_seq(self) -> int:
        self._last_seq += 1
        return self._last_seq

    def _enter(self, order: Order) -> None:
        """``order`` enters the book (filed as a pending stop, or rested): note when, for mass cancels."""
        self._entries += 1
        self._entered[order] = self._entries

    def _cancel(self, order: Order, reason: CancelReason) -> None:
        """Mark ``order`` CANCELLED for ``reason`` (its ``remaining_qty`` keeps the cancelled quantity) and record it."""
        order.status = OrderStatus.CANCELLED
        order.cancel_reason = reason
        self.events.append(("cancelled", order))

    def _side_list(self, side: Side) -> list[Order]:
        return self._bids if side is Side.BUY else self._asks

    def _opposite_list(self, side: Side) -> list[Order]:
        return self._asks if side is Side.BUY else self._bids

    def _best_resting(self, orders: list[Order]) -> Order | None:
        return min(orders, key=_priority, default=None)

    def _live_orders(self) -> list[Order]:
        return self._bids + self._asks + self._stops

    def _remove_live(self, order: Order) -> None:
        """Take ``order`` off whichever list holds it (by identity, never by equality)."""
        self._entered.pop(order, None)
        for orders in (self._bids, self._asks, self._stops):
            for i, candidate in enumerate(orders):
                if candidate is order:
                    del orders[i]
                    return

    @staticmethod
    def _levels(orders: list[Order]) -> list[tuple[int, int, int]]:
        levels: list[tuple[int, int, int]] = []
        for order in sorted(orders, key=_priority):
            if levels and levels[-1][0] == order.price:
                price, count, qty = levels[-1]
                levels[-1] = (price, count + 1, qty + order.visible_qty)
            else:
                levels.append((order.price, 1, order.visible_qty))  # type: ignore[arg-type]
        return levels
