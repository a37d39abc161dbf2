"""The engine-level differential harness and the profile readers chapter 01 and its exercises use."""

from __future__ import annotations

import cProfile
import pstats

import orjson
import pytest

from edumatcher.chapters.where_the_time_goes.engine_differential import (
    case_payloads,
    compare_engines,
    count_calls,
    reference_engine,
)
from edumatcher.chapters.where_the_time_goes.profiling import (
    HARNESS_FUNCTIONS,
    ProfileReport,
    ProfileRow,
    profile_beside_seed,
    report_from_stats,
)
from edumatcher.differential import LifoTieBook, generate_case
from edumatcher.engine import Engine
from edumatcher.kit.message_path import encode_workload
from edumatcher.model import Order
from edumatcher.workloads import steady_state


def _plain(symbols: list[str]) -> Engine:
    return Engine(symbols, clock=lambda: 1)


def test_case_payloads_send_prices_as_wire_strings_and_cancels_with_the_owner() -> None:
    case = generate_case(3, 200)
    payloads = case_payloads(case)
    assert len(payloads) == len(case.ops)
    for op, payload in zip(case.ops, payloads, strict=True):
        msg = orjson.loads(payload)
        if op["op"] == "submit":
            assert msg["type"] == "order.new"
            price = op["order"].get("price")
            if type(price) is int and price > 0:
                assert msg["price"] == f"{price // 100}.{price % 100:02d}"
        elif op["op"] == "cancel":
            assert msg["type"] == "order.cancel" and msg["id"] == op["id"] and msg["owner"]
        else:
            assert msg == {"type": "order.cancel_owner", "owner": op["owner"], "symbol": case.symbol}


def test_case_payloads_keep_the_defective_orders_for_the_engine_to_refuse() -> None:
    payloads = case_payloads(generate_case(5, 400))
    engine = _plain(["XYZ"])
    rejected = [p for p in payloads if p.startswith(b'{"type":"order.new"')
                and any(topic.startswith(b"order.reject") for topic, _ in engine.handle(p))]
    assert rejected, "a generated case holds defective orders, and the engine must refuse some of them"


@pytest.mark.parametrize(("seed", "prices"), [(0, "ladder"), (1, "ladder"), (2, "wide")])
def test_the_engine_agrees_with_the_naive_reference_engine(seed: int, prices: str) -> None:
    assert compare_engines(_plain, case_payloads(generate_case(seed, 300, prices))) is None


def test_the_reference_engine_runs_on_naive_books() -> None:
    assert type(reference_engine(["XYZ"]).books["XYZ"]).__name__ == "NaiveBook"


def test_a_planted_priority_bug_is_caught() -> None:
    lifo = lambda symbols: Engine(symbols, clock=lambda: 1, book_factory=LifoTieBook)  # noqa: E731
    found = [compare_engines(lifo, case_payloads(generate_case(seed, 300))) for seed in range(4)]
    assert any(d is not None for d in found), "newest-first at equal prices must show in the frames"


class _DropsIcebergs(Engine):
    """Builds every new order without its display quantity: icebergs become plain orders."""

    def _on_order_new(self, msg, ts):  # type: ignore[no-untyped-def]
        msg.pop("display_qty", None)
        return super()._on_order_new(msg, ts)


class _Crashes(Engine):
    def _on_order_cancel(self, msg, ts):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")


def test_a_changed_engine_that_drops_a_field_diverges_on_frames() -> None:
    found = compare_engines(lambda s: _DropsIcebergs(s, clock=lambda: 1), case_payloads(generate_case(1, 400)))
    assert found is not None and found.what in ("frames", "book XYZ (depth, best bid/ask, last price, size)")
    assert "display_qty" in found.payload.decode() or found.index > 0
    assert "differs" in found.describe()


def test_a_crash_is_a_divergence_with_its_message() -> None:
    found = compare_engines(lambda s: _Crashes(s, clock=lambda: 1), case_payloads(generate_case(1, 100)))
    assert found is not None and found.what == "outcome" and "RuntimeError: boom" in found.tested
    assert orjson.loads(found.payload)["type"] == "order.cancel"


def test_count_calls_counts_exactly() -> None:
    payloads = encode_workload(steady_state(300, seed=2, depth=40))
    assert count_calls(_plain, payloads, " handle", symbols=("EDU",)) == len(payloads)
    built = count_calls(_plain, payloads, " from_dict", symbols=("EDU",))
    new_orders = sum(1 for p in payloads if p.startswith(b'{"type":"order.new"'))
    assert built == new_orders  # steady_state sends only valid orders
    gets = count_calls(_plain, payloads, "<method 'get' of 'dict' objects>", symbols=("EDU",))
    assert gets == count_calls(_plain, payloads, "<method 'get' of 'dict' objects>", symbols=("EDU",))
    assert gets >= 12 * built, "from_dict alone looks up twelve optional fields with dict.get"


def _profile_of(fn) -> pstats.Stats:  # type: ignore[no-untyped-def]
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    return pstats.Stats(profiler)


def test_report_from_stats_leaves_the_harness_out_and_shares_sum_to_one() -> None:
    engine = _plain(["EDU"])
    payloads = encode_workload(steady_state(200, seed=1, depth=30))
    stats = _profile_of(lambda: [engine.handle(p) for p in payloads])
    report = report_from_stats(stats, len(payloads))
    names = [row.function for row in report.rows]
    assert not any(name in HARNESS_FUNCTIONS or name.endswith(" <module>") for name in names)
    assert not any("disable" in name and "_lsprof" in name for name in names)
    assert sum(row.own_share for row in report.rows) == pytest.approx(1.0)
    handle = next(row for row in report.rows if row.function.endswith(" handle"))
    assert handle.calls == len(payloads) and handle.calls_per_message == 1.0
    with pytest.raises(ValueError, match="messages"):
        report_from_stats(stats, 0)


def test_report_from_stats_can_keep_what_it_would_leave_out() -> None:
    stats = _profile_of(lambda: Order.from_dict({"id": "a", "symbol": "X", "side": "BUY", "order_type": "LIMIT",
                                                 "qty": 1, "price": 5}))
    kept = report_from_stats(stats, 1, leave_out=frozenset())
    assert any("disable" in row.function for row in kept.rows)


def test_the_seed_enum_row_matches_only_the_enum_module() -> None:
    rows = (ProfileRow("traitlets.py:694 __get__", 1, 1.0, 0.5, 0.5, 0.5),
            ProfileRow("enum.py:193 __get__", 1, 1.0, 0.5, 0.5, 0.5))
    table = profile_beside_seed(ProfileReport(rows, 1.0, 1))
    index = next(i for i, row in enumerate(table.rows) if row[0].startswith("enum.__get__"))
    assert "enum.py" in table.rows[index + 1][0]
