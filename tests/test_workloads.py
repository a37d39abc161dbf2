"""The seeded workloads: deterministic, shaped as documented, valid for every book."""

from __future__ import annotations

import gc

import pytest

from edumatcher import workloads as W
from edumatcher.model import Order, OrderRejected, OrderStatus, RejectReason, Trade
from edumatcher.rules import validate_new_order

GENERATORS = [
    pytest.param(lambda seed: W.standard(3000, seed), id="standard"),
    pytest.param(lambda seed: W.steady_state(3000, seed, depth=200), id="steady_state"),
    pytest.param(lambda seed: W.cancel_heavy(3000, seed), id="cancel_heavy"),
    pytest.param(lambda seed: W.opening_ramp(1000, seed, then=2000), id="opening_ramp"),
]


class StubBook:
    """A stand-in book: rests everything, trades nothing, refuses qty 13, knows what is live."""

    def __init__(self, symbol: str = W.SYMBOL) -> None:
        self.symbol = symbol
        self.live: dict[str, Order] = {}
        self.submitted: list[Order] = []

    def submit(self, order: Order) -> list[Trade]:
        if order.qty == 13:
            raise OrderRejected(RejectReason.BAD_QTY, "unlucky")
        self.submitted.append(order)
        self.live[order.id] = order
        return []

    def cancel(self, order_id: str) -> bool:
        return self.live.pop(order_id, None) is not None

    def cancel_owner(self, owner: str) -> list[str]:
        ids = [i for i, o in self.live.items() if o.owner == owner]
        for i in ids:
            del self.live[i]
        return ids


def _simulate_live(ops):
    """Replay the generator's notion of live orders; return the events in order."""
    live: dict[str, str] = {}
    seen: set[str] = set()
    for op in ops:
        if op[0] == W.NEW:
            _, oid, side, kind, tif, price, qty, owner = op
            assert oid not in seen, f"duplicate id {oid}"
            seen.add(oid)
            if kind == "LIMIT" and tif in ("GTC", "DAY"):
                live[oid] = owner
        elif op[0] == W.CANCEL:
            assert op[1] in live, f"cancel of {op[1]}, which is not live as far as the generator knows"
            del live[op[1]]
        else:
            assert op[0] == W.CANCEL_OWNER and op[1] in W.OWNERS
            live = {i: o for i, o in live.items() if o != op[1]}
    return live, seen


@pytest.mark.parametrize("make", GENERATORS)
def test_deterministic_for_a_seed_and_different_across_seeds(make):
    assert make(11) == make(11)
    assert make(11) != make(12)


def test_global_random_state_is_neither_used_nor_disturbed():
    import random

    random.seed(5)
    before = random.random()
    random.seed(5)
    W.standard(500, 1)
    W.steady_state(500, 1)
    assert random.random() == before


@pytest.mark.parametrize("make", GENERATORS)
def test_ids_unique_and_cancels_target_live_orders(make):
    ops = make(3)
    _simulate_live(ops)  # asserts as it goes
    new_ids = [op[1] for op in ops if op[0] == W.NEW]
    assert new_ids == [f"o{i}" for i in range(1, len(new_ids) + 1)]


@pytest.mark.parametrize("make", GENERATORS)
def test_every_order_is_valid_and_fresh(make):
    ops = make(4)
    orders = [W.to_order(op) for op in ops if op[0] == W.NEW]
    for order in orders:
        validate_new_order(order, W.SYMBOL)
        assert order.owner in W.OWNERS
        assert order.remaining_qty == order.qty and order.status is OrderStatus.NEW
    first = next(op for op in ops if op[0] == W.NEW)
    assert W.to_order(first) is not W.to_order(first)


def test_standard_shape():
    n = 20_000
    ops = W.standard(n, 9)
    assert len(ops) == n
    news = [op for op in ops if op[0] == W.NEW]
    cancels = [op for op in ops if op[0] == W.CANCEL]
    assert len(news) + len(cancels) == n
    assert 0.28 < len(cancels) / n < 0.32
    assert {(op[3], op[4]) for op in news} == {("LIMIT", "GTC")}
    prices = [op[5] for op in news]
    assert min(prices) == W.MID - 20 and max(prices) == W.MID + 20
    assert {op[6] for op in news} == set(range(1, 101))
    buys = sum(op[2] == "BUY" for op in news)
    assert 0.47 < buys / len(news) < 0.53
    assert {op[7] for op in news} == set(W.OWNERS)
    # Both sides use the whole band, so buys and sells overlap in price and trade.
    assert {op[5] for op in news if op[2] == "BUY"} == {op[5] for op in news if op[2] == "SELL"}


