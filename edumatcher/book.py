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

Why one int (``edumatcher.chapters.heaps_and_indexes.heaps.entry_layouts`` measures the choices): an
int holds no reference, so the cyclic collector never tracks it; a resting order costs
the collector one tracked object, the ``Order`` itself, and a dead key costs none (a
``[k0, k1, order]`` list entry was a second tracked object per order, and stayed one
while dead). Every young collection walks each tracked object that arrived since the
last (chapter 10, ``bench gc``). Comparing two ints is also one C comparison, where two
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
* ``_bid_prices`` / ``_ask_prices``: heaps of ``-price`` / ``price``, each price at most
  once (``_bid_in_heap`` / ``_ask_in_heap`` say which are in). Every level's price is in
  its heap; an entry whose level is gone is stale: when its level comes back it is
  valid again, and when met while stale it is dropped. ``depth(k)`` pops these in
  priority order and pushes back what it keeps. A side holding more than twice its
  levels (plus ``COMPACT_SLACK``) when a level is made is compacted; ``_price_marks``
  keeps each side's level count at that moment, so at any time a price heap holds at
  most ``2 * mark + COMPACT_SLACK`` entries (removing a level adds a stale entry, never
  a new one).
* ``_owners``: owner -> ``{id: Order}`` of the owner's live orders in the order they
  entered the book (filed as a pending stop, or rested), since the owner's last mass
  cancel: ``cancel_owner`` moves that dict, whole and in O(1), into a **mass-cancel
  job** (``_jobs``), which walks it a step at a time; ``_job_live`` counts, per owner,
  the live orders that only a job still holds. The FOK pre-check does not walk it:
  what an owner holds elsewhere (thousands of pending stops, say) costs a FOK nothing.
* ``_buy_elect`` / ``_sell_elect``: the election prices of ``rules.py`` ("Stops"). A
  pending stop is elected when its key is at or below the bound they give, so the
  elected stops are always a prefix of their heap: the best one is its top.
* ``_dead``: the number of dead keys in all four heaps (the compaction trigger).

