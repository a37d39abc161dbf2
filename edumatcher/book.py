"""``OrderBook``: price-time priority on binary heaps with lazy deletion.

The rules it follows are the module docstring of ``edumatcher.rules``; this module is
about how it follows them quickly.

Heap-key invariant
------------------
Each heap is a ``heapq`` list of *keys*, and a key is one int that packs a price and an
arrival sequence number: ``key = k0 * SEQ_SPAN + arrival_seq`` with

* bids:       ``k0 = -price``        asks:       ``k0 = price``
* buy stops:  ``k0 = stop_price``    sell stops: ``k0 = -stop_price``

and ``0 < arrival_seq < SEQ_SPAN``, so ordering keys is equivalent to ordering the
tuples ``(k0, arrival_seq)`` (``heap_key``, ``split_key``), and ``heap[0]`` is the best
order (best price, then earliest arrival) of its heap. ``arrival_seq`` is unique per
book, so no two keys are equal, in one heap or across the four. Every live order
(resting or pending stop) has exactly one key in its heap, computed from its current
fields, and ``_live[key]`` is that order. A key that is not in ``_live`` is dead: its
order left the book, and the key waits to be popped when it reaches the top, or to be
dropped by compaction.

Why one int (``edumatcher.experiments.heaps.entry_layouts`` measures the choices): an
int holds no reference, so the cyclic collector never tracks it; a resting order costs
the collector one tracked object, the ``Order`` itself, and a dead key costs none (a
``[k0, k1, order]`` list entry was a second tracked object per order, and stayed one
while dead). Every young collection walks each tracked object that arrived since the
last (chapter 07, ``bench gc``). Comparing two ints is also one C comparison, where two
lists compare item by item (``entry_layouts`` times a push and a pop of each). A cancel
still marks its key dead in O(1), by deleting it from ``_live``, and the ``Order``
is freed as soon as nothing else holds it. The price: finding a key's order is one
dict lookup instead of an index, and arrival numbers must stay below ``SEQ_SPAN``
(2**48: at a million arrivals a second, 8.9 years). A book that gets near it hands
its live orders new numbers, in the same order (``_renumber``).

Indexes, kept in step with every mutation (``check_invariants`` recomputes them all):

* ``_entries``: order id -> key, for every live order (``get``, ``cancel``, duplicates).
* ``_live``: key -> ``Order``, for every live order (the heaps' tops, compaction).
* ``_bid_levels`` / ``_ask_levels``: price -> ``[order_count, displayed_qty, hidden_qty]``
  (``depth`` shows the first two; the FOK check adds the last two). Keeping the hidden
  part rather than the total means an ordinary order, which hides nothing, never
  touches the third slot: a fill updates one number instead of two.
* ``_bid_prices`` / ``_ask_prices``: heaps of ``-price`` / ``price``, one entry pushed
  when a level is created. Every level's price is in its heap; an entry whose level is
  gone (or a second entry of a re-created level) is stale and is skipped when met.
  ``depth(k)`` pops these in priority order (dropping stale entries for good) and
  pushes back what it keeps. A side holding more than twice its levels (plus
  ``COMPACT_SLACK``) is rebuilt from the level index when a level is made.
* ``_owners``: owner -> set of live order ids (``cancel_owner``). The FOK pre-check does
  not use it: it walks the crossed orders themselves (``_fok_can_fill``), so what an
  owner holds elsewhere (thousands of pending stops, say) costs a FOK nothing.
* ``_dead``: the number of dead keys in all four heaps (the compaction trigger).

Compaction: when the four heaps hold more than ``compact_factor * live + compact_slack``
entries, all of them are filtered and re-heapified. That costs O(n). A compaction leaves
only live entries, and with a factor ``f > 1`` the next one needs more than
``(f - 1) * live + slack`` dead entries, so Omega(n) cancels pay for it: cancelling is
amortised O(1). With ``f = 1`` the next rebuild comes after only ``slack + 1`` cancels,
so a cancel costs O(n / slack) amortised (chapter 05 measures both).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterator
from heapq import heapify, heappop, heappush
from operator import attrgetter

from .model import (
    TIF,
    Order,
    OrderRejected,
    OrderStatus,
    OrderType,
    RejectReason,
    SelfMatch,
    Side,
    Trade,
)
from .rules import MAX_MATCHES_PER_ORDER, MAX_PRICE, MAX_QTY, validate_new_order

__all__ = ["OrderBook", "COMPACT_FACTOR", "COMPACT_SLACK", "SEQ_BITS", "SEQ_SPAN", "Event", "heap_key", "split_key"]

COMPACT_FACTOR = 2
"""Compact when heap entries exceed ``COMPACT_FACTOR * live + COMPACT_SLACK``."""

COMPACT_SLACK = 64
"""Slack so a nearly empty book does not rebuild its heaps on every cancel."""

Event = tuple[str, "Trade | Order"]
"""One entry of ``OrderBook.events``: ``("trade", Trade)``, ``("cancelled", Order)`` or ``("triggered", Order)``."""

# Enum members bound once: an ``is`` test against a module global is the cheapest check.
_BUY = Side.BUY
_LIMIT = OrderType.LIMIT
_FOK = TIF.FOK
_SMP_NONE = SelfMatch.NONE
_CANCEL_OLDEST, _CANCEL_NEWEST, _CANCEL_BOTH = SelfMatch.CANCEL_OLDEST, SelfMatch.CANCEL_NEWEST, SelfMatch.CANCEL_BOTH
_PENDING, _NEW, _PARTIAL = OrderStatus.PENDING, OrderStatus.NEW, OrderStatus.PARTIALLY_FILLED
_FILLED, _CANCELLED = OrderStatus.FILLED, OrderStatus.CANCELLED
_GTC, _DAY = TIF.GTC, TIF.DAY
_RESTING_STATUSES = frozenset({_NEW, _PARTIAL})

SEQ_BITS = 48
"""Bits of a heap key that hold the arrival sequence number (see the module docstring)."""
SEQ_SPAN = 1 << SEQ_BITS
"""``key = k0 * SEQ_SPAN + arrival_seq``; a book's ``arrival_seq`` stays below it."""
_SEQ_MASK = SEQ_SPAN - 1
# Checked once per submit, leaving 2**40 numbers for what the submit itself hands out
# (one per fired stop, up to two per fill): using them up in one call would take
# hundreds of cascading stops for MAX_QTY, each filled one unit at a time.
_SEQ_LIMIT = SEQ_SPAN - (1 << 40)