def test_standard_is_a_prefix_of_a_longer_run():
    # bench book times NaiveBook on "the first 20,000 operations of the same workload".
    assert W.standard(1000, 4) == W.standard(5000, 4)[:1000]


def test_operations_share_their_price_objects():
    ops = W.standard(5000, 2)
    first_at = {}
    for op in ops:
        if op[0] == W.NEW:
            assert first_at.setdefault(op[5], op[5]) is op[5]


def test_steady_state_mix_and_stable_size():
    depth = 300
    ops = W.steady_state(40_000, 8, depth=depth)
    counts = W.composition(ops)
    assert counts["new MARKET IOC"] > 0.04 * len(ops)
    assert counts["new LIMIT IOC"] > 0.04 * len(ops)
    assert counts["new LIMIT DAY"] > 0 and counts["new LIMIT GTC"] > counts["new LIMIT DAY"]
    assert counts[W.CANCEL_OWNER] > 0
    # The generator's live set hovers around depth instead of growing with n.
    sizes = []
    live_ids: dict[str, str] = {}
    for i, op in enumerate(ops):
        if op[0] == W.NEW and op[4] in ("GTC", "DAY"):
            live_ids[op[1]] = op[7]
        elif op[0] == W.CANCEL:
            del live_ids[op[1]]
        elif op[0] == W.CANCEL_OWNER:
            live_ids = {k: v for k, v in live_ids.items() if v != op[1]}
        if i > 10_000:
            sizes.append(len(live_ids))
    assert 0.5 * depth < min(sizes) and max(sizes) < 1.5 * depth


def test_steady_state_keeps_a_real_book_near_its_size():
    from edumatcher.book import OrderBook

    book = OrderBook(W.SYMBOL)
    W.apply(book, W.steady_state(20_000, 3, depth=200))
    assert 50 < len(book) <= 300  # some of the generator's ~200 live orders were filled


def test_cancel_heavy_cancels_most_resting_orders():
    ops = W.cancel_heavy(30_000, 6)
    resting = {op[1] for op in ops if op[0] == W.NEW and op[4] == "GTC"}
    cancelled = {op[1] for op in ops if op[0] == W.CANCEL}
    assert cancelled <= resting
    assert len(cancelled) / len(resting) > 0.85
    passive = [op for op in ops if op[0] == W.NEW and op[4] == "GTC"]
    assert all((op[5] < W.MID) if op[2] == "BUY" else (op[5] > W.MID) for op in passive)
    # In a real book too: the sweeps fill few orders, so most cancels find theirs.
    from edumatcher.book import OrderBook

    tally = W.apply(OrderBook(W.SYMBOL), ops)
    assert tally.cancelled / len(resting) > 0.85


def test_opening_ramp_never_crosses_and_rests_everything():
    from edumatcher.book import OrderBook

    n = 2000
    ops = W.opening_ramp(n, 5, levels=30)
    assert len(ops) == n
    assert all(op[5] < W.MID if op[2] == "BUY" else op[5] > W.MID for op in ops)
    assert {op[5] for op in ops} == set(range(W.MID - 30, W.MID)) | set(range(W.MID + 1, W.MID + 31))
    book = OrderBook(W.SYMBOL)
    tally = W.apply(book, ops)
    assert tally.trades == 0 and len(book) == n


def test_opening_ramp_stream_follows_the_ramp():
    ops = W.opening_ramp(500, 5, then=1000)
    assert len(ops) == 1500
    assert all(op[0] == W.NEW for op in ops[:500])
    assert W.composition(ops[500:])[W.CANCEL] > 0


def test_prepare_pairs_and_unknown_operations():
    ops = [("new", "o1", "BUY", "LIMIT", "GTC", 100, 5, "ana"), ("cancel", "o1"), ("cancel_owner", "ana")]
    prepared = W.prepare(ops, symbol="XYZ")
    assert [kind for kind, _ in prepared] == ["new", "cancel", "cancel_owner"]
    order = prepared[0][1]
    assert isinstance(order, Order) and (order.id, order.symbol, order.price, order.qty) == ("o1", "XYZ", 100, 5)
    assert prepared[1:] == [("cancel", "o1"), ("cancel_owner", "ana")]
    assert W.prepare(ops)[0][1] is not order  # fresh orders every time
    with pytest.raises(ValueError, match="unknown operation"):
        W.prepare([("modify", "o1")])
    with pytest.raises(ValueError):
        W.order_dict(("cancel", "o1"))