Compaction: when the four heaps hold more than ``compact_factor * live + compact_slack``
entries, dead keys are removed. Without a budget (``budget=None``, the default) all of
them go at once, in the call that broke the bound: the heaps are filtered and
re-heapified, O(n). A compaction leaves only live entries, and with a factor ``f > 1``
the next one needs more than ``(f - 1) * live + slack`` dead entries, so Omega(n)
cancels pay for it: cancelling is amortised O(1). With ``f = 1`` the next rebuild comes
after only ``slack + 1`` cancels, so a cancel costs O(n / slack) amortised (chapter 07
measures both). Amortised is not bounded, though: that one cancel pays O(n) (a second
at a million orders). With a budget (the engine's books) the bound only starts a
*pass*, and ``maintain()`` runs it a slice at a time: a heap of at most
``COMPACT_INLINE_MAX`` entries is filtered and re-heapified whole (in C, a bounded
cost), a bigger one is walked from its end, ``COMPACT_SLICE`` entries per slice, each
dead key taken out where it is (``_remove_at``: the last entry moves into its place
and is sifted, O(log n)), so the heap stays a heap between slices and the matching
goes on using it. A call that finds the heaps far beyond the bound (``maintain()`` not
called) does a slice itself, so memory stays bounded either way. The collector's
incremental collection is the same idea: the work is the same, only cut into pieces
whose size does not grow with the heap.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from heapq import heapify, heappop, heappush
from operator import attrgetter

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
from .rules import MAX_PRICE, MAX_QTY, PROTECTION_TICKS, check_book_settings, validate_new_order

__all__ = [
    "OrderBook", "COMPACT_FACTOR", "COMPACT_SLACK", "COMPACT_INLINE_MAX", "COMPACT_SLICE",
    "SEQ_BITS", "SEQ_SPAN", "Event", "heap_key", "split_key",
]

COMPACT_FACTOR = 2
"""Compact when heap entries exceed ``COMPACT_FACTOR * live + COMPACT_SLACK``."""

COMPACT_SLACK = 64
"""Slack so a nearly empty book does not rebuild its heaps on every cancel."""

COMPACT_INLINE_MAX = 4_096
"""With a budget, a heap of at most this many entries is compacted whole, in C (a few
hundred microseconds); a bigger one a slice at a time."""

COMPACT_SLICE = 2_048
"""With a budget, entries one compaction slice examines; the sifts of the removals it makes
may move entries ``COMPACT_SLICE // 8`` levels in all (each level of a big heap is a cache
miss or three): a few hundred microseconds a slice, whatever the heap's size."""

Event = tuple[str, "Trade | Order"]
"""One entry of ``OrderBook.events``: ``("trade", Trade)``, ``("cancelled", Order)`` or ``("triggered", Order)``."""

# Enum members bound once: an ``is`` test against a module global is the cheapest check.
_BUY, _SELL = Side.BUY, Side.SELL
_LIMIT = OrderType.LIMIT
_FOK = TIF.FOK
_SMP_NONE = SelfMatch.NONE
_CANCEL_OLDEST, _CANCEL_NEWEST, _CANCEL_BOTH = SelfMatch.CANCEL_OLDEST, SelfMatch.CANCEL_NEWEST, SelfMatch.CANCEL_BOTH
_PENDING, _NEW, _PARTIAL = OrderStatus.PENDING, OrderStatus.NEW, OrderStatus.PARTIALLY_FILLED
_FILLED, _CANCELLED = OrderStatus.FILLED, OrderStatus.CANCELLED
_GTC, _DAY = TIF.GTC, TIF.DAY
_RESTING_STATUSES = frozenset({_NEW, _PARTIAL})
_LIVE_STATUSES = frozenset({_NEW, _PARTIAL, _PENDING})
_R_OWNER, _R_MASS, _R_IOC = CancelReason.OWNER_CANCEL, CancelReason.MASS_CANCEL, CancelReason.IOC_REMAINDER
_R_PROTECTION, _R_FOK, _R_SELF = CancelReason.PRICE_PROTECTION, CancelReason.FOK_KILLED, CancelReason.SELF_MATCH

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
_UNLIMITED = 1 << 62  # "no budget" as a step count no call reaches
_new = object.__new__


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


def _remove_at(heap: list[int], i: int) -> int:
    """Take the entry at index ``i`` out of a heap, keeping it a heap; return 1 + the levels the sift moved. O(log n).

    The last entry moves into the hole and is sifted down, or up, to where it belongs:
    the heap stays valid, so a compaction can stop after any removal and let the book
    use the heap before the next slice. A hole near the bottom costs a level or two; one
    near the top up to the heap's height, and on a big heap each level is a cache miss or
    three, so a compaction slice is budgeted in levels, not in removals.

    >>> heap = [1, 3, 2, 7, 4, 5, 6]
    >>> _remove_at(heap, 1), heap[0], sorted(heap)  # 6 fills the hole and moves down one level
    (2, 1, [1, 2, 4, 5, 6, 7])
    >>> all(heap[(j - 1) // 2] <= heap[j] for j in range(1, len(heap)))
    True
    """
    last = heap.pop()
    n = len(heap)
    if i == n:
        return 0
    # Down: move the smaller child up while it is smaller than ``last``.
    pos = i
    child = 2 * pos + 1
    while child < n:
        right = child + 1
        if right < n and heap[right] < heap[child]:
            child = right
        if heap[child] >= last:
            break
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    moved = 0
    # Up (only if it did not move down): move parents down while they are larger.
    if pos == i:
        while pos > 0:
            parent = (pos - 1) >> 1
            if heap[parent] <= last:
                break
            heap[pos] = heap[parent]
            pos = parent
            moved += 1
    else:
        moved = (pos + 1).bit_length() - (i + 1).bit_length()
    heap[pos] = last
    return moved + 1


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


def _client_fields(order: Order) -> tuple[object, ...]:
    """The fields a client set, as filed: a pending stop must keep them (``check_invariants``)."""
    return (order.id, order.side, order.order_type, order.tif, order.qty, order.price, order.stop_price,
            order.display_qty, order.owner, order.smp)


class _MassCancel:
    """One mass cancel in progress: the owner's orders as they were at the request, and a walk over them."""

    __slots__ = ("owner", "orders", "walk", "left")

    def __init__(self, owner: str, orders: dict[str, Order]) -> None:
        self.owner = owner
        self.orders = orders  # never changed after this: the walk below stays valid
        self.walk = iter(orders.items())
        self.left = len(orders)


def _make_resume() -> Order:
    # A private marker passed to submit() by the calls that continue outstanding work: an
    # Order with no order_type fails submit's fast check at its first test, so the hot
    # path pays nothing for it.
    marker = object.__new__(Order)
    marker.id = marker.owner = marker.symbol = ""
    marker.order_type = None  # type: ignore[assignment]
    marker.qty = marker.price = marker.side = marker.tif = marker.smp = None  # type: ignore[assignment]
    return marker


_RESUME = _make_resume()


class OrderBook:
    """The limit order book of one symbol, following ``edumatcher.rules`` to the letter.

    Contract: prices are int ticks (``edumatcher.ticks``); the book owns every
    ``Order`` it accepts and writes its book-set fields (status, quantities,
    ``arrival_seq``, ``timestamp_ns``, ``cancel_reason``, and ``price`` when price
    protection rests an order at its protection price); callers read them but do not
    change them.

    Methods, by purpose:

    * change the book: ``submit``, ``cancel``, ``cancel_owner``, ``maintain``. Each call
      that does something starts a new ``events`` list (so a caller may keep the
      previous one); a refused ``submit`` leaves ``events`` as it was, and a ``cancel``
      that finds nothing leaves it empty
    * read the book: ``best_bid``, ``best_ask``, ``depth``, ``get``, ``len(book)``,
      ``last_price``, ``events``, ``has_outstanding_work``
    * prove it: ``check_invariants``, ``heap_entries``

    ``budget`` (None by default: every call finishes all its work, a library call as
    chapter 07 measures it) is the work budget of ``rules.py``; the engine's books use
    ``rules.WORK_BUDGET`` and call ``maintain()`` between messages. ``protection`` is the
    price protection in ticks (``rules.PROTECTION_TICKS``).

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
        protection: int = PROTECTION_TICKS,
        budget: int | None = None,
    ) -> None:
        """Create an empty book for ``symbol``; ``last_price`` seeds stop elections. O(1).

        ``protection`` (ticks) and ``budget`` (steps, or None) are the price protection and
        the work budget of ``rules.py``; tests set them small to reach them with few orders.
        Invalid settings raise ``ValueError`` here, before the book exists.
        """
        check_book_settings(last_price, protection, budget)
        if not compact_factor >= 1 or not compact_slack >= 0:
            raise ValueError(f"need compact_factor >= 1 and compact_slack >= 0, not {compact_factor!r}, {compact_slack!r}")
        self.symbol = symbol
        self.protection = protection
        self._protection_span = protection * SEQ_SPAN
        self.budget = budget
        self.last_price = last_price
        self.events: list[Event] = []
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
        self._bid_in_heap: set[int] = set()  # prices with an entry in _bid_prices
        self._ask_in_heap: set[int] = set()
        self._owners: dict[str, dict[str, Order]] = {}
        self._jobs: deque[_MassCancel] = deque()
        self._job_live: dict[str, int] = {}
        self._collecting: _MassCancel | None = None  # the job whose cancels cancel_owner returns
        self._collected: list[str] = []
        self._buy_elect: int | None = last_price
        self._sell_elect: int | None = last_price
        # False only when there is surely no stop and no mass cancel: a new stop or mass cancel sets
        # it, and a look that finds neither clears it. One attribute for the hot path to test.
        self._maybe_work = False
        self._skips = 0  # entries mass cancels skipped in the call whose events list is _skips_of
        self._skips_of: list[Event] | None = None
        self._seq = 0  # last arrival_seq handed out
        # submit files a resting order inline unless a subclass changed how keys are built
        cls = type(self)
        self._plain_keys = cls._resting_key is OrderBook._resting_key and cls._push_resting is OrderBook._push_resting
        self._trade_seq = 0  # last Trade.seq handed out
        self._dead = 0
        self._pass: list | None = None  # compaction in progress: [heap index, position or None]
        # True when maintain() may have work: set by a call that ran out of budget or started a
        # compaction pass, brought up to date by maintain(). A flag the engine reads after each
        # message, so a message that leaves nothing behind costs it one attribute load.
        self.work_left = False
        self._price_pass = [-1, -1]  # where the last slice of each price heap stopped (ask, bid)
        self._price_marks = [0, 0]  # (ask, bid) level counts when a price was last pushed (the size bound)
        self._shrunk: dict[Order, int] = {}  # live orders DECREMENT shrank -> quantity taken (check_invariants)
        self._stop_fields: dict[Order, tuple] = {}  # pending stop -> its client fields when filed (check_invariants)

    # ------------------------------------------------------------------ changing the book

    def submit(self, order: Order, *, now_ns: int = 0) -> list[Trade]:
        """Accept ``order``, match it, rest or cancel its remainder, then continue outstanding work.

        Returns this call's trades in execution order; ``events`` holds everything that
        happened. ``now_ns`` is stamped on the order and on every trade of the call.
        A refused order raises ``OrderRejected`` before anything changes (``events``
        included: they still describe the previous call). An accepted order may first
        renumber the live orders' ``arrival_seq`` (``_renumber``; once in 2**48 arrivals).

        Complexity: O(log n) to rest, O(log n) per trade, within the order's protection
        price (its own work: one trade per fill it receives); O(1) for stops that are not
        elected (only the tops of the stop heaps are looked at); amortised, because dead
        entries met at the top of a heap are popped on the way. Then the outstanding work
        (elected stops, mass cancels): all of it without a budget; with one, fewer than
        ``budget`` steps plus one stop's own run. A FOK is decided in O(protection) from
        the level index, or (self-match prevention, an owner with live orders) by a walk of
        at most ``budget`` resting orders.

        >>> from edumatcher.model import Order, Side, OrderType, TIF
        >>> book = OrderBook("XYZ")
        >>> book.submit(Order("b1", "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 4, 100, owner="bob"), now_ns=7)
        []
        >>> trades = book.submit(Order("s1", "XYZ", Side.SELL, OrderType.MARKET, TIF.IOC, 6, None, owner="ann"))
        >>> [(t.price, t.qty, t.seq) for t in trades], [kind for kind, _ in book.events]
        ([(100, 4, 1)], ['trade', 'cancelled'])
        >>> book.events[-1][1].cancel_reason.value
        'IOC_REMAINDER'
        """
        # This is the hot path, written as one function on purpose: the loop below runs
        # the submitted order, then each stop that fires as outstanding work, with the same
        # code and without a call per order. Locals are bound once; the common case (a
        # plain limit order, no self-match, no iceberg, no stops) takes no branch it does
        # not need.
        # The rules' checks as one expression for the common order (a plain LIMIT with
        # well-typed fields), whose truth implies validate_new_order would pass; anything
        # else, and every order it would refuse, goes through validate_new_order itself.
        # type() is not isinstance(): exact types are the fast, unambiguous case. An
        # identity test comes first where the common value is one known object (the book's
        # own symbol string, which the engine and the workloads pass; GTC; no self-match
        # prevention): one comparison instead of a type() call and an equality, with the
        # full test only when it fails, so the expression accepts exactly what it did.
        symbol = self.symbol
        qty = order.qty
        price = order.price
        oid = order.id
        owner = order.owner
        side = order.side
        tif = order.tif
        smp = order.smp
        entries = self._entries
        if not (
            order.order_type is _LIMIT
            and type(qty) is int and 1 <= qty <= MAX_QTY
            and type(price) is int and 1 <= price <= MAX_PRICE
            and type(oid) is str and oid and type(owner) is str and owner
            and (order.symbol is symbol or type(order.symbol) is str and order.symbol == symbol)
            and (side is _BUY or side is _SELL)  # Side has these two members only
            and (tif is _GTC or type(tif) is TIF) and (smp is _SMP_NONE or type(smp) is SelfMatch)
            and order.stop_price is None and order.display_qty is None
        ):
            if order is _RESUME:  # maintain(), or a call continuing outstanding work: no order of its own
                events = self.events
                trades: list[Trade] = []
                order = None  # type: ignore[assignment]
            else:
                validate_new_order(order, symbol)
        if order is not None:
            if oid in entries:
                raise OrderRejected(RejectReason.DUPLICATE_ID, f"order id {oid!r} is already live in the book")
            if order.arrival_seq:  # an Order object used before: live in a book, or ended
                if order.status in _LIVE_STATUSES:
                    raise OrderRejected(RejectReason.ORDER_IN_USE, f"this Order object ({oid!r}) is live in a book "
                                        f"(arrival_seq {order.arrival_seq}); build a new Order to submit it again")
                order.cancel_reason = None
            if self._seq >= _SEQ_LIMIT:  # after years of arrivals: nothing below can refuse the order now
                self._renumber()
            self.events = events = []
            trades = []
            self._seq = order.arrival_seq = self._seq + 1
            order.filled_qty = 0
            order.remaining_qty = qty
            display = order.display_qty
            order.visible_qty = qty if display is None else display  # display <= qty was validated
            order.timestamp_ns = now_ns
            order.status = _NEW
            # Only STOP and STOP_LIMIT orders have a stop_price (validated): one test, no enum.
            if order.stop_price is not None:
                self._file_stop(order)
                order = None  # type: ignore[assignment]  # it fires as outstanding work, if elected
        owners = self._owners
        while True:  # one pass per order run: the submitted one, then each stop that fires
            if order is not None:
                r_price = 0  # the price of this run's last trade, if it makes one
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
                cut = False  # set when its protection price stopped it while it still crossed
                # Keys only grow down a heap, so a top beyond the bound (dead or alive) means
                # nothing crosses: the order just rests, and the matching locals are not bound.
                crosses = heap and heap[0] <= limit
                if crosses:
                    live = self._live
                    own_limit = limit
                    # The protection price: `protection` ticks past the best price on the other
                    # side, as a bound on k0 (for bids k0 is -price, so the same sum works). The
                    # top's k0 is at most the best live one's, so when even it is within
                    # `protection` of the order's own bound (a limit near the touch, the common
                    # case) protection cannot bind and nothing more is looked at.
                    if heap[0] + self._protection_span < limit:  # k0 + protection < bound, in key units
                        while heap and heap[0] not in live:  # dead keys at the top: popped on the way
                            heappop(heap)
                            self._dead -= 1
                        if heap:
                            guard = (heap[0] >> SEQ_BITS) + self.protection
                            if guard < bound:
                                bound = guard
                                limit = guard * SEQ_SPAN + _SEQ_MASK
                        else:
                            crosses = False
                if crosses and (tif is not _FOK or self._fok_can_fill(order, is_buy, bound)):
                    levels = self._ask_levels if is_buy else self._bid_levels
                    oid = order.id
                    owner = order.owner
                    side = order.side
                    smp = order.smp
                    a_display = order.display_qty
                    a_vis = order.visible_qty
                    tseq = tseq0 = self._trade_seq
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
                            cut = key <= own_limit  # still crosses: its protection price stopped it
                            break
                        if smp is not _SMP_NONE and resting.owner == owner:
                            if smp is _CANCEL_OLDEST:
                                self._cancel_live(key, events, _R_SELF)
                                continue
                            if smp is _CANCEL_NEWEST:
                                killed = True
                                break
                            if smp is _CANCEL_BOTH:
                                self._cancel_live(key, events, _R_SELF)
                                killed = True
                                break
                            # DECREMENT: the smaller side is cancelled, the larger shrinks by it.
                            r = resting.remaining_qty
                            if remaining > r:
                                self._cancel_live(key, events, _R_SELF)
                                remaining -= r
                                decremented += r
                                if a_vis > remaining:
                                    a_vis = remaining
                                continue
                            if r > remaining:
                                # The resting order keeps its place; what it shows can only shrink.
                                self._note_shrunk(resting, remaining)
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
                                self._cancel_live(key, events, _R_SELF)
                            killed = True
                            break
                        r_vis = resting.visible_qty
                        q = remaining if remaining < r_vis else r_vis
                        r_price = resting.price
                        rid = resting.id
                        tseq += 1
                        # Trade(...) with its slots written here: calling the class runs its
                        # generated __init__ in a frame of its own, dearer than these stores (cachegrind counts it).
                        trade = _new(Trade)
                        if is_buy:
                            trade.buy_order_id = oid
                            trade.sell_order_id = rid
                            trade.buy_owner = owner
                            trade.sell_owner = resting.owner
                        else:
                            trade.buy_order_id = rid
                            trade.sell_order_id = oid
                            trade.buy_owner = resting.owner
                            trade.sell_owner = owner
                        trade.symbol = symbol
                        trade.price = r_price
                        trade.qty = q
                        trade.aggressor_order_id = oid
                        trade.resting_order_id = rid
                        trade.aggressor_side = side
                        trade.seq = tseq
                        trade.timestamp_ns = now_ns
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
                            r_owner = resting.owner
                            ids = owners.get(r_owner)
                            if ids is not None and ids.pop(rid, None) is not None:
                                if not ids:
                                    del owners[r_owner]
                            else:  # held by a mass cancel in progress
                                self._left_job(r_owner)
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
                    if decremented:
                        self._note_shrunk(order, decremented)
                    order.remaining_qty = remaining
                    order.visible_qty = remaining if a_display is None else a_vis
                    if not remaining:
                        order.status = _FILLED
                    elif filled:
                        order.status = _PARTIAL
                if not remaining:
                    pass
                elif not killed and price is not None and (tif is _GTC or tif is _DAY):
                    if cut:  # the rest stays on the book as a limit at its protection price
                        price = bound if is_buy else -bound
                        order.price = price
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
                        # The new level's price goes on its side's price heap (``depth``), once.
                        in_heap = self._bid_in_heap if is_buy else self._ask_in_heap
                        if price not in in_heap:
                            in_heap.add(price)
                            prices = self._bid_prices if is_buy else self._ask_prices
                            heappush(prices, -price if is_buy else price)
                            if len(prices) > 2 * len(own_levels) + COMPACT_SLACK:
                                self._compact_prices(is_buy)
                            self._price_marks[is_buy] = len(own_levels)
                    else:
                        lv[0] += 1
                        lv[1] += vis
                        if vis != remaining:  # an iceberg with something hidden
                            lv[2] += remaining - vis
                    ids = owners.get(order.owner)
                    if ids is None:
                        owners[order.owner] = {oid: order}
                    else:
                        ids[oid] = order
                else:  # MARKET, IOC, FOK, or stopped by self-match prevention: never rests
                    order.status = _CANCELLED
                    order.cancel_reason = (_R_SELF if killed else _R_FOK if tif is _FOK
                                           else _R_PROTECTION if cut else _R_IOC)
                    events.append(("cancelled", order))
                if not self._maybe_work:
                    break  # no stops, no mass cancel: no outstanding work (the common case: one load)
                if self._buy_stops or self._sell_stops:
                    if r_price:  # this run traded: its prices elect stops (rules.py, "Stops")
                        self._elect(trades[len(trades) - (tseq - tseq0)].price, r_price)
                elif not self._jobs:
                    self._maybe_work = False
                    break
            elif not (self._jobs or self._buy_stops or self._sell_stops):
                self._maybe_work = False
                break
            # Outstanding work: mass cancels, then elected stops, within the budget.
            order = self._next_unit(events)  # type: ignore[assignment]
            if order is None:
                break
        # Every way a call shrinks the live count (a fill, a cancel, a stop leaving its heap)
        # leaves an event; only then can the compaction bound be broken.
        if events:
            n_live = len(entries)
            if n_live + self._dead > self._compact_factor * n_live + self._compact_slack:
                self._over_bound(n_live)
        return trades

    def cancel(self, order_id: str, now_ns: int = 0) -> bool:
        """Cancel a resting order or pending stop; False (and no change) for any other id.

        Marks the order's heap key dead and updates the indexes: amortised O(1) for a
        compaction factor above 1 (compaction, O(n), runs after Omega(n) cancels);
        O(n / slack) amortised for factor 1, which rebuilds every ``slack + 1`` cancels.
        With a budget it then continues outstanding work (fewer than ``budget`` steps;
        ``now_ns`` stamps the trades of stops that fire) and compaction is sliced.

        >>> from edumatcher.model import Order, Side, OrderType, TIF
        >>> book = OrderBook("XYZ")
        >>> _ = book.submit(Order("b1", "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 4, 100, owner="bob"))
        >>> book.cancel("b1"), book.cancel("b1"), len(book)
        (True, False, 0)
        >>> book.events[0][1].cancel_reason.value if book.events else "a failed cancel leaves no events"
        'a failed cancel leaves no events'
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
        ids = self._owners.get(owner)
        if ids is not None and ids.pop(order_id, None) is not None:
            if not ids:
                del self._owners[owner]
        else:  # held by a mass cancel in progress
            self._left_job(owner)
        if order.status is not _PENDING:
            is_bid = order.side is _BUY
            levels = self._bid_levels if is_bid else self._ask_levels
            price = order.price
            lv = levels[price]
            if lv[0] == 1:
                del levels[price]
            else:
                lv[0] -= 1
                lv[1] -= order.visible_qty
                lv[2] -= order.remaining_qty - order.visible_qty
        else:
            del self._stop_fields[order]
        order.status = _CANCELLED
        order.cancel_reason = _R_OWNER
        self.events = [("cancelled", order)]
        self._dead = dead = self._dead + 1
        if self._maybe_work and self.budget is not None:
            if self._jobs or self._buy_stops or self._sell_stops:
                self._skips = 0
                self.submit(_RESUME, now_ns=now_ns)  # outstanding work, within the budget
                return True
        n_live = len(entries)
        if n_live + dead > self._compact_factor * n_live + self._compact_slack:
            self._over_bound(n_live)
        return True

    def cancel_owner(self, owner: str, *, now_ns: int = 0) -> list[str]:
        """Start a mass cancel of ``owner``'s orders (``rules.py``); return the ids this call cancelled for it.

        O(1) to start: the owner's index moves into a job whole. Each order is then a step
        of outstanding work: without a budget all are cancelled here, in the order they
        entered the book; with one, fewer than ``budget`` steps per call (the rest in later
        calls and ``maintain()``), so the call costs O(budget log n), however many orders
        the owner holds.

        >>> from edumatcher.model import Order, Side, OrderType, TIF
        >>> book = OrderBook("XYZ")
        >>> for oid in ("a", "b"):
        ...     _ = book.submit(Order(oid, "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 1, 100, owner="ann"))
        >>> book.cancel_owner("ann"), book.cancel_owner("ann")
        (['a', 'b'], [])
        """
        self.events = []
        try:
            orders = self._owners.pop(owner, None)
        except TypeError:
            return []
        if not orders:
            return []
        job = _MassCancel(owner, orders)
        self._jobs.append(job)
        self._maybe_work = True
        self._job_live[owner] = self._job_live.get(owner, 0) + len(orders)
        self._collecting, self._collected = job, []
        try:
            self._skips = 0
            self.submit(_RESUME, now_ns=now_ns)
        finally:
            self._collecting = None
        return self._collected

    def maintain(self, *, now_ns: int = 0) -> bool:
        """Continue the outstanding work within the budget, and a slice of compaction; True if some remains.

        Always starts a new ``events`` list (empty when there was nothing to do). A book
        without a budget never has outstanding work between calls. The engine's run loop
        calls this after every message and on idle ticks, while ``needs_maintenance()``.
        O(budget log n) plus a compaction slice.

        >>> OrderBook("XYZ", budget=10).maintain()
        False
        """
        self.events = []
        if self._jobs or self._has_elected():
            self._skips = 0
            self.submit(_RESUME, now_ns=now_ns)
        if self._pass is not None:
            self._compact_slice()
        self.work_left = more = self.needs_maintenance()
        return more

    def has_outstanding_work(self) -> bool:
        """True while a mass cancel is in progress or a stop is elected and waiting. Amortised O(1).

        >>> OrderBook("XYZ").has_outstanding_work()
        False
        """
        return bool(self._jobs) or self._has_elected()

    def needs_maintenance(self) -> bool:
        """True while ``maintain()`` has something to do: outstanding work, or a compaction pass. Amortised O(1)."""
        return bool(self._jobs) or self._pass is not None or self._has_elected()

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
        entries it pops (a removed level), and pushes the ``n`` back.
        """
        index = self._bid_levels if is_bid else self._ask_levels
        if n == 0:
            return []
        if n >= len(index):
            return sorted(index, reverse=is_bid)
        heap = self._bid_prices if is_bid else self._ask_prices
        in_heap = self._bid_in_heap if is_bid else self._ask_in_heap
        kept: list[int] = []
        try:
            for k0 in _popped_up_to(heap, _NO_LIMIT):
                p = -k0 if is_bid else k0
                if p in index:
                    kept.append(k0)
                    if len(kept) == n:
                        break
                else:
                    in_heap.discard(p)
        finally:
            for k0 in kept:
                heappush(heap, k0)
        return [-k0 for k0 in kept] if is_bid else kept

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

        ``bound`` is the k0 bound of its prices (its limit and its protection price). The
        resting quantity there comes from the level index (``_crossed_qty``, at most
        ``protection + 1`` levels looked at): enough of it decides a FOK without
        self-match prevention, or whose owner has nothing live. Otherwise ``_fok_walk``
        plays the matching forward on the crossed orders, within the budget.
        """
        need = order.remaining_qty
        if self._crossed_qty(is_buy, bound, need) < need:
            return False
        if order.smp is _SMP_NONE:
            return True
        owner = order.owner
        if owner not in self._owners and owner not in self._job_live:
            return True  # no order of its own anywhere: self-match prevention cannot act
        return self._fok_walk(order, is_buy, bound)

    def _crossed_qty(self, is_buy: bool, bound: int, need: int) -> int:
        """Resting quantity (hidden included) on the other side at k0 up to ``bound``, or ``need`` once reached.

        Looks at the prices from the best one to the bound (fewer than ``protection + 2``),
        or at every level when there are fewer levels than that: O(min(levels, protection)).
        """
        heap = self._asks if is_buy else self._bids
        levels = self._ask_levels if is_buy else self._bid_levels
        # The top's k0: the best live one's, or a dead key's before it (no level lies between them),
        # and within `protection` of `bound` either way (see submit).
        best = heap[0] >> SEQ_BITS
        total = 0
        if bound - best + 1 <= len(levels):
            get = levels.get
            for k0 in range(best, bound + 1):
                lv = get(k0 if is_buy else -k0)
                if lv is not None:
                    total += lv[1] + lv[2]
                    if total >= need:
                        return total
        else:
            for p, lv in levels.items():
                if (p if is_buy else -p) <= bound:
                    total += lv[1] + lv[2]
                    if total >= need:
                        return total
        return total

    def _fok_walk(self, order: Order, is_buy: bool, bound: int) -> bool:
        """The FOK decision with self-match prevention, played forward on the crossed orders.

        The crossed orders come in priority order (``_popped_up_to``: live keys are
        pushed back afterwards, dead ones dropped for good, as matching would drop them),
        each live one is a step, and the peaks that icebergs refresh at the back of a
        level come round once that level's orders are done, as they would in matching. It
        stops as soon as it knows, or when the budget's steps are used up (killed):
        O((m + d) log n) for m <= ``budget`` live orders examined and d dead keys dropped
        (each dead key once in its life, paid for by its cancel).
        """
        left = order.remaining_qty
        steps = _UNLIMITED if self.budget is None else self.budget
        # CANCEL_OLDEST cancels the owner's orders it meets and matching goes on: each is
        # a step that fills nothing. Any other mode ends or shrinks the FOK at its first one.
        skip_own = order.smp is _CANCEL_OLDEST
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
                if o.owner == owner:
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

    # ------------------------------------------------------------------ stops and outstanding work

    def _file_stop(self, order: Order) -> None:
        """File a new stop PENDING; it is elected at once if its side's election price reaches it. O(log n)."""
        self._elected_top(order.side is _BUY)  # brings the election price up to date first
        self._maybe_work = True
        order.status = _PENDING
        oid = order.id
        self._stop_fields[order] = _client_fields(order)
        self._entries[oid] = self._push_stop(order)
        ids = self._owners.get(order.owner)
        if ids is None:
            self._owners[order.owner] = {oid: order}
        else:
            ids[oid] = order

    def _elected_top(self, is_buy: bool) -> int | None:
        """The key of the best elected stop of one side, or None (then its election price becomes the last price).

        Elected stops are a prefix of their heap (``stop_price`` within the election
        price), so this is the heap's live top, if it is within. Amortised O(1).
        """
        heap = self._buy_stops if is_buy else self._sell_stops
        top = self._live_top(heap) if heap else None
        if is_buy:
            elect = self._buy_elect
            if top is not None and elect is not None and top <= elect * SEQ_SPAN + _SEQ_MASK:
                return top
            self._buy_elect = self.last_price
        else:
            elect = self._sell_elect
            if top is not None and elect is not None and top <= -elect * SEQ_SPAN + _SEQ_MASK:
                return top
            self._sell_elect = self.last_price
        return None

    def _has_elected(self) -> bool:
        return ((bool(self._buy_stops) and self._elected_top(True) is not None)
                or (bool(self._sell_stops) and self._elected_top(False) is not None))

    def _elect(self, first: int, last: int) -> None:
        """Move the election prices after one order's run, whose trades went from ``first`` to ``last``.

        One run's trades move monotonically (a buy takes asks upwards, a sell bids
        downwards), so applying the rule of ``rules.py`` trade by trade comes to this:
        a side with a stop elected before the run takes the run's furthest price into
        its election price; a side without one takes the furthest price if that elects a
        stop, else the last price. O(1) amortised.
        """
        hi, lo = (last, first) if last >= first else (first, last)
        top = self._live_top(self._buy_stops) if self._buy_stops else None
        elect = self._buy_elect
        if top is None:
            self._buy_elect = last
        elif elect is not None and top <= elect * SEQ_SPAN + _SEQ_MASK:
            if hi > elect:
                self._buy_elect = hi
        else:
            self._buy_elect = hi if top <= hi * SEQ_SPAN + _SEQ_MASK else last
        top = self._live_top(self._sell_stops) if self._sell_stops else None
        elect = self._sell_elect
        if top is None:
            self._sell_elect = last
        elif elect is not None and top <= -elect * SEQ_SPAN + _SEQ_MASK:
            if lo < elect:
                self._sell_elect = lo
        else:
            self._sell_elect = lo if top <= -lo * SEQ_SPAN + _SEQ_MASK else last

    def _next_unit(self, events: list[Event]) -> Order | None:
        """Do outstanding work until the budget is spent: mass-cancel steps, then fire the best elected stop.

        Returns the stop it fired (the caller runs it, then calls again), or None when
        there is no more work or no more budget.
        """
        budget = _UNLIMITED if self.budget is None else self.budget
        if self._skips_of is not events:  # the first unit of this call: no entry skipped yet
            self._skips_of = events
            self._skips = 0
        if len(events) + self._skips >= budget:  # out of budget: whatever is left waits for maintain()
            self.work_left = True
            return None
        while len(events) + self._skips < budget:
            if self._jobs:
                self._mass_cancel_step(events)
                continue
            key = self._elected_top(True)
            heap = self._buy_stops
            if key is None:
                key = self._elected_top(False)
                heap = self._sell_stops
                if key is None:
                    return None
            heappop(heap)
            order = self._live.pop(key)
            del self._entries[order.id]
            del self._stop_fields[order]
            self._forget_owner(order)
            order.status = _NEW
            self._seq = order.arrival_seq = self._seq + 1
            events.append(("triggered", order))
            return order
        self.work_left = True  # the budget ran out with work perhaps left
        return None

    def _mass_cancel_step(self, events: list[Event]) -> None:
        """One step of the oldest mass cancel: cancel its next order if still live, else skip it. O(log n)."""
        job = self._jobs[0]
        oid, order = next(job.walk)
        job.left -= 1
        if not job.left:
            self._jobs.popleft()
        key = self._entries.get(oid)
        if key is not None and self._live.get(key) is order:
            self._cancel_live(key, events, _R_MASS)
            if job is self._collecting:
                self._collected.append(oid)
        else:
            self._skips += 1

    def _note_shrunk(self, order: Order, qty: int) -> None:
        """Remember that DECREMENT took ``qty`` from ``order`` without a fill (``check_invariants``). Amortised O(1).

        Keyed by the order object, so an id used again never inherits it; entries of
        orders that have ended are dropped whenever the table doubles.
        """
        shrunk = self._shrunk
        shrunk[order] = shrunk.get(order, 0) + qty
        if len(shrunk) > 64 and len(shrunk) & (len(shrunk) - 1) == 0:  # at 128, 256, ...: drop the ended
            live, entries = self._live, self._entries
            self._shrunk = {o: n for o, n in shrunk.items() if live.get(entries.get(o.id, -1)) is o}

    def _left_job(self, owner: str) -> None:
        """A live order only a mass cancel still held has left the book. O(1)."""
        n = self._job_live[owner] - 1
        if n:
            self._job_live[owner] = n
        else:
            del self._job_live[owner]

    def _cancel_live(self, key: int, events: list[Event], reason: CancelReason) -> None:
        """Take a live order out of the book (any cause): mark its key dead, fix every index. O(1)."""
        order = self._live.pop(key)
        self._dead += 1
        del self._entries[order.id]
        self._forget_owner(order)
        if order.status is not _PENDING:
            is_bid = order.side is _BUY
            levels = self._bid_levels if is_bid else self._ask_levels
            lv = levels[order.price]
            if lv[0] == 1:
                del levels[order.price]
            else:
                lv[0] -= 1
                lv[1] -= order.visible_qty
                lv[2] -= order.remaining_qty - order.visible_qty
        else:
            del self._stop_fields[order]
        order.status = _CANCELLED
        order.cancel_reason = reason
        events.append(("cancelled", order))

    def _forget_owner(self, order: Order) -> None:
        """Drop a live order from its owner's index (or from what mass cancels hold). O(1)."""
        owner = order.owner
        ids = self._owners.get(owner)
        if ids is not None and ids.pop(order.id, None) is not None:
            if not ids:
                del self._owners[owner]
        else:
            self._left_job(owner)

    # ------------------------------------------------------------------ compaction

    def _over_bound(self, n_live: int) -> None:
        """The heaps hold more than the compaction bound: compact them (no budget), or start or push a pass."""
        if self.budget is None:
            self._compact()
            return
        if self._pass is None:
            self._pass = [0, None]
            self.work_left = True
        # maintain() runs the pass; a call that finds the heaps at twice the bound (nobody
        # calls maintain) does a slice itself, so memory stays bounded either way.
        if self.heap_entries() > 2 * (self._compact_factor * n_live + self._compact_slack):
            self._compact_slice()

    def _compact(self) -> None:
        """Drop every dead key from the four heaps and re-heapify them. O(n)."""
        live = self._live
        for heap in (self._bids, self._asks, self._buy_stops, self._sell_stops):
            heap[:] = [key for key in heap if key in live]
            heapify(heap)
        self._dead = 0
        self._pass = None

    def _compact_slice(self) -> None:
        """One slice of a compaction pass: about ``COMPACT_SLICE`` entries examined. O(slice log n).

        The pass takes the four heaps in turn. A heap of at most ``COMPACT_INLINE_MAX``
        entries is filtered and re-heapified whole (C code, a bounded cost); a bigger one
        is walked from its end, each dead key taken out where it is (``_remove_at``).
        Entries that other calls move meanwhile may escape a pass; ``_dead`` stays
        exact, and the next pass finds them.
        """
        live = self._live
        heaps = (self._bids, self._asks, self._buy_stops, self._sell_stops)
        examined = 0
        levels = COMPACT_SLICE // 8  # what the removals' sifts may move, in all
        state = self._pass
        while state is not None and examined < COMPACT_SLICE and levels > 0:
            h, pos = state
            heap = heaps[h]
            if pos is None:  # this heap's turn starts
                n = len(heap)
                if n <= COMPACT_INLINE_MAX:
                    heap[:] = [key for key in heap if key in live]
                    heapify(heap)
                    self._dead -= n - len(heap)
                    examined += n
                    state = [h + 1, None] if h < 3 else None
                    continue
                pos = n - 1
            while pos >= 0 and examined < COMPACT_SLICE and levels > 0:
                examined += 1
                if pos < len(heap) and heap[pos] not in live:
                    levels -= _remove_at(heap, pos)
                    self._dead -= 1
                    # Look at this place again: a sift up may have moved an entry not yet looked at into it.
                    continue
                pos -= 1
            state = ([h + 1, None] if h < 3 else None) if pos < 0 else [h, pos]
        self._pass = state

    def _compact_prices(self, is_bid: bool) -> None:
        """Drop one side's stale price entries: all at once when small (or without a budget), else a slice.

        A slice examines up to ``COMPACT_SLICE // 8`` entries and its removals move at most
        ``COMPACT_SLICE // 64`` levels, going down the heap from where the last one stopped (then
        from the end again): each level made while the heap is over its bound pays for one,
        and removing a level adds one stale entry, so the slices keep up.
        """
        heap = self._bid_prices if is_bid else self._ask_prices
        levels = self._bid_levels if is_bid else self._ask_levels
        in_heap = self._bid_in_heap if is_bid else self._ask_in_heap
        if self.budget is None or len(heap) <= COMPACT_INLINE_MAX:
            heap[:] = [-p for p in levels] if is_bid else list(levels)
            heapify(heap)
            in_heap.clear()
            in_heap.update(levels)
            self._price_marks[is_bid] = len(levels)
            return
        pos = self._price_pass[is_bid]
        if not 0 <= pos < len(heap):
            pos = len(heap) - 1
        moves = COMPACT_SLICE // 64
        for _ in range(COMPACT_SLICE // 8):
            if pos < 0 or moves <= 0:
                break
            if pos < len(heap):
                k0 = heap[pos]
                p = -k0 if is_bid else k0
                if p not in levels:
                    moves -= _remove_at(heap, pos)
                    in_heap.discard(p)
                    continue  # this place again: a sift up may have moved an entry into it
            pos -= 1
        self._price_pass[is_bid] = pos

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
        self._pass = None
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
        order, the level, owner, mass-cancel and dead-key counts, the compaction bounds
        (of the key heaps and of the price heaps), an uncrossed book, the election prices
        (and, without a budget, no elected stop left waiting); per live order the rules
        of ``rules.py`` it was accepted under (``validate_new_order`` again: a pending
        stop's peak rule, prices that match its type, a resting order's TIF and type),
        the client fields a pending stop was filed with, ``filled_qty + remaining_qty``
        equal to ``qty`` less what DECREMENT took (so a raised ``qty`` is caught), the
        status a fill gives, and an ``arrival_seq`` no other live order has; non-negative
        counters. O(n) for n heap entries (one pass over the heaps and the indexes); for
        tests only.
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
                try:  # the rules it was accepted under still hold (types, prices, the peak rule)
                    validate_new_order(o, self.symbol)
                except OrderRejected as exc:
                    raise AssertionError(f"live order {o.id!r} breaks an acceptance rule: {exc}") from None
                assert type(o.filled_qty) is int and o.filled_qty >= 0, f"{o.id!r} has filled_qty {o.filled_qty!r}"
                assert type(o.remaining_qty) is int, f"{o.id!r} has remaining_qty {o.remaining_qty!r}"
                # == qty unless a DECREMENT took quantity away without a fill (rules.py)
                taken = self._shrunk.get(o, 0)
                assert o.filled_qty + o.remaining_qty + taken == o.qty, (
                    f"{o.id!r}: filled {o.filled_qty} + remaining {o.remaining_qty} + decremented {taken} != qty {o.qty}"
                )
                assert o.cancel_reason is None, f"live order {o.id!r} has a cancel_reason"
                is_buy = o.side is _BUY
                if name in ("bids", "asks"):
                    assert (name == "bids") == is_buy, f"order {o.id!r} ({o.side.value}) is in {name}"
                    assert o.status in _RESTING_STATUSES, f"resting order {o.id!r} has status {o.status.value}"
                    assert o.tif is _GTC or o.tif is _DAY, f"resting order {o.id!r} has TIF {o.tif.value}"
                    assert o.order_type in (_LIMIT, OrderType.STOP_LIMIT), f"resting order {o.id!r} is {o.order_type.value}"
                    assert (o.status is _PARTIAL) == (o.filled_qty > 0), (
                        f"resting order {o.id!r} is {o.status.value} with filled_qty {o.filled_qty}"
                    )
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
                    assert self._stop_fields.get(o) == _client_fields(o), (
                        f"pending stop {o.id!r} was filed as {self._stop_fields.get(o)}, is now {_client_fields(o)}"
                    )
                assert o.remaining_qty > 0, f"live order {o.id!r} has nothing left"
                assert o.arrival_seq <= self._seq, f"{o.id!r} has arrival_seq from the future"
        assert len(seen) == len(self._entries), (
            f"_entries holds {sorted(set(self._entries) - set(seen))} with no live heap key"
        )
        assert len(self._live) == len(seen), f"_live maps {len(self._live)} keys for {len(seen)} live orders in the heaps"
        assert dead == self._dead, f"_dead is {self._dead} but the heaps hold {dead} dead keys"
        pending = {o for o in seen.values() if o.status is _PENDING}
        assert set(self._stop_fields) == pending, "the filed stops' record is not the pending stops"
        assert levels["bids"] == self._bid_levels, f"bid levels {self._bid_levels} != recomputed {levels['bids']}"
        assert levels["asks"] == self._ask_levels, f"ask levels {self._ask_levels} != recomputed {levels['asks']}"
        for name, heap, index, in_heap, sign in (("bid", self._bid_prices, self._bid_levels, self._bid_in_heap, -1),
                                                 ("ask", self._ask_prices, self._ask_levels, self._ask_in_heap, 1)):
            assert all(heap[(i - 1) // 2] <= heap[i] for i in range(1, len(heap))), f"{name} price heap breaks heap order"
            in_prices = [sign * k0 for k0 in heap]
            assert len(set(in_prices)) == len(in_prices), f"{name} price heap holds a price twice"
            assert set(in_prices) == in_heap, f"{name} price heap and its set disagree"
            missing = set(index) - in_heap
            assert not missing, f"{name} levels {sorted(missing)} are not in the {name} price heap"
            if self.budget is None:
                bound = 2 * self._price_marks[sign < 0] + COMPACT_SLACK
                assert len(heap) <= bound, f"{name} price heap holds {len(heap)} entries, over its bound {bound}"
        self._check_owners(seen)
        total = self.heap_entries()
        bound = self._compact_factor * len(self._entries) + self._compact_slack
        if self.budget is None:
            assert total <= bound, f"{total} heap entries exceed the compaction bound {bound}"
        else:
            assert total <= bound or self._pass is not None, f"{total} heap entries over the bound {bound} and no pass"
        bid, ask = self.best_bid(), self.best_ask()
        assert bid is None or ask is None or bid < ask, f"book is crossed: bid {bid} >= ask {ask}"
        assert bid is None or bid == max(self._bid_levels), "best_bid disagrees with the level index"
        assert ask is None or ask == min(self._ask_levels), "best_ask disagrees with the level index"
        self._check_elections(pending)

    def _check_owners(self, seen: dict[str, Order]) -> None:
        """The owner index and the mass cancels in progress account for every live order exactly once."""
        indexed: dict[str, set[str]] = {}
        for owner, orders in self._owners.items():
            assert orders, f"owner {owner!r} has an empty index entry"
            for oid, o in orders.items():
                assert seen.get(oid) is o, f"owner index of {owner!r} holds {oid!r}, not that live order"
                assert o.owner == owner, f"order {oid!r} of {o.owner!r} is indexed under {owner!r}"
            indexed[owner] = set(orders)
        held: dict[str, int] = {}
        in_jobs = {id(o) for job in self._jobs for o in job.orders.values()}
        for o in seen.values():
            if o.id not in indexed.get(o.owner, ()):
                assert id(o) in in_jobs, f"live order {o.id!r} is neither indexed nor held by a mass cancel"
                held[o.owner] = held.get(o.owner, 0) + 1
        assert held == self._job_live, f"mass-cancel live counts {self._job_live} != recomputed {held}"
        for job in self._jobs:
            assert job.left > 0, "a finished mass cancel is still queued"

    def _check_elections(self, pending: set[Order]) -> None:
        """The election prices of ``rules.py`` on each side with pending stops; nothing waits without a budget.

        A side without stops is not looked at: its election price is brought up to date
        before a new stop is compared with it.
        """
        last = self.last_price
        for side, elect in ((_BUY, self._buy_elect), (Side.SELL, self._sell_elect)):
            stops = [o for o in pending if o.side is side]
            if not stops:
                continue
            if last is None:
                assert elect is None, f"{side.value} election price {elect} with no last price"
                continue
            assert elect is not None and (elect >= last if side is _BUY else elect <= last), (
                f"{side.value} election price {elect} is on the wrong side of the last price {last}"
            )
            elected = [o.id for o in stops if (o.stop_price <= elect if side is _BUY else o.stop_price >= elect)]
            if self.budget is None:
                assert not elected, f"stops {sorted(elected)} are elected but did not fire (no budget)"
        if self.budget is None:
            assert not self._jobs, "a mass cancel is left in progress (no budget)"

    def dump(self) -> str:
        """The whole book state as text, one line per heap entry (for failure messages). O(n log n)."""
        lines = [
            f"OrderBook {self.symbol!r}: last_price={self.last_price} seq={self._seq} "
            f"trade_seq={self._trade_seq} live={len(self._entries)} dead={self._dead} "
            f"heap_entries={self.heap_entries()} compact={self._compact_factor}*live+{self._compact_slack} "
            f"budget={self.budget} protection={self.protection} elect=({self._buy_elect}, {self._sell_elect}) "
            f"jobs={[(j.owner, j.left) for j in self._jobs]} pass={self._pass}"
        ]
        for name, heap in (("bids", self._bids), ("asks", self._asks),
                           ("buy_stops", self._buy_stops), ("sell_stops", self._sell_stops)):
            lines.append(f"  {name} ({len(heap)} entries, heap order):")
            lines.extend(f"    {line}" for line in _describe(heap, self._live))
        lines.append(f"  bid levels: {dict(sorted(self._bid_levels.items(), reverse=True))}")
        lines.append(f"  ask levels: {dict(sorted(self._ask_levels.items()))}")
        lines.append(f"  owners: { {k: list(v) for k, v in sorted(self._owners.items())} }")
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
