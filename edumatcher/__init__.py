"""EduMatcher: a small, real order-matching engine to learn performance engineering on.

A tour in four lines: rest a sell order, cross it with a buy, read the trade.

>>> from edumatcher import Order, OrderBook
>>> book = OrderBook("ACME")
>>> book.submit(Order.from_dict({"id": "s1", "symbol": "ACME", "side": "SELL", "order_type": "LIMIT",
...                              "qty": 5, "price": 10010, "owner": "alice"}))
[]
>>> [(t.price, t.qty, t.buy_order_id, t.sell_order_id) for t in book.submit(Order.from_dict(
...     {"id": "b1", "symbol": "ACME", "side": "BUY", "order_type": "LIMIT", "qty": 3, "price": 10020,
...      "owner": "bob"}))]
[(10010, 3, 'b1', 's1')]
>>> book.depth()
([], [(10010, 1, 2)])

Prices are integer ticks (``to_ticks("100.10", 2) == 10010``); the trade printed at the
resting order's price. The rules the book follows are written once, in ``edumatcher.rules``;
``edumatcher.reference.NaiveBook`` follows them the obvious way, and the tests hold the two
to the same answers after every operation.
"""

from .book import COMPACT_FACTOR, COMPACT_SLACK, OrderBook
from .model import TIF, Order, OrderRejected, OrderStatus, OrderType, SelfMatch, Side, Trade, new_order_id
from .ticks import from_ticks, to_ticks

__version__ = "0.1.0"

ENGINE_MODULES = (
    "ticks", "model", "rules", "book", "bare_book", "reference", "messages", "engine", "sinks", "metrics",
    "gc_policy", "bounded_queue", "workloads", "differential",
)
"""The engine: the modules at this package's top level, in reading order (chapter 00's map lists them).

Everything else lives in a subpackage: ``kit`` (measuring), ``chapters`` (each chapter's experiments,
figures and control), ``grading`` (the grader) and ``benchmarks``; ``cli`` is the command line.
"""


class CliError(Exception):
    """A mistake the user can fix: ``python -m edumatcher`` prints it as one ``Error: ...`` line and exits 1.

    Defined here, at the package's root, so the command line (``edumatcher.cli``) and every library part
    that raises it (the kit, the benchmarks, the grader) import it without importing one another.
    """

__all__ = [
    "CliError", "COMPACT_FACTOR", "ENGINE_MODULES", "COMPACT_SLACK", "Order", "OrderBook", "OrderRejected", "OrderStatus", "OrderType",
    "SelfMatch", "Side", "TIF", "Trade", "from_ticks", "new_order_id", "to_ticks",
]