# A bound every price passes: bids and sell stops hold negated prices, asks at most MAX_PRICE.
_NO_LIMIT = MAX_PRICE
_NO_LIMIT_KEY = _NO_LIMIT * SEQ_SPAN + _SEQ_MASK
_ARRIVAL = attrgetter("arrival_seq")



def _popped_up_to(heap: list[int], limit: int) -> Iterator[int]:
    """Pop and yield the keys of ``heap`` that are ``<= limit``, smallest first, as the caller asks.

    The caller pushes back the keys it keeps and drops the dead or stale ones for good,
    so each of those is walked once in its life, by whichever walk meets it first: a walk
    costs O((m + d) log n) for m keys kept and d dropped, and the d are paid for by the
    removals that left them. Keys are unique, so pushing a key back restores exactly the
    order the heap gives, whatever shape the list takes.

    >>> heap = [1, 4, 2, 9, 5, 3]
    >>> list(_popped_up_to(heap, 4)), sorted(heap)
    ([1, 2, 3, 4], [5, 9])
    """
    while heap and heap[0] <= limit:
        yield heappop(heap)


def _take_refreshed_peaks(queue: list[list[int]], left: int, steps: int) -> tuple[int, int]:
    """Take one level's refreshed iceberg peaks in turn, as matching would; return ``(left, steps)``.

    ``queue`` holds ``[hidden quantity, display_qty]`` per iceberg, in the order their
    first peaks were taken, which is the order they went to the back of the level.
    Each peak taken is a step and goes back if more is hidden. Stops when the FOK is
    filled (``left <= 0``), the steps are used up or the level is empty (``queue`` is
    emptied then). O(peaks taken), and each is a step.

    >>> _take_refreshed_peaks([[5, 2], [1, 3]], 6, 10)  # peaks 2, 1, 2, then 1 of the last 1
    (0, 6)
    >>> _take_refreshed_peaks([[5, 2]], 9, 2)  # two steps take 2 + 2
    (5, 0)
    """
    turn = deque(queue)
    queue.clear()
    while turn:
        if not steps:
            return left, 0
        entry = turn.popleft()
        hidden, display = entry
        peak = display if display < hidden else hidden
        steps -= 1
        left -= peak
        if left <= 0:
            return left, steps
        if hidden > peak:
            entry[0] = hidden - peak
            turn.append(entry)
    return left, steps


def heap_key(k0: int, arrival_seq: int) -> int:
    """The heap key of ``(k0, arrival_seq)``: ``k0 * SEQ_SPAN + arrival_seq``. O(1).

    Keys order exactly as the tuples do, for ``0 <= arrival_seq < SEQ_SPAN``:

    >>> heap_key(-101, 7) < heap_key(-100, 3) < heap_key(-100, 4)
    True
    >>> split_key(heap_key(-100, 4))
    (-100, 4)
    """
    return k0 * SEQ_SPAN + arrival_seq


def split_key(key: int) -> tuple[int, int]:
    """``(k0, arrival_seq)`` of a heap key; the inverse of ``heap_key``. O(1).

    A right shift floors, so a negative ``k0`` comes back whole.
    """
    return key >> SEQ_BITS, key & _SEQ_MASK


