"""``BareBook``: the order book with every feature stripped, to show what features cost.

Same heaps, same int keys (``k0 * SEQ_SPAN + arrival_seq``) mapped to their orders, same lazy deletion, same ``Trade`` objects as ``OrderBook``;
nothing else. It takes only GTC LIMIT orders and cancels, and does no validation, no
depth or owner index, no icebergs, stops, self-match prevention, FOK or events.
Compaction is kept (the same rule as ``OrderBook``: rebuild when the heaps hold more
than ``2 * live + 64`` entries) because without it a cancel-heavy run grows its heaps
without bound, which would make the comparison about memory, not features.

On GTC limit orders and cancels it prints exactly the trades ``OrderBook`` prints.

>>> from edumatcher.model import Order, Side, OrderType, TIF
>>> book = BareBook("XYZ")
>>> book.submit(Order("s1", "XYZ", Side.SELL, OrderType.LIMIT, TIF.GTC, 5, 101))
[]
>>> [(t.price, t.qty) for t in book.submit(Order("b1", "XYZ", Side.BUY, OrderType.LIMIT, TIF.GTC, 3, 102))]
[(101, 3)]
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush

from .book import SEQ_SPAN
from .model import Order, OrderStatus, Side, Trade

__all__ = ["BareBook"]

_BUY = Side.BUY
_SEQ_MASK = SEQ_SPAN - 1
_NEW, _PARTIAL, _FILLED, _CANCELLED = OrderStatus.NEW, OrderStatus.PARTIALLY_FILLED, OrderStatus.FILLED, OrderStatus.CANCELLED


class BareBook:
    """Price-time matching of GTC limit orders on two heaps; the caller guarantees valid input."""

    def __init__(self, symbol: str) -> None:
        self.symbol = symbol
        self.last_price: int | None = None
        self._bids: list[int] = []  # -price * SEQ_SPAN + arrival_seq
        self._asks: list[int] = []  # price * SEQ_SPAN + arrival_seq
        self._entries: dict[str, int] = {}  # order id -> key
        self._live: dict[int, Order] = {}  # key -> order; a key not here is dead
        self._seq = self._trade_seq = self._dead = 0

    def submit(self, order: Order) -> list[Trade]:
        """Match a GTC limit order, rest its remainder; return the trades. O(log n) per trade and rest."""
        self._seq = seq = self._seq + 1
        order.arrival_seq, order.filled_qty, order.status = seq, 0, _NEW
        remaining, price, oid, owner, side = order.qty, order.price, order.id, order.owner, order.side
        is_buy = side is _BUY
        heap, bound = (self._asks, price) if is_buy else (self._bids, -price)
        limit = bound * SEQ_SPAN + _SEQ_MASK
        live = self._live
        trades: list[Trade] = []
        tseq = self._trade_seq  # the same local-variable habits as OrderBook: compare features, not style
        while heap:
            key = heap[0]
            resting = live.get(key)
            if resting is None:
                heappop(heap)
                self._dead -= 1
                continue
            if key > limit:
                break
            r_rem = resting.remaining_qty
            q = remaining if remaining < r_rem else r_rem
            tseq += 1
            rid, rown = resting.id, resting.owner
            if is_buy:
                trade = Trade(self.symbol, resting.price, q, oid, rid, oid, rid, owner, rown, side, tseq)
            else:
                trade = Trade(self.symbol, resting.price, q, rid, oid, oid, rid, rown, owner, side, tseq)
            trades.append(trade)
            resting.filled_qty += q
            resting.remaining_qty = r_rem = r_rem - q
            if r_rem:
                resting.status = _PARTIAL
            else:
                resting.status = _FILLED
                heappop(heap)
                del self._entries[rid]
                del live[key]
            remaining -= q
            if not remaining:
                break
        if trades:
            self._trade_seq = tseq
            self.last_price = trades[-1].price
        order.remaining_qty = remaining
        order.filled_qty = order.qty - remaining
        if remaining:
            order.status = _PARTIAL if trades else _NEW
            if is_buy:
                key = -price * SEQ_SPAN + seq
                heappush(self._bids, key)
            else:
                key = price * SEQ_SPAN + seq
                heappush(self._asks, key)
            self._entries[oid] = key
            live[key] = order
        else:
            order.status = _FILLED
        return trades

    def cancel(self, order_id: str) -> bool:
        """Cancel a resting order: mark its key dead. Amortised O(1)."""
        key = self._entries.pop(order_id, None)
        if key is None:
            return False
        live = self._live
        live.pop(key).status = _CANCELLED
        self._dead += 1
        if self._dead > len(self._entries) + 64:  # total keys > 2 * live + 64
            for heap in (self._bids, self._asks):
                heap[:] = [key for key in heap if key in live]
                heapify(heap)
            self._dead = 0
        return True

    def __len__(self) -> int:
        """Number of resting orders. O(1)."""
        return len(self._entries)