def test_apply_counts_trades_rejects_and_cancels():
    ops = [
        ("new", "o1", "BUY", "LIMIT", "GTC", 100, 5, "ana"),
        ("new", "o2", "BUY", "LIMIT", "GTC", 100, 13, "ben"),  # the stub refuses qty 13
        ("new", "o3", "SELL", "LIMIT", "GTC", 101, 5, "ana"),
        ("cancel", "o1"),
        ("cancel", "o2"),  # was refused, so not there
        ("cancel_owner", "ana"),
    ]
    book = StubBook()
    tally = W.apply(book, ops)
    assert tally == W.Tally(trades=0, rejects=1, cancelled=1, cancel_misses=1, owner_cancelled=1)


def test_seeds_and_sizes_are_checked():
    with pytest.raises(TypeError):
        W.standard(10, seed="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        W.standard(-1)
    with pytest.raises(ValueError):
        W.opening_ramp(10, levels=0)
    assert W.standard(0) == []


def test_books_agree_on_every_workload():
    """OrderBook and NaiveBook give the same tally on each flow (small sizes: NaiveBook is O(n))."""
    from edumatcher.book import OrderBook
    from edumatcher.reference import NaiveBook

    for ops in (W.standard(1500, 2), W.steady_state(1500, 2, depth=100), W.cancel_heavy(1500, 2),
                W.opening_ramp(300, 2, then=1000)):
        assert W.apply(OrderBook(W.SYMBOL), ops) == W.apply(NaiveBook(W.SYMBOL), ops)


def test_bare_book_agrees_on_the_standard_flow():
    from edumatcher.bare_book import BareBook
    from edumatcher.book import OrderBook

    ops = W.standard(5000, 7)
    assert W.apply(OrderBook(W.SYMBOL), ops) == W.apply(BareBook(W.SYMBOL), ops)


def test_a_million_operations_stay_small():
    """The bench's workload must fit comfortably: well under 300 bytes per operation."""
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        ops = W.standard(30_000, 1)
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(ops) == 30_000
    assert current / len(ops) < 300


def test_pinned_output_is_the_same_on_every_python():
    """The flows are a fixed sequence, not "whatever this interpreter's RNG gives".

    Checked identical on CPython 3.10, 3.11 and 3.13: course figures and exercise
    answers that depend on a workload stay valid when the interpreter changes.
    """
    import hashlib

    assert W.standard(6, 1) == [
        ("new", "o1", "BUY", "LIMIT", "GTC", 10014, 77, "cai"),
        ("new", "o2", "BUY", "LIMIT", "GTC", 10006, 79, "ana"),
        ("cancel", "o2"),
        ("new", "o3", "SELL", "LIMIT", "GTC", 9980, 45, "fay"),
        ("cancel", "o3"),
        ("new", "o4", "BUY", "LIMIT", "GTC", 9981, 55, "hal"),
    ]
    digest = hashlib.sha256(repr(W.standard(20_000, 1)).encode()).hexdigest()[:16]
    assert digest == "83b57aa425540d28"
    mixed = W.steady_state(5000, 1) + W.cancel_heavy(5000, 1) + W.opening_ramp(500, 1, then=500)
    assert hashlib.sha256(repr(mixed).encode()).hexdigest()[:16] == "15bc8547ecd0b4bd"


def test_encode_workload_is_what_the_checked_builders_write_and_is_compact() -> None:
    import tracemalloc

    from edumatcher import messages
    from edumatcher.ticks import from_ticks

    ops = W.opening_ramp(200, 5, then=300)
    owner_of: dict[str, str] = {}
    checked = []
    for op in ops:
        if op[0] == W.NEW:
            _, order_id, side, order_type, tif, price, qty, owner = op
            owner_of[order_id] = owner
            text = None if price is None else str(from_ticks(price, 2))
            checked.append(messages.make_order_new(order_id, W.SYMBOL, side, order_type, qty, owner, tif=tif, price=text))
        elif op[0] == W.CANCEL:
            checked.append(messages.make_order_cancel(op[1], W.SYMBOL, owner_of[op[1]]))
        else:
            checked.append(messages.make_order_cancel_owner(op[1], symbol=W.SYMBOL))
    assert W.encode_workload(ops) == checked
    tracemalloc.start()
    try:
        payloads = W.encode_workload(ops)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held / len(payloads) < 400  # ~100-150 bytes each, not an encoder's 4 KiB buffer