class OrderBook:
    """The limit order book of one symbol, following ``edumatcher.rules`` to the letter.

    Contract: prices are int ticks (``edumatcher.ticks``); the book owns every
    ``Order`` it accepts and writes its book-set fields (status, quantities,
    ``arrival_seq``, ``timestamp_ns``); callers read them but do not change them.

    Methods, by purpose:

    * change the book: ``submit``, ``cancel``, ``cancel_owner``. Each call that is not
      refused starts a new ``events`` list (so a caller may keep the previous one); a
      refused ``submit`` leaves ``events`` as it was, and a ``cancel`` that finds
      nothing leaves it empty
    * read the book: ``best_bid``, ``best_ask``, ``depth``, ``get``, ``len(book)``,
      ``last_price``, ``events``
    * prove it: ``check_invariants``, ``heap_entries``

    Memory per resting order is measured, not stated: ``resting_order_bytes()`` in
    ``edumatcher.benchmarks.book_bounds`` rests n orders and divides the ``tracemalloc``
    growth by n (the ``Order`` object, its heap key, the ``_entries``/``_live``/owner
    index entries and its share of the level index). Run
    ``python -m edumatcher.benchmarks.book_bounds`` for the figure on your interpreter.

    >>> from edumatcher.model import Order, Side, OrderType, TIF
    >>> book = OrderBook("XYZ")
    >>> book.submit(Order("s1", "XYZ", Side.SELL, OrderType.LIMIT, TIF.GTC, 5, 101, owner="ann"))
    []
    >>> [(t.price, t.qty, t.resting_order_id) for t in
    ...  book.submit(Order("b1", "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 3, 102, owner="bob"))]
    [(101, 3, 's1')]
    >>> book.depth(), book.last_price, len(book)
    (([], [(101, 1, 2)]), 101, 1)
    """

    def __init__(
        self,
        symbol: str,
        last_price: int | None = None,
        *,
        compact_factor: float = COMPACT_FACTOR,
        compact_slack: int = COMPACT_SLACK,
        max_matches: int = MAX_MATCHES_PER_ORDER,
    ) -> None:
        """Create an empty book for ``symbol``; ``last_price`` seeds stop triggering. O(1).

        ``max_matches`` is the match limit of ``rules.py`` (trades plus self-match
        actions one order may take); tests set it small to reach it with few orders.
        """
        self.symbol = symbol
        if type(max_matches) is not int or max_matches < 1:
            raise ValueError(f"max_matches must be an int >= 1, not {max_matches!r}")
        self.max_matches = max_matches
        self.last_price = last_price
        self.events: list[Event] = []
        if not compact_factor >= 1 or not compact_slack >= 0:
            raise ValueError(f"need compact_factor >= 1 and compact_slack >= 0, not {compact_factor!r}, {compact_slack!r}")
        self._compact_factor = compact_factor
        self._compact_slack = compact_slack
        self._bids: list[int] = []
        self._asks: list[int] = []
        self._buy_stops: list[int] = []
        self._sell_stops: list[int] = []
        self._entries: dict[str, int] = {}  # order id -> its key
        self._live: dict[int, Order] = {}  # key -> its order; a key not here is dead
        self._bid_levels: dict[int, list[int]] = {}
        self._ask_levels: dict[int, list[int]] = {}
        self._bid_prices: list[int] = []  # -price of each bid level (and stale entries)
        self._ask_prices: list[int] = []  # price of each ask level (and stale entries)
        # A defaultdict: filing an order is one subscript, with no "first order of this
        # owner?" test; readers use .get() so they never create empty sets.
        self._owners: defaultdict[str, set[str]] = defaultdict(set)
        self._seq = 0  # last arrival_seq handed out
        # submit files a resting order inline unless a subclass changed how keys are built
        cls = type(self)
        self._plain_keys = cls._resting_key is OrderBook._resting_key and cls._push_resting is OrderBook._push_resting
        self._trade_seq = 0  # last Trade.seq handed out
        self._dead = 0

    # ------------------------------------------------------------------ changing the book

    def submit(self, order: Order, *, now_ns: int = 0) -> list[Trade]:
        """Accept ``order``, match it, rest or cancel its remainder, then run the stops it fires.

        Returns this call's trades in execution order; ``events`` holds everything that
        happened. ``now_ns`` is stamped on the order and on every trade of the call.
        A refused order raises ``OrderRejected`` before anything changes (``events``
        included: they still describe the previous call). An accepted order may first
        renumber the live orders' ``arrival_seq`` (``_renumber``; once in 2**48 arrivals).

        Complexity: O(log n) to rest, O(log n) per trade, O(1) for stops that do not
        fire (only the tops of the stop heaps are looked at); amortised, because dead
        entries met at the top of a heap are popped on the way. At most ``max_matches``
        trades and self-match actions per order run (the match limit of ``rules.py``),
        so O(max_matches log n) for the submitted order and for each stop it fires.

        >>> from edumatcher.model import Order, Side, OrderType, TIF
        >>> book = OrderBook("XYZ")
        >>> book.submit(Order("b1", "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 4, 100, owner="bob"), now_ns=7)
        []
        >>> trades = book.submit(Order("s1", "XYZ", Side.SELL, OrderType.MARKET, TIF.IOC, 6, None, owner="ann"))
        >>> [(t.price, t.qty, t.seq) for t in trades], [kind for kind, _ in book.events]
        ([(100, 4, 1)], ['trade', 'cancelled'])
        """
        # This is the hot path, written as one function on purpose: the loop below runs
        # the submitted order, then each stop it fires, with the same code and without a
        # call per order. Locals are bound once; the common case (a plain limit order, no
        # self-match, no iceberg) takes no branch it does not need.
        # The rules' checks as one expression for the common order (a plain LIMIT with
        # well-typed fields), whose truth implies validate_new_order would pass; anything
        # else, and every order it would refuse, goes through validate_new_order itself.
        # type() is not isinstance(): exact types are the fast, unambiguous case.
        symbol = self.symbol
        qty = order.qty
        price = order.price
        oid = order.id
        owner = order.owner
        if not (
            order.order_type is _LIMIT
            and type(qty) is int and 1 <= qty <= MAX_QTY
            and type(price) is int and 1 <= price <= MAX_PRICE
            and type(oid) is str and oid and type(owner) is str and owner
            and type(order.symbol) is str and order.symbol == symbol
            and type(order.side) is Side and type(order.tif) is TIF and type(order.smp) is SelfMatch
            and order.stop_price is None and order.display_qty is None
        ):
            validate_new_order(order, symbol)
        entries = self._entries
        if oid in entries:
            raise OrderRejected(RejectReason.DUPLICATE_ID, f"order id {oid!r} is already live in the book")
        if self._seq >= _SEQ_LIMIT:  # after years of arrivals: nothing below can refuse the order now
            self._renumber()
        self.events = events = []
        trades: list[Trade] = []
        self._seq = order.arrival_seq = self._seq + 1
        order.filled_qty = 0
        order.remaining_qty = qty
        display = order.display_qty
        order.visible_qty = qty if display is None else display  # display <= qty was validated
        order.timestamp_ns = now_ns
        order.status = _NEW
        # Only STOP and STOP_LIMIT orders have a stop_price (validated): one test, no enum.
        if order.stop_price is not None and not self._file_or_fire_stop(order, events):
            return trades  # filed as a pending stop: nothing else can happen
        owners = self._owners
        while True:  # one pass per order run: the submitted one, then each stop it fires
            price = order.price
            if order.side is _BUY:
                is_buy = True
                heap = self._asks
                bound = _NO_LIMIT if price is None else price
            else:
                is_buy = False
                heap = self._bids
                bound = _NO_LIMIT if price is None else -price
            # The largest key at a price within the bound: k0 <= bound <=> key <= limit.
            limit = _NO_LIMIT_KEY if price is None else bound * SEQ_SPAN + _SEQ_MASK
            remaining = order.remaining_qty
            tif = order.tif
            killed = False  # set when self-match prevention cancels the order
            # Keys only grow down a heap, so a top beyond the bound (dead or alive) means
            # nothing crosses: the order just rests, and the matching locals are not bound.
            # A FOK that cannot fill now skips matching and is cancelled below, untouched.
            if heap and heap[0] <= limit and (tif is not _FOK or self._fok_can_fill(order, is_buy, bound)):
                levels = self._ask_levels if is_buy else self._bid_levels
                live = self._live
                oid = order.id
                owner = order.owner
                side = order.side
                smp = order.smp
                a_display = order.display_qty
                a_vis = order.visible_qty
                symbol = self.symbol
                tseq = tseq0 = self._trade_seq
                # The match limit as a trade number: each self-match action moves it one closer.
                last_step = tseq0 + self.max_matches
                r_price = 0
                start = remaining  # an order is run unfilled: new, or a stop that just fired
                decremented = 0  # quantity taken away by DECREMENT, not by fills
                while heap:
                    key = heap[0]
                    resting = live.get(key)
                    if resting is None:  # dead: pop it on the way
                        heappop(heap)
                        self._dead -= 1
                        continue
                    if key > limit:
                        break
                    if tseq == last_step:  # the match limit: it still crosses, so its rest is cancelled
                        killed = True
                        break
                    if smp is not _SMP_NONE and resting.owner == owner:
                        last_step -= 1
                        if smp is _CANCEL_OLDEST:
                            self._cancel_live(key, events)
                            continue
                        if smp is _CANCEL_NEWEST:
                            killed = True
                            break
                        if smp is _CANCEL_BOTH:
                            self._cancel_live(key, events)
                            killed = True
                            break
                        # DECREMENT: the smaller side is cancelled, the larger shrinks by it.
                        r = resting.remaining_qty
                        if remaining > r:
                            self._cancel_live(key, events)
                            remaining -= r
                            decremented += r
                            if a_vis > remaining:
                                a_vis = remaining
                            continue
                        if r > remaining:
                            # The resting order keeps its place; what it shows can only shrink.
                            v = resting.visible_qty
                            r -= remaining
                            resting.remaining_qty = r
                            lv = levels[resting.price]
                            if v > r:
                                lv[1] -= v - r
                                lv[2] -= remaining - (v - r)
                                resting.visible_qty = r
                            else:
                                lv[2] -= remaining
                        else:
                            self._cancel_live(key, events)
                        killed = True
                        break
                    r_vis = resting.visible_qty
                    q = remaining if remaining < r_vis else r_vis
                    r_price = resting.price
                    rid = resting.id
                    tseq += 1
                    if is_buy:
                        trade = Trade(symbol, r_price, q, oid, rid, oid, rid, owner, resting.owner, side, tseq, now_ns)
                    else:
                        trade = Trade(symbol, r_price, q, rid, oid, oid, rid, resting.owner, owner, side, tseq, now_ns)
                    trades.append(trade)
                    events.append(("trade", trade))
                    resting.filled_qty += q
                    r_rem = resting.remaining_qty - q
                    resting.remaining_qty = r_rem
                    lv = levels[r_price]
                    if r_rem:
                        resting.status = _PARTIAL
                        r_vis -= q
                        if r_vis:
                            resting.visible_qty = r_vis
                            lv[1] -= q
                        else:  # an iceberg's peak is gone: refresh it at the back of its level
                            r_vis = resting.display_qty
                            if r_vis > r_rem:
                                r_vis = r_rem
                            resting.visible_qty = r_vis
                            lv[1] += r_vis - q
                            lv[2] -= r_vis  # the new peak comes out of the hidden quantity
                            self._seq = resting.arrival_seq = self._seq + 1
                            heappop(heap)
                            del live[key]
                            entries[rid] = self._push_resting(resting)
                    else:
                        resting.status = _FILLED
                        resting.visible_qty = 0
                        heappop(heap)
                        del entries[rid]
                        del live[key]
                        ids = owners[resting.owner]
                        if len(ids) == 1:
                            del owners[resting.owner]
                        else:
                            ids.discard(rid)
                        if lv[0] == 1:
                            del levels[r_price]
                        else:  # its hidden quantity was already 0
                            lv[0] -= 1
                            lv[1] -= q
                    remaining -= q
                    if a_display is not None:
                        a_vis -= q
                        if a_vis <= 0:
                            a_vis = 0
                            if remaining:  # the aggressor's peak refreshes too, after the resting one
                                a_vis = a_display if a_display < remaining else remaining
                                self._seq = order.arrival_seq = self._seq + 1
                    if not remaining:
                        break
                if tseq != tseq0:
                    self._trade_seq = tseq
                    self.last_price = r_price
                order.filled_qty = filled = start - remaining - decremented
                order.remaining_qty = remaining
                order.visible_qty = remaining if a_display is None else a_vis
                if not remaining:
                    order.status = _FILLED
                elif filled:
                    order.status = _PARTIAL
            if not remaining:
                pass
            elif not killed and price is not None and (tif is _GTC or tif is _DAY):
                oid = order.id
                if self._plain_keys:  # _push_resting inlined (a call and a key method saved)
                    if is_buy:
                        key = -price * SEQ_SPAN + order.arrival_seq
                        heappush(self._bids, key)
                    else:
                        key = price * SEQ_SPAN + order.arrival_seq
                        heappush(self._asks, key)
                    self._live[key] = order
                    entries[oid] = key
                else:  # a subclass builds its own keys (the differential test plants a bug so)
                    entries[oid] = self._push_resting(order)
                own_levels = self._bid_levels if is_buy else self._ask_levels
                lv = own_levels.get(price)
                vis = order.visible_qty
                if lv is None:
                    own_levels[price] = [1, vis, remaining - vis]
                    # The new level's price goes on its side's price heap (``depth``).
                    prices = self._bid_prices if is_buy else self._ask_prices
                    heappush(prices, -price if is_buy else price)
                    if len(prices) > 2 * len(own_levels) + COMPACT_SLACK:
                        self._rebuild_prices(is_buy)
                else:
                    lv[0] += 1
                    lv[1] += vis
                    if vis != remaining:  # an iceberg with something hidden
                        lv[2] += remaining - vis
                owners[order.owner].add(oid)
            else:  # MARKET, IOC, FOK, or stopped by self-match prevention: never rests
                order.status = _CANCELLED
                events.append(("cancelled", order))
            # Stops can only fire after a trade moved last_price; then fire the best one, if any.
            if not trades or not (self._buy_stops or self._sell_stops):
                break
            order = self._fire_next_stop(events)
            if order is None:
                break
        # Every way a submit shrinks the live count (a fill, a self-match cancel, a stop
        # leaving its heap) leaves an event; only then can the compaction bound be broken.
        if events:
            n_live = len(entries)
            if n_live + self._dead > self._compact_factor * n_live + self._compact_slack:
                self._compact()
        return trades

    def cancel(self, order_id: str) -> bool:
        """Cancel a resting order or pending stop; False (and no change) for any other id.

        Marks the order's heap key dead and updates the indexes: amortised O(1) for a
        compaction factor above 1 (compaction, O(n), runs after Omega(n) cancels);
        O(n / slack) amortised for factor 1, which rebuilds every ``slack + 1`` cancels.

        >>> from edumatcher.model import Order, Side, OrderType, TIF
        >>> book = OrderBook("XYZ")
        >>> _ = book.submit(Order("b1", "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 4, 100, owner="bob"))
        >>> book.cancel("b1"), book.cancel("b1"), len(book)
        (True, False, 0)
        """
        entries = self._entries
        try:
            key = entries.pop(order_id, None)
        except TypeError:  # an unhashable id is not live either
            key = None
        if key is None:
            if self.events:  # cleared, without allocating when it already is
                self.events = []
            return False
        # Inlined _cancel_live: cancel is a third of the standard workload.
        order = self._live.pop(key)  # its key is dead from now on
        owner = order.owner
        ids = self._owners[owner]
        if len(ids) == 1:
            del self._owners[owner]
        else:
            ids.discard(order_id)
        if order.status is not _PENDING:
            levels = self._bid_levels if order.side is _BUY else self._ask_levels
            price = order.price
            lv = levels[price]
            if lv[0] == 1:
                del levels[price]
            else:
                lv[0] -= 1
                lv[1] -= order.visible_qty
                lv[2] -= order.remaining_qty - order.visible_qty
        order.status = _CANCELLED
        self.events = [("cancelled", order)]
        self._dead = dead = self._dead + 1
        n_live = len(entries)
        if n_live + dead > self._compact_factor * n_live + self._compact_slack:
            self._compact()
        return True

    def cancel_owner(self, owner: str) -> list[str]:
        """Cancel every live order of ``owner`` in ``arrival_seq`` order; return their ids.

        O(k log k) for the owner's k live orders (the sort), plus amortised compaction.

        >>> from edumatcher.model import Order, Side, OrderType, TIF
        >>> book = OrderBook("XYZ")
        >>> for oid in ("a", "b"):
        ...     _ = book.submit(Order(oid, "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 1, 100, owner="ann"))
        >>> book.cancel_owner("ann"), book.cancel_owner("ann")
        (['a', 'b'], [])
        """
        self.events = events = []
        try:
            ids = self._owners.get(owner)
        except TypeError:
            return []
        if not ids:
            return []
        entries, live = self._entries, self._live
        doomed = sorted((live[entries[oid]] for oid in ids), key=_ARRIVAL)
        cancelled = [order.id for order in doomed]
        for order in doomed:
            self._cancel_live(entries[order.id], events)
        n_live = len(entries)
        if n_live + self._dead > self._compact_factor * n_live + self._compact_slack:
            self._compact()
        return cancelled

    # ------------------------------------------------------------------ reading the book

    def best_bid(self) -> int | None:
        """Highest bid price in ticks, or None. Amortised O(1): pops dead entries off the top.

        >>> from edumatcher.model import Order, Side, OrderType, TIF
        >>> book = OrderBook("XYZ")
        >>> _ = book.submit(Order("b1", "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 4, 100, owner="bob"))
        >>> book.best_bid(), book.best_ask()
        (100, None)
        """
        top = self._live_top(self._bids)
        return None if top is None else self._live[top].price

    def best_ask(self) -> int | None:
        """Lowest ask price in ticks, or None. Amortised O(1): pops dead entries off the top."""
        top = self._live_top(self._asks)
        return None if top is None else self._live[top].price

    def depth(self, levels: int | None = None) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """Return ``(bids, asks)``: ``(price, order_count, displayed_qty)`` per level, best first.

        ``levels`` keeps the first N of each side. Hidden iceberg quantity is not shown.
        Counts and quantities come from the level index. All levels: O(L log L) for L
        price levels (a sort). The first N: each side's price heap is popped in priority
        order and the N prices pushed back (``_best_prices``), O(N log L) however many
        orders the book holds; a stale entry met on the way is dropped for good, so each
        costs one pop in its life, paid for by the level removal that left it.

        >>> from edumatcher.model import Order, Side, OrderType, TIF
        >>> book = OrderBook("XYZ")
        >>> _ = book.submit(Order("i1", "XYZ", Side.SELL, OrderType.LIMIT, TIF.GTC, 50, 105, display_qty=10, owner="ann"))
        >>> _ = book.submit(Order("s2", "XYZ", Side.SELL, OrderType.LIMIT, TIF.GTC, 5, 104, owner="ann"))
        >>> book.depth()
        ([], [(104, 1, 5), (105, 1, 10)])
        >>> book.depth(levels=1)
        ([], [(104, 1, 5)])
        """
        if levels is not None and (type(levels) is not int or levels < 0):
            raise ValueError(f"levels must be None or an int >= 0, not {levels!r}")
        bl, al = self._bid_levels, self._ask_levels
        if levels is None:
            bid_prices = sorted(bl, reverse=True)
            ask_prices = sorted(al)
        else:
            bid_prices = self._best_prices(levels, is_bid=True)
            ask_prices = self._best_prices(levels, is_bid=False)
        return (
            [(p, bl[p][0], bl[p][1]) for p in bid_prices],
            [(p, al[p][0], al[p][1]) for p in ask_prices],
        )

    def _best_prices(self, n: int, *, is_bid: bool) -> list[int]:
        """The ``n`` best prices of one side, best first (see ``depth``). O(n log L) amortised.

        Pops the side's price heap until it has ``n`` prices with a level, drops the stale
        entries it pops (a removed level, a re-created level's second entry), and pushes
        the ``n`` back.
        """
        index = self._bid_levels if is_bid else self._ask_levels
        if n == 0:
            return []
        if n >= len(index):
            return sorted(index, reverse=is_bid)
        heap = self._bid_prices if is_bid else self._ask_prices
        kept: list[int] = []
        try:
            for k0 in _popped_up_to(heap, _NO_LIMIT):
                if (-k0 if is_bid else k0) in index and (not kept or kept[-1] != k0):
                    kept.append(k0)
                    if len(kept) == n:
                        break
        finally:
            for k0 in kept:
                heappush(heap, k0)
        return [-k0 for k0 in kept] if is_bid else kept

    def _rebuild_prices(self, is_bid: bool) -> None:
        """Rebuild one side's price heap from its level index, dropping stale entries. O(L)."""
        if is_bid:
            heap, keys = self._bid_prices, [-p for p in self._bid_levels]
        else:
            heap, keys = self._ask_prices, list(self._ask_levels)
        heap[:] = keys
        heapify(heap)

    def get(self, order_id: str) -> Order | None:
        """The live order (resting or pending stop) with this id, or None. O(1).

        >>> OrderBook("XYZ").get("nope") is None
        True
        """
        try:
            key = self._entries.get(order_id)
        except TypeError:
            return None
        return None if key is None else self._live[key]

    def __len__(self) -> int:
        """Number of live orders: resting plus pending stops. O(1)."""
        return len(self._entries)

    def __repr__(self) -> str:
        return f"OrderBook({self.symbol!r}, live={len(self._entries)}, last_price={self.last_price!r})"

    def heap_entries(self) -> int:
        """Entries held by the four heaps, dead ones included (for tests and exercises). O(1).

        >>> OrderBook("XYZ").heap_entries()
        0
        """
        return len(self._bids) + len(self._asks) + len(self._buy_stops) + len(self._sell_stops)

    # ------------------------------------------------------------------ the matching engine

    def _resting_key(self, order: Order) -> int:
        """The heap key of a resting order: ``heap_key(-price or price, arrival_seq)``. O(1).

        The one place a resting key is built: a subclass may override this to plant a
        priority bug (the differential test does).
        """
        if order.side is _BUY:
            return -order.price * SEQ_SPAN + order.arrival_seq
        return order.price * SEQ_SPAN + order.arrival_seq

    def _push_resting(self, order: Order) -> int:
        """File a resting order: push its key on its side's heap, map the key to it; return the key. O(log n)."""
        key = self._resting_key(order)
        heappush(self._bids if order.side is _BUY else self._asks, key)
        self._live[key] = order
        return key

    def _push_stop(self, order: Order) -> int:
        """File a pending stop and return its key: buy stops by lowest, sell stops by highest stop price. O(log n)."""
        if order.side is _BUY:
            key = order.stop_price * SEQ_SPAN + order.arrival_seq
            heappush(self._buy_stops, key)
        else:
            key = -order.stop_price * SEQ_SPAN + order.arrival_seq
            heappush(self._sell_stops, key)
        self._live[key] = order
        return key

    def _fok_can_fill(self, order: Order, is_buy: bool, bound: int) -> bool:
        """Can ``order`` (a FOK) fill completely right now, as ``rules.py`` says? No change to what the book holds.

        Plays the matching forward on numbers only: the crossed orders come in priority
        order (``_popped_up_to``: live keys are pushed back afterwards, dead ones dropped
        for good, as matching would drop them), each live one is a step, and the peaks
        that icebergs refresh at the back of a level come round once that level's orders
        are done, as they would in matching. It stops as soon as it knows, and at the
        match limit: O((m + d) log n) for m <= ``max_matches`` live orders examined and d
        dead keys dropped (each dead key once in its life, paid for by its cancel), never
        every level or everything the owner holds.
        """
        left = order.remaining_qty
        steps = self.max_matches
        smp = order.smp
        smp_on = smp is not _SMP_NONE
        # CANCEL_OLDEST cancels the owner's orders it meets and matching goes on: each is
        # a step that fills nothing. Any other mode ends or shrinks the FOK at its first one.
        skip_own = smp is _CANCEL_OLDEST
        owner = order.owner
        live = self._live
        refreshed: list[list[int]] = []  # [hidden remaining, display_qty] of this level's icebergs
        level = None
        heap = self._asks if is_buy else self._bids
        kept: list[int] = []
        try:
            for key in _popped_up_to(heap, bound * SEQ_SPAN + _SEQ_MASK):
                o = live.get(key)
                if o is None:
                    self._dead -= 1  # dropped, as matching's own walk would drop it
                    continue
                kept.append(key)
                if o.price != level:
                    if refreshed:  # the level is done: its refreshed peaks are taken in turn
                        left, steps = _take_refreshed_peaks(refreshed, left, steps)
                        if left <= 0:
                            return True
                        if steps <= 0:
                            return False
                    level = o.price
                if not steps:
                    return False  # one more step needed, none left
                steps -= 1
                if smp_on and o.owner == owner:
                    if skip_own:
                        continue
                    return False  # matching would meet its own order before filling
                vis = o.visible_qty
                if left <= vis:
                    return True
                left -= vis
                hidden = o.remaining_qty - vis
                if hidden:
                    refreshed.append([hidden, o.display_qty])
            if refreshed:
                left, steps = _take_refreshed_peaks(refreshed, left, steps)
            return left <= 0
        finally:
            for key in kept:
                heappush(heap, key)

    def _file_or_fire_stop(self, order: Order, events: list[Event]) -> bool:
        """Fire a new stop at once if ``last_price`` allows (return True), else file it PENDING. O(log n)."""
        last = self.last_price
        stop = order.stop_price
        if last is not None and (last >= stop if order.side is _BUY else last <= stop):
            self._fire(order, events)
            return True
        order.status = _PENDING
        self._entries[order.id] = self._push_stop(order)
        self._owners[order.owner].add(order.id)
        return False

    def _fire(self, order: Order, events: list[Event]) -> None:
        """A stop triggers: status NEW, a fresh ``arrival_seq``, a "triggered" event; the caller runs it."""
        order.status = _NEW
        self._seq = order.arrival_seq = self._seq + 1
        events.append(("triggered", order))

    def _fire_next_stop(self, events: list[Event]) -> Order | None:
        """Take out and fire the best triggerable stop, buy stops first; None if none can fire.

        O(1) when nothing fires (the tops of the two stop heaps are compared), amortised
        over the dead entries popped on the way; O(log n) to take one out.
        """
        last = self.last_price
        live = self._live
        buy_stops = self._buy_stops
        while buy_stops and buy_stops[0] not in live:
            heappop(buy_stops)
            self._dead -= 1
        # A buy stop fires when stop_price <= last, a sell stop when -stop_price <= -last.
        if buy_stops and buy_stops[0] <= last * SEQ_SPAN + _SEQ_MASK:
            heap = buy_stops
        else:
            sell_stops = self._sell_stops
            while sell_stops and sell_stops[0] not in live:
                heappop(sell_stops)
                self._dead -= 1
            if sell_stops and sell_stops[0] <= -last * SEQ_SPAN + _SEQ_MASK:
                heap = sell_stops
            else:
                return None
        order = live.pop(heappop(heap))
        del self._entries[order.id]
        self._forget_owner(order)
        self._fire(order, events)
        return order

    def _cancel_live(self, key: int, events: list[Event]) -> None:
        """Take a live order out of the book (any cause): mark its key dead, fix every index. O(1)."""
        order = self._live.pop(key)
        self._dead += 1
        del self._entries[order.id]
        self._forget_owner(order)
        if order.status is not _PENDING:
            levels = self._bid_levels if order.side is _BUY else self._ask_levels
            lv = levels[order.price]
            if lv[0] == 1:
                del levels[order.price]
            else:
                lv[0] -= 1
                lv[1] -= order.visible_qty
                lv[2] -= order.remaining_qty - order.visible_qty
        order.status = _CANCELLED
        events.append(("cancelled", order))

    def _forget_owner(self, order: Order) -> None:
        """Drop a live order from its owner's set, and the set when it empties. O(1)."""
        ids = self._owners[order.owner]
        if len(ids) == 1:
            del self._owners[order.owner]
        else:
            ids.discard(order.id)

    def _compact(self) -> None:
        """Drop every dead key from the four heaps and re-heapify them. O(n)."""
        live = self._live
        for heap in (self._bids, self._asks, self._buy_stops, self._sell_stops):
            heap[:] = [key for key in heap if key in live]
            heapify(heap)
        self._dead = 0

    def _renumber(self) -> None:
        """Give the live orders arrival numbers 1, 2, ... in their present order; rebuild the heaps. O(n log n).

        Keeps every key below ``SEQ_SPAN`` in a book that has taken nearly 2**48
        arrivals. Priority does not change: it depends on how arrival numbers compare,
        and their order is kept. What does change is each live order's ``arrival_seq``.
        Dead keys are dropped on the way.
        """
        orders = sorted(self._live.values(), key=_ARRIVAL)
        self._live.clear()
        for heap in (self._bids, self._asks, self._buy_stops, self._sell_stops):
            heap.clear()
        self._dead = 0
        entries = self._entries
        for seq, order in enumerate(orders, 1):
            order.arrival_seq = seq
            entries[order.id] = self._push_stop(order) if order.status is _PENDING else self._push_resting(order)
        self._seq = len(orders)

    def _live_top(self, heap: list[int]) -> int | None:
        """The top key that is live, popping dead ones on the way; None if empty."""
        live = self._live
        while heap:
            top = heap[0]
            if top in live:
                return top
            heappop(heap)
            self._dead -= 1
        return None

    # ------------------------------------------------------------------ proving it

    def check_invariants(self) -> None:
        """Recompute every index from the heaps and compare; raise AssertionError showing the book.

        Checks the heap property and the heap-key invariant, one live key per live
        order, the level, owner and dead-key counts, the compaction bound, an
        uncrossed book and no triggerable pending stop; per live order the quantity
        rules of ``rules.py`` (``qty > 0``, ``filled_qty >= 0``, ``remaining_qty <= qty``,
        ``filled_qty + remaining_qty <= qty``, the status a fill gives) and an
        ``arrival_seq`` no other live order has; non-negative counters. O(n) for n heap
        entries (one pass over the heaps and the indexes); for tests only.
        """
        try:
            self._check()
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.dump()}") from None

    def _check(self) -> None:
        heaps = {"bids": self._bids, "asks": self._asks, "buy_stops": self._buy_stops, "sell_stops": self._sell_stops}
        seen: dict[str, Order] = {}
        dead = 0
        levels: dict[str, dict[int, list[int]]] = {"bids": {}, "asks": {}}
        owners: dict[str, set[str]] = {}
        arrivals: set[int] = set()
        for counter in ("_seq", "_trade_seq", "_dead"):
            value = getattr(self, counter)
            assert type(value) is int and value >= 0, f"{counter} is {value!r}, not an int >= 0"
        assert self._trade_seq == 0 or self.last_price is not None, f"{self._trade_seq} trades but no last_price"
        for name, heap in heaps.items():
            for i, key in enumerate(heap):
                assert type(key) is int, f"{name}[{i}] is not an int key: {key!r}"
                for child in (2 * i + 1, 2 * i + 2):
                    if child < len(heap):
                        assert heap[child] > key, f"{name}: heap order broken between {i} and {child}"
                o = self._live.get(key)
                if o is None:
                    dead += 1
                    continue
                k0, k1 = split_key(key)
                assert isinstance(o, Order), f"{name}[{i}] maps to {o!r}, not an Order"
                assert o.id not in seen, f"order {o.id!r} has two live keys"
                seen[o.id] = o
                assert self._entries.get(o.id) == key, f"live key of {o.id!r} is not the one in _entries"
                assert 0 < o.arrival_seq < SEQ_SPAN, f"{o.id!r} has arrival_seq {o.arrival_seq} outside its key's bits"
                assert o.arrival_seq not in arrivals, f"{o.id!r} shares arrival_seq {o.arrival_seq} with another live order"
                arrivals.add(o.arrival_seq)
                assert type(o.qty) is int and o.qty > 0, f"{o.id!r} has qty {o.qty!r}"
                assert type(o.filled_qty) is int and o.filled_qty >= 0, f"{o.id!r} has filled_qty {o.filled_qty!r}"
                assert type(o.remaining_qty) is int and o.remaining_qty <= o.qty, (
                    f"{o.id!r}: remaining_qty {o.remaining_qty!r} above qty {o.qty}"
                )
                # == qty unless a DECREMENT took quantity away without a fill (rules.py)
                assert o.filled_qty + o.remaining_qty <= o.qty, (
                    f"{o.id!r}: filled {o.filled_qty} + remaining {o.remaining_qty} > qty {o.qty}"
                )
                assert o.symbol == self.symbol, f"order {o.id!r} has symbol {o.symbol!r}"
                is_buy = o.side is _BUY
                if name in ("bids", "asks"):
                    assert (name == "bids") == is_buy, f"order {o.id!r} ({o.side.value}) is in {name}"
                    assert o.status in _RESTING_STATUSES, f"resting order {o.id!r} has status {o.status.value}"
                    assert (o.status is _PARTIAL) == (o.filled_qty > 0), (
                        f"resting order {o.id!r} is {o.status.value} with filled_qty {o.filled_qty}"
                    )
                    assert o.price is not None, f"resting order {o.id!r} has no price"
                    assert (k0, k1) == ((-o.price if is_buy else o.price), o.arrival_seq), (
                        f"key {(k0, k1)} of {o.id!r} does not match price {o.price} / arrival_seq {o.arrival_seq}"
                    )
                    assert 1 <= o.visible_qty <= o.remaining_qty, f"{o.id!r}: visible {o.visible_qty}, remaining {o.remaining_qty}"
                    if o.display_qty is None:
                        assert o.visible_qty == o.remaining_qty, f"plain order {o.id!r} hides quantity"
                    else:
                        assert o.visible_qty <= o.display_qty, f"iceberg {o.id!r} shows more than its peak"
                    lv = levels[name].setdefault(o.price, [0, 0, 0])
                    lv[0] += 1
                    lv[1] += o.visible_qty
                    lv[2] += o.remaining_qty - o.visible_qty
                else:
                    assert (name == "buy_stops") == is_buy, f"stop {o.id!r} ({o.side.value}) is in {name}"
                    assert o.status is _PENDING, f"pending stop {o.id!r} has status {o.status.value}"
                    assert (k0, k1) == ((o.stop_price if is_buy else -o.stop_price), o.arrival_seq), (
                        f"key {(k0, k1)} of stop {o.id!r} does not match stop_price {o.stop_price}"
                    )
                    assert o.remaining_qty == o.qty and o.filled_qty == 0, f"pending stop {o.id!r} has fills"
                assert o.remaining_qty > 0, f"live order {o.id!r} has nothing left"
                assert o.arrival_seq <= self._seq, f"{o.id!r} has arrival_seq from the future"
                owners.setdefault(o.owner, set()).add(o.id)
        assert len(seen) == len(self._entries), (
            f"_entries holds {sorted(set(self._entries) - set(seen))} with no live heap key"
        )
        assert len(self._live) == len(seen), f"_live maps {len(self._live)} keys for {len(seen)} live orders in the heaps"
        assert dead == self._dead, f"_dead is {self._dead} but the heaps hold {dead} dead keys"
        assert levels["bids"] == self._bid_levels, f"bid levels {self._bid_levels} != recomputed {levels['bids']}"
        assert levels["asks"] == self._ask_levels, f"ask levels {self._ask_levels} != recomputed {levels['asks']}"
        for name, heap, index, sign in (("bid", self._bid_prices, self._bid_levels, -1),
                                        ("ask", self._ask_prices, self._ask_levels, 1)):
            assert all(heap[(i - 1) // 2] <= heap[i] for i in range(1, len(heap))), f"{name} price heap breaks heap order"
            missing = set(index) - {sign * k0 for k0 in heap}
            assert not missing, f"{name} levels {sorted(missing)} are not in the {name} price heap"
        assert owners == dict(self._owners), f"owner index {dict(self._owners)} != recomputed {owners}"
        total = self.heap_entries()
        bound = self._compact_factor * len(self._entries) + self._compact_slack
        assert total <= bound, f"{total} heap entries exceed the compaction bound {bound}"
        bid, ask = self.best_bid(), self.best_ask()
        assert bid is None or ask is None or bid < ask, f"book is crossed: bid {bid} >= ask {ask}"
        assert bid is None or bid == max(self._bid_levels), "best_bid disagrees with the level index"
        assert ask is None or ask == min(self._ask_levels), "best_ask disagrees with the level index"
        last = self.last_price
        if last is not None:
            for o in seen.values():
                if o.status is _PENDING:
                    fires = last >= o.stop_price if o.side is _BUY else last <= o.stop_price
                    assert not fires, f"pending stop {o.id!r} (stop {o.stop_price}) should have fired at {last}"

    def dump(self) -> str:
        """The whole book state as text, one line per heap entry (for failure messages). O(n log n)."""
        lines = [
            f"OrderBook {self.symbol!r}: last_price={self.last_price} seq={self._seq} "
            f"trade_seq={self._trade_seq} live={len(self._entries)} dead={self._dead} "
            f"heap_entries={self.heap_entries()} compact={self._compact_factor}*live+{self._compact_slack}"
        ]
        for name, heap in (("bids", self._bids), ("asks", self._asks),
                           ("buy_stops", self._buy_stops), ("sell_stops", self._sell_stops)):
            lines.append(f"  {name} ({len(heap)} entries, heap order):")
            lines.extend(f"    {line}" for line in _describe(heap, self._live))
        lines.append(f"  bid levels: {dict(sorted(self._bid_levels.items(), reverse=True))}")
        lines.append(f"  ask levels: {dict(sorted(self._ask_levels.items()))}")
        lines.append(f"  owners: { {k: sorted(v) for k, v in sorted(self._owners.items())} }")
        lines.append(f"  entries: {sorted(self._entries)}")
        return "\n".join(lines)


def _describe(heap: list[int], live: dict[int, Order]) -> Iterator[str]:
    # Runs on a book that failed its check: it must describe a corrupted entry, not crash on it.
    for key in heap:
        if type(key) is not int:
            yield f"{key!r} NOT AN INT KEY"
            continue
        k0, k1 = split_key(key)
        o = live.get(key)
        if o is None:
            yield f"({k0}, {k1}) DEAD"
            continue
        if not isinstance(o, Order):
            yield f"({k0}, {k1}) maps to {o!r}, NOT AN ORDER"
            continue
        yield (
            f"({k0}, {k1}) live id={o.id!r} owner={o.owner!r} "
            f"{o.side.value} {o.order_type.value} {o.tif.value} price={o.price} stop={o.stop_price} "
            f"status={o.status.value} qty={o.qty} filled={o.filled_qty} remaining={o.remaining_qty} "
            f"visible={o.visible_qty} display={o.display_qty} seq={o.arrival_seq} smp={o.smp.value}"
        )

