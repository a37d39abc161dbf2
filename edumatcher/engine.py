"""``Engine``: bytes in, bytes out. One order book per symbol behind the message spec.

``Engine.handle(payload)`` is the message path. For one inbound payload it

1. reads the clock **once** (``self.clock()``) and threads that stamp through
   everything the message causes: the order's ``timestamp_ns``, its trades,
   acks, cancels and triggers all carry it;
2. refuses a payload longer than ``MAX_PAYLOAD`` bytes before decoding it;
3. decodes it once, checks it against the spec (``edumatcher.messages``),
   converts its prices to ticks at the engine's ``decimals`` and builds the
   ``Order`` with ``Order.from_dict``;
4. submits it and turns what happened (``book.events``) into frames.

It returns a list of ``(topic, payload)`` frames in this order:

* ``order.new``: the ``order.ack`` (its ``status`` and quantities are those at
  the end of handling), then one frame per book event in the order the book
  recorded them: ``trade.executed``, ``order.cancelled``, ``order.triggered``.
* ``order.cancel``: the ``order.cancelled`` frame.
* ``order.cancel_owner``: one ``order.cancelled`` per order cancelled during this
  message, in the order the orders entered the book, book by book in the order the
  symbols were given; none if the owner had nothing live. With a work budget (the
  default) a mass cancel of more orders than the budget goes on in maintenance.
* ``book.snapshot.request``: one ``book.snapshot`` on the symbol's topic. A request
  for more than ``snapshot_levels`` levels (up to ``messages.MAX_LEVELS``, 30 KB and
  more) is served at most once per ``snapshot_request_interval_ns`` per client and
  symbol; one that comes sooner is refused with THROTTLED. A shallower one is what the
  engine publishes anyway and is always served.
* anything refused: exactly one ``order.reject`` with a reason code, and
  nothing in any book changed.

Every ``order.cancelled`` carries its ``reason`` (``model.CancelReason``).

The books have a work budget (``rules.WORK_BUDGET``): a message does its own work
(its order's matching, to the end) and at most that many steps of the work others left
(stops its trades elected, mass cancels in progress); the rest goes on in
**maintenance** (``maintain``), between messages. Output is deterministic: the
frames depend only on the sequence of calls (``handle`` and ``maintain``, with the
clock's values), never on how long anything took, because a budget counts steps.
``run`` makes that sequence from what its source yields: after every message one
``maintain(busy)``, and on every idle tick one ``maintain(idle)``; so the same
payloads and idle ticks from the source give the same frames, in the same order.

Bad input never escapes as an exception: every refusal is an ``OrderRejected``
raised by the spec check, the price conversion or the book (whose contract is
that a refused order changes nothing), caught in ``handle``.

Prices on the wire are decimal strings (``"100.25"``) or, inbound, ints of
currency (``100`` is 100.00); outbound the engine always writes strings with
exactly ``decimals`` places. Inside, prices are int ticks.

``Engine.run(source, sink)`` is the loop around it: poll, handle, then maintenance
between messages: the books' outstanding work (a budget's worth per book), throttled
snapshots of changed books, and the collector policy's ``tick``. One message in
``SAMPLE_EVERY`` is timed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .messages import (
    MAX_ID_LEN,
    MAX_LEVELS,
    MAX_OWNER_LEN,
    MAX_SYMBOL_LEN,
    MAX_TEXT_LEN,
    TOPIC_ORDER_REJECT,
    TOPIC_TRADE_EXECUTED,
    TopicCache,
    check_book_snapshot_request,
    check_order_cancel,
    check_order_cancel_owner,
    check_order_new,
    make_book_depth_unchecked,
    make_book_snapshot_unchecked,
    make_order_ack_unchecked,
    make_order_cancelled_unchecked,
    make_order_reject_unchecked,
    make_order_triggered_unchecked,
    make_trade_executed_unchecked,
    show_value,
)
from .messages import (
    loads as _loads,
)
from .metrics import OWNER_LIMIT, SAMPLE_MASK, EngineMetrics, OwnerCounts
from .model import Order, OrderRejected, RejectReason
from .rules import WORK_BUDGET
from .sinks import END
from .ticks import from_ticks, to_ticks

__all__ = [
    "MAX_PAYLOAD", "DEFAULT_SNAPSHOT_INTERVAL_NS", "DEFAULT_SNAPSHOT_REQUEST_INTERVAL_NS", "SNAPSHOT_LEVELS",
    "Engine", "Source", "Sink",
]

MAX_PAYLOAD = 4096
"""Longest accepted payload in bytes, checked before decoding: an order is ~200 bytes,
and a bound keeps a hostile payload from costing a long decode."""

DEFAULT_SNAPSHOT_INTERVAL_NS = 100_000_000
"""At most one snapshot per symbol per 100 ms: enough for a screen, cheap for the engine."""

SNAPSHOT_LEVELS = 20
"""Price levels per side in a published ``book.snapshot`` unless a request asks otherwise."""

DEFAULT_SNAPSHOT_REQUEST_INTERVAL_NS = 1_000_000_000
"""At most one snapshot deeper than ``snapshot_levels`` per client and symbol per second
(issue 26: 73 bytes in made 31 KB out, as often as a client liked)."""

_CACHE_LIMIT = 65_536
"""Most entries kept by the price-conversion caches and the owner-name table before they are emptied and refilled."""

_NEVER = -(1 << 62)   # "last snapshot" of a book never snapshotted: always due
_NOT_DUE = 1 << 62    # flush due time when nothing is dirty

_R = RejectReason
_UNKNOWN_ORDER = RejectReason.UNKNOWN_ORDER  # a module global: cheaper than the enum attribute on every refused cancel
_from_dict = Order.from_dict
_ack = make_order_ack_unchecked
_reject = make_order_reject_unchecked


class Source(Protocol):
    """What ``Engine.run`` reads: ``poll()`` -> payload, ``None`` (idle) or ``sinks.END``."""

    def poll(self) -> bytes | None: ...


class Sink(Protocol):
    """What ``Engine.run`` writes frames to."""

    def send(self, topic: bytes, payload: bytes) -> None: ...

    def send_many(self, frames: list[tuple[bytes, bytes]]) -> None: ...


def _echo(value: Any, max_len: int) -> str | None:
    # A field of a refused message, repeated in the reject only if it is a valid
    # string: the reject builder is unchecked and trusts us on that.
    if type(value) is str and value and len(value) <= max_len and value.isprintable():
        return value
    return None


class Engine:
    """A matching engine for ``symbols``: one order book each, the message spec at the door.

    ``decimals``: price places on the wire (tick = 10**-decimals, 0 to 12).
    ``clock``: ns timestamps for messages and snapshot throttling (one call per
    handled message). ``gc_policy``: a ``GcPolicy`` (or anything with
    ``start``/``arm_freeze``/``stop``/``tick(idle)``/``started``) driven by ``run``.
    ``snapshot_interval_ns``: least time between two published snapshots of one
    book. ``snapshot_request_interval_ns``: least time between two deep snapshots
    one client may ask for, per symbol. ``metrics``: an ``EngineMetrics`` (a fresh
    one by default). ``book_factory``: ``symbol -> book`` (``OrderBook`` with
    ``budget=rules.WORK_BUDGET`` by default; the differential tests pass ``NaiveBook``).

    Counters incremented on the message path and read only by ``summary()``:
    accepted orders per owner (``metrics.per_owner``), fills per owner (``fills``,
    one per trade side) and rejects by reason (``rejects``). The per-owner ones
    are ``OwnerCounts``, bounded like the engine's caches: at most ``owner_limit``
    owners named each (``metrics.OWNER_LIMIT`` by default; the metrics' own limit
    when ``metrics`` is given), any further owner counted in their ``other``, so
    a flood of distinct owner names costs bounded memory and loses no count.

    >>> from edumatcher.messages import make_order_new
    >>> engine = Engine(["XYZ"], clock=lambda: 7)
    >>> frames = engine.handle(make_order_new("s1", "XYZ", "SELL", "LIMIT", 5, "bob", price="10.50"))
    >>> frames = engine.handle(make_order_new("b1", "XYZ", "BUY", "LIMIT", 3, "amy", price=11))
    >>> [topic for topic, _ in frames]
    [b'order.ack.amy', b'trade.executed']
    >>> frames[1][1]
    b'{"type":"trade.executed","symbol":"XYZ","seq":1,"price":"10.50","qty":3,"buy_order_id":"b1","sell_order_id":"s1","buy_owner":"amy","sell_owner":"bob","aggressor_side":"BUY","ts":7}'
    """

    def __init__(
        self,
        symbols: Iterable[str],
        *,
        decimals: int = 2,
        clock: Callable[[], int] = time.monotonic_ns,
        gc_policy: Any = None,
        snapshot_interval_ns: int = DEFAULT_SNAPSHOT_INTERVAL_NS,
        snapshot_levels: int = SNAPSHOT_LEVELS,
        snapshot_request_interval_ns: int = DEFAULT_SNAPSHOT_REQUEST_INTERVAL_NS,
        metrics: EngineMetrics | None = None,
        book_factory: Callable[[str], Any] | None = None,
        owner_limit: int = OWNER_LIMIT,
    ) -> None:
        symbols = list(symbols)
        if not symbols:
            raise ValueError("an Engine needs at least one symbol")
        for s in symbols:
            if _echo(s, MAX_SYMBOL_LEN) is None:
                raise ValueError(f"symbol must be a printable string of 1 to {MAX_SYMBOL_LEN} characters, not {s!r}")
        if len(set(symbols)) != len(symbols):
            raise ValueError(f"symbols must be distinct, got {symbols!r}")
        if type(decimals) is not int or not 0 <= decimals <= 12:
            raise ValueError(f"decimals must be an int from 0 to 12, not {decimals!r}")
        if type(snapshot_interval_ns) is not int or snapshot_interval_ns < 0:
            raise ValueError(f"snapshot_interval_ns must be an int >= 0, not {snapshot_interval_ns!r}")
        if type(snapshot_levels) is not int or not 1 <= snapshot_levels <= MAX_LEVELS:
            raise ValueError(f"snapshot_levels must be an int from 1 to {MAX_LEVELS}, not {snapshot_levels!r}")
        if type(snapshot_request_interval_ns) is not int or snapshot_request_interval_ns < 0:
            raise ValueError(f"snapshot_request_interval_ns must be an int >= 0, not {snapshot_request_interval_ns!r}")
        if book_factory is None:
            from .book import OrderBook

            def book_factory(symbol: str) -> Any:
                return OrderBook(symbol, budget=WORK_BUDGET)
        self.symbols: tuple[str, ...] = tuple(symbols)
        self.books: dict[str, Any] = {s: book_factory(s) for s in symbols}
        self.decimals = decimals
        self.clock = clock
        self.gc_policy = gc_policy
        self.snapshot_interval_ns = snapshot_interval_ns
        self.snapshot_levels = snapshot_levels
        self.snapshot_request_interval_ns = snapshot_request_interval_ns
        self._deep_snapshots: dict[tuple[str, str], int] = {}  # (owner, symbol) -> when it was last served one
        # Books with maintenance to do (outstanding work, a compaction pass), by symbol.
        self._pending: set[str] = set()
        self.metrics = metrics if metrics is not None else EngineMetrics(owner_limit=owner_limit)
        self.fills = OwnerCounts(self.metrics.per_owner.limit)
        self._orders_per_owner = self.metrics.per_owner
        self.rejects: dict[RejectReason, int] = {}
        self._scale = 10**decimals
        self._tick = str(from_ticks(1, decimals))
        # Caches on the message path: wire price string <-> ticks, and topics.
        self._ticks_of: dict[str | int, int] = {}
        self._wire_of: dict[int, str] = {}
        self._owner_names: dict[str, str] = {}  # owner name -> the one str object resting orders share
        self._ack_topics = TopicCache(b"order.ack.")
        self._reject_topics = TopicCache(b"order.reject.")
        self._cancelled_topics = TopicCache(b"order.cancelled.")
        self._triggered_topics = TopicCache(b"order.triggered.")
        self._snapshot_topics = TopicCache(b"book.snapshot.")
        self._depth_topics = TopicCache(b"book.depth.")
        self._handlers: dict[str, Callable[[dict[str, Any], int], list[tuple[bytes, bytes]]]] = {
            "order.new": self._on_order_new,
            "order.cancel": self._on_order_cancel,
            "order.cancel_owner": self._on_order_cancel_owner,
            "book.snapshot.request": self._on_snapshot_request,
        }
        # Snapshot throttling: which books changed, when each was last published,
        # and the earliest time any dirty book may be published again.
        self._dirty: set[str] = set()
        self._last_snapshot: dict[str, int] = dict.fromkeys(symbols, _NEVER)
        self._flush_due = _NOT_DUE
        self._last_ts = 0

    # ------------------------------------------------------------------ the message path

    def handle(self, payload: bytes) -> list[tuple[bytes, bytes]]:
        """Handle one inbound payload to completion; return the frames it caused (see the module docstring).

        Never raises for bad input: a refusal is one ``order.reject`` frame. O(decode + matching).
        """
        ts = self.clock()
        self._last_ts = ts
        if len(payload) > MAX_PAYLOAD:
            return [self._reject(_R.TOO_LARGE, f"payload of {len(payload)} bytes is over the {MAX_PAYLOAD}-byte limit", ts)]
        try:
            msg = _loads(payload)
        except (ValueError, RecursionError) as exc:  # the codecs' decode errors are ValueErrors
            return [self._reject(_R.BAD_JSON, f"payload is not JSON: {str(exc)[:120]}", ts)]
        try:
            # One subscript answers three questions at once; the except branch sorts out which failed.
            handler = self._handlers[msg["type"]]
        except (KeyError, TypeError):
            return [self._refuse_envelope(msg, ts)]
        try:
            return handler(msg, ts)
        except OrderRejected as exc:
            return [self._reject(exc.code, exc.message, ts, msg)]

    def _refuse_envelope(self, msg: Any, ts: int) -> tuple[bytes, bytes]:
        # The message is not an object, or its type is missing or unknown.
        if type(msg) is not dict:
            return self._reject(_R.NOT_OBJECT, f"a message is a JSON object, not {show_value(msg)}", ts)
        kind = msg.get("type")
        if kind is None:
            return self._reject(_R.MISSING_FIELD, "field 'type' is required", ts, msg)
        return self._reject(_R.UNKNOWN_TYPE, f"unknown message type {show_value(kind)}", ts, msg)

    def _on_order_new(self, msg: dict[str, Any], ts: int) -> list[tuple[bytes, bytes]]:
        check_order_new(msg)
        symbol = msg["symbol"]
        book = self.books.get(symbol)
        if book is None:
            raise OrderRejected(_R.UNKNOWN_SYMBOL, f"no book for symbol {symbol!r}")
        # Shared strings: a resting order keeps its book's symbol object and one object per
        # owner name, not the two copies the decoder made for this message: less memory per
        # resting order (the collector never tracks a str, so its walks do not change).
        # Bounded like the other caches here: clients choose owner names.
        msg["symbol"] = book.symbol
        owner = msg["owner"]
        names = self._owner_names
        shared = names.get(owner)
        if shared is None:
            if len(names) >= _CACHE_LIMIT:
                names.clear()
            names[owner] = shared = owner
        msg["owner"] = shared
        price = msg.get("price")
        if price is not None:
            # After the check a price is a str or an int (never a bool or float), so it is a safe cache key.
            ticks = self._ticks_of.get(price)
            msg["price"] = ticks if ticks is not None else self._to_ticks(price, "price")
        stop = msg.get("stop_price")
        if stop is not None:
            ticks = self._ticks_of.get(stop)
            msg["stop_price"] = ticks if ticks is not None else self._to_ticks(stop, "stop_price")
        order = _from_dict(msg)
        book.submit(order, now_ns=ts)  # a refusal raises here and leaves the book as it was
        owner = order.owner
        counts = self._orders_per_owner
        n = counts.get(owner)
        if n is not None:
            counts[owner] = n + 1
        else:  # a new owner: named while under the limit, else counted in counts.other
            counts.add(owner)
        out = [(
            self._ack_topics[owner],
            _ack(order.id, symbol, owner, order.status, order.filled_qty, order.remaining_qty, ts),
        )]
        events = book.events
        if events:
            self._event_frames(events, out, ts)
            if book.work_left:  # only a call with events can leave work behind
                self._pending.add(symbol)
        if symbol not in self._dirty:
            self._mark_dirty(symbol)
        return out

    def _on_order_cancel(self, msg: dict[str, Any], ts: int) -> list[tuple[bytes, bytes]]:
        check_order_cancel(msg)
        symbol, order_id, owner = msg["symbol"], msg["id"], msg["owner"]
        book = self.books.get(symbol)
        if book is None:
            raise OrderRejected(_R.UNKNOWN_SYMBOL, f"no book for symbol {symbol!r}")
        order = book.get(order_id)
        # Someone else's order is answered exactly like a missing one: no probing for ids.
        if order is None or order.owner != owner:
            # A common refusal (the order was filled meanwhile), answered without raising:
            # id and owner passed the check, so they are echoed as they are.
            rejects = self.rejects
            rejects[_UNKNOWN_ORDER] = rejects.get(_UNKNOWN_ORDER, 0) + 1
            return [(self._reject_topics[owner], _reject(
                _UNKNOWN_ORDER, f"no live order {order_id!r} of {owner!r} in {symbol}"[:MAX_TEXT_LEN], ts, order_id, owner,
            ))]
        book.cancel(order_id, ts)  # now_ns, passed by position: a keyword costs a little on every cancel
        out: list[tuple[bytes, bytes]] = []
        self._event_frames(book.events, out, ts)
        if book.work_left:
            self._pending.add(symbol)
        if symbol not in self._dirty:
            self._mark_dirty(symbol)
        return out

    def _on_order_cancel_owner(self, msg: dict[str, Any], ts: int) -> list[tuple[bytes, bytes]]:
        check_order_cancel_owner(msg)
        owner, symbol = msg["owner"], msg.get("symbol")
        symbols = self.symbols if symbol is None else (symbol,)
        if symbol is not None:
            self._book(symbol)  # UNKNOWN_SYMBOL before anything is cancelled
        out: list[tuple[bytes, bytes]] = []
        for s in symbols:
            book = self.books[s]
            book.cancel_owner(owner, now_ns=ts)
            if book.events:
                self._event_frames(book.events, out, ts)
                if s not in self._dirty:
                    self._mark_dirty(s)
            if book.work_left:
                self._pending.add(s)
        return out

    def _on_snapshot_request(self, msg: dict[str, Any], ts: int) -> list[tuple[bytes, bytes]]:
        check_book_snapshot_request(msg)
        symbol = msg["symbol"]
        book = self._book(symbol)
        levels = msg.get("levels") or self.snapshot_levels
        if levels > self.snapshot_levels:  # a deep one: at most one per interval per client and symbol
            key = (msg["owner"], symbol)
            served = self._deep_snapshots
            last = served.get(key)
            if last is not None and ts - last < self.snapshot_request_interval_ns:
                raise OrderRejected(_R.THROTTLED, f"one snapshot deeper than {self.snapshot_levels} levels per "
                                    f"{self.snapshot_request_interval_ns / 1e9:g} s per client and symbol; "
                                    f"ask for {self.snapshot_levels} levels or wait")
            if len(served) >= _CACHE_LIMIT:
                served.clear()
            served[key] = ts
        return [(self._snapshot_topics[symbol], self._snapshot_payload(symbol, book, levels, ts))]

    def _book(self, symbol: str) -> Any:
        book = self.books.get(symbol)
        if book is None:
            raise OrderRejected(_R.UNKNOWN_SYMBOL, f"no book for symbol {symbol!r}")
        return book

    def _to_ticks(self, value: str | int, field: str) -> int:
        """Wire price (spec-checked: decimal string or int of currency) -> ticks, remembered; OFF_TICK if between ticks."""
        if type(value) is int:
            ticks = value * self._scale
        else:
            try:
                ticks = to_ticks(value, self.decimals)
            except ValueError:
                raise OrderRejected(_R.OFF_TICK, f"{field} {value!r} is not a multiple of the tick {self._tick}") from None
        cache = self._ticks_of
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[value] = ticks
        return ticks

    def wire_price(self, ticks: int) -> str:
        """Ticks -> the wire's decimal string with exactly ``decimals`` places (cached). O(1) amortised.

        >>> Engine(["XYZ"], book_factory=lambda s: None).wire_price(10005)
        '100.05'
        """
        text = self._wire_of.get(ticks)
        if text is None:
            if ticks >= 0 and self.decimals:
                whole, frac = divmod(ticks, self._scale)
                text = f"{whole}.{frac:0{self.decimals}d}"
            else:
                text = str(from_ticks(ticks, self.decimals))
            cache = self._wire_of
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[ticks] = text
        return text

    def _event_frames(self, events: list[tuple[str, Any]], out: list[tuple[bytes, bytes]], ts: int) -> None:
        # The engine is the authority on everything in these frames (its own book
        # produced them), so it uses the unchecked builders; tests/test_messages.py
        # pins each rule they skip to the reason the engine already satisfies it.
        fills = self.fills
        wire_of = self._wire_of
        for kind, obj in events:
            if kind == "trade":
                price = wire_of.get(obj.price) or self.wire_price(obj.price)
                buyer, seller = obj.buy_owner, obj.sell_owner
                out.append((TOPIC_TRADE_EXECUTED, make_trade_executed_unchecked(
                    obj.symbol, obj.seq, price, obj.qty, obj.buy_order_id, obj.sell_order_id,
                    buyer, seller, obj.aggressor_side, obj.timestamp_ns,
                )))
                # OwnerCounts, bounded: the common case (an owner already named) inline,
                # a new owner through add(), which names it or counts it in fills.other.
                n = fills.get(buyer)
                if n is not None:
                    fills[buyer] = n + 1
                else:
                    fills.add(buyer)
                n = fills.get(seller)
                if n is not None:
                    fills[seller] = n + 1
                else:
                    fills.add(seller)
            elif kind == "cancelled":
                out.append((self._cancelled_topics[obj.owner], make_order_cancelled_unchecked(
                    obj.id, obj.symbol, obj.owner, obj.remaining_qty, obj.filled_qty, obj.cancel_reason, ts,
                )))
            else:  # "triggered"
                out.append((self._triggered_topics[obj.owner], make_order_triggered_unchecked(
                    obj.id, obj.symbol, obj.owner, obj.order_type, obj.arrival_seq, ts,
                )))

    def _reject(self, code: RejectReason, text: str, ts: int, msg: dict[str, Any] | None = None) -> tuple[bytes, bytes]:
        rejects = self.rejects
        rejects[code] = rejects.get(code, 0) + 1
        order_id = owner = None
        if msg is not None:
            order_id = _echo(msg.get("id"), MAX_ID_LEN)
            owner = _echo(msg.get("owner"), MAX_OWNER_LEN)
        topic = self._reject_topics[owner] if owner is not None else TOPIC_ORDER_REJECT
        return topic, make_order_reject_unchecked(code, text[:MAX_TEXT_LEN] or code.value, ts, order_id, owner)

    # ------------------------------------------------------------------ snapshots

    def _snapshot_payload(self, symbol: str, book: Any, levels: int, ts: int) -> bytes:
        wire = self.wire_price
        bids, asks = book.depth(levels)
        last = book.last_price
        return make_book_snapshot_unchecked(
            symbol,
            [[wire(p), n, q] for p, n, q in bids],
            [[wire(p), n, q] for p, n, q in asks],
            len(book), ts,
            None if last is None else wire(last),
        )

    def _depth_payload(self, symbol: str, book: Any, ts: int) -> bytes:
        bids, asks = book.depth(1)
        bid_qty = bids[0][2] if bids else 0
        ask_qty = asks[0][2] if asks else 0
        total = bid_qty + ask_qty
        imbalance = (bid_qty - ask_qty) / total if total else 0.0
        return make_book_depth_unchecked(
            symbol, bid_qty, ask_qty, imbalance, ts,
            self.wire_price(bids[0][0]) if bids else None,
            self.wire_price(asks[0][0]) if asks else None,
        )

    def _mark_dirty(self, symbol: str) -> None:
        self._dirty.add(symbol)
        due = self._last_snapshot[symbol] + self.snapshot_interval_ns
        if due < self._flush_due:
            self._flush_due = due

    def flush_snapshots(self, now: int) -> list[tuple[bytes, bytes]]:
        """Frames ``book.snapshot`` + ``book.depth`` for every changed book not published in the last interval.

        A book published now is clean until its next change; one published less
        than ``snapshot_interval_ns`` ago stays dirty and waits. O(dirty books x depth).
        """
        out: list[tuple[bytes, bytes]] = []
        if now < self._flush_due:
            return out
        interval = self.snapshot_interval_ns
        last = self._last_snapshot
        for symbol in [s for s in self.symbols if s in self._dirty]:
            if now - last[symbol] >= interval:
                book = self.books[symbol]
                out.append((self._snapshot_topics[symbol], self._snapshot_payload(symbol, book, self.snapshot_levels, now)))
                out.append((self._depth_topics[symbol], self._depth_payload(symbol, book, now)))
                last[symbol] = now
                self._dirty.discard(symbol)
        self._flush_due = min((last[s] + interval for s in self._dirty), default=_NOT_DUE)
        return out

    # ------------------------------------------------------------------ the loop

    def maintain_books(self, sink: Sink, now: int) -> None:
        """One maintenance call of each book that has some to do, frames to ``sink``. O(books x budget).

        Books are taken in the order the symbols were given; each does one
        ``book.maintain(now_ns=now)`` (its outstanding work within its budget, a slice of
        a compaction pass) and its events go out as frames stamped ``now``, as a
        message's would. A book with nothing left drops off the list.
        """
        pending = self._pending
        for symbol in [s for s in self.symbols if s in pending]:
            book = self.books[symbol]
            more = book.maintain(now_ns=now)
            events = book.events
            if events:
                out: list[tuple[bytes, bytes]] = []
                self._event_frames(events, out, now)
                sink.send_many(out)
                if symbol not in self._dirty:
                    self._mark_dirty(symbol)
            if not more:
                pending.discard(symbol)

    def maintain(self, sink: Sink, idle: bool) -> None:
        """The maintenance ``run`` does between messages, as one call (for drivers other than ``run``).

        First the books' outstanding work (``maintain_books``), stamped with the last
        message's timestamp when busy and ``clock()`` when idle. Then busy
        (``idle=False``, right after a message): publish due snapshots at the last
        message's timestamp, then ``gc_policy.tick(False)``. Idle (nothing waiting):
        publish due snapshots at ``clock()``, then ``gc_policy.tick(True)``, which may be
        the policy's freeze or a collection. The caller starts the policy (``run`` does
        that itself). ``run`` inlines the same steps rather than call this, to save a
        call per message; tests pin that they agree. A driver that calls ``handle``
        alone and never this leaves the books' outstanding work waiting: stops elected
        but not fired, mass cancels half done (deterministically so).
        """
        if not idle:
            now = self._last_ts
        elif self._pending or self._dirty:  # the clock is read only when there is work, as in run
            now = self.clock()
        else:
            now = 0  # unused: nothing to stamp
        if self._pending:
            self.maintain_books(sink, now)
        if self._dirty:
            if idle:
                frames = self.flush_snapshots(now)
                if frames:
                    sink.send_many(frames)
            elif self._last_ts >= self._flush_due:
                sink.send_many(self.flush_snapshots(self._last_ts))
        if self.gc_policy is not None:
            self.gc_policy.tick(idle)

    def run(self, source: Source, sink: Sink, *, max_messages: int | None = None) -> dict[str, Any]:
        """Poll ``source`` and handle each payload to completion, until ``END`` or ``max_messages``; return ``summary()``.

        One iteration: poll; a payload is handled and its frames go to
        ``sink.send_many``; ``None`` is an idle tick. Then maintenance: the books'
        outstanding work (one ``book.maintain`` each, see ``maintain_books``), due
        snapshots of changed books go to ``sink``, and ``gc_policy.tick(idle)``
        runs if a policy is set (``run`` starts it if needed, arms its freeze
        then, since continuous trading starts with the run, and stops it after if
        it started it). The metrics' ``GcMonitor`` is installed for the run.

        Timing is sampled: the message count is exact, and one message in
        ``SAMPLE_EVERY`` is timed (``time.perf_counter_ns``) into
        ``metrics.ring`` with the collection time that fell inside it.
        """
        if max_messages is not None and (type(max_messages) is not int or max_messages < 0):
            raise ValueError(f"max_messages must be None or an int >= 0, not {max_messages!r}")
        metrics = self.metrics
        ring_add = metrics.ring.add
        monitor = metrics.gc_monitor
        policy = self.gc_policy
        monitor_here = not monitor.installed
        policy_here = policy is not None and not policy.started
        tick = policy.tick if policy is not None else None
        poll, send_many, handle = source.poll, sink.send_many, self.handle
        dirty = self._dirty
        pending = self._pending
        perf_ns = time.perf_counter_ns
        n = metrics.messages
        limit = -1 if max_messages is None else n + max_messages
        try:  # from here on, whatever happens, the collector and gc.callbacks are put back
            monitor.install()
            if policy_here:
                policy.start()
                # This engine has no trading sessions: continuous trading starts with the run.
                policy.arm_freeze()
            while n != limit:
                payload = poll()
                if payload is None:  # idle: nothing waiting, a good moment for housekeeping
                    if pending or dirty:
                        now = self.clock()
                        if pending:
                            self.maintain_books(sink, now)
                        if dirty:
                            frames = self.flush_snapshots(now)
                            if frames:
                                send_many(frames)
                    if tick is not None:
                        tick(True)
                    continue
                if payload is END:
                    break
                n += 1
                if n & SAMPLE_MASK:
                    frames = handle(payload)
                else:  # one message in SAMPLE_EVERY is timed
                    g0 = monitor.total_ns
                    t0 = perf_ns()
                    frames = handle(payload)
                    ring_add(t0, perf_ns() - t0, monitor.total_ns - g0)
                if frames:
                    send_many(frames)
                # Maintenance, reusing the message's timestamp: no second clock read.
                if pending:
                    self.maintain_books(sink, self._last_ts)
                if dirty and self._last_ts >= self._flush_due:
                    send_many(self.flush_snapshots(self._last_ts))
                if tick is not None:
                    tick(False)
        finally:
            metrics.messages = n
            if monitor_here:
                monitor.uninstall()
            if policy_here:
                policy.stop()
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """The metrics summary plus the engine's own counters, JSON-ready. O(owners + ring)."""
        out = self.metrics.summary()
        out["fills_per_owner"] = dict(sorted(self.fills.items()))
        out["fills_other_owners"] = self.fills.other
        out["rejects"] = {code.value: n for code, n in sorted(self.rejects.items())}
        out["live_orders"] = {s: len(book) for s, book in self.books.items()}
        return out
