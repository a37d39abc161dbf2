"""EduMatcher: a small, real order-matching engine to learn performance engineering on."""

from .model import TIF, Order, OrderRejected, OrderStatus, OrderType, SelfMatch, Side, Trade, new_order_id
from .ticks import from_ticks, to_ticks

__version__ = "0.1.0"

__all__ = [
    "Order", "OrderRejected", "OrderStatus", "OrderType", "SelfMatch", "Side", "TIF", "Trade",
    "from_ticks", "new_order_id", "to_ticks",
]
