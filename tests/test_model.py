"""``edumatcher.model``: the dict round trip covers every field, the enum tables every member."""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any

import pytest

from edumatcher import model
from edumatcher.model import (
    CANCEL_REASON_BY_VALUE,
    ORDER_TYPE_BY_VALUE,
    SELF_MATCH_BY_VALUE,
    SIDE_BY_VALUE,
    STATUS_BY_VALUE,
    TIF,
    TIF_BY_VALUE,
    CancelReason,
    Order,
    OrderRejected,
    OrderStatus,
    OrderType,
    RejectReason,
    SelfMatch,
    Side,
    Trade,
    new_order_id,
)

ENUMS: dict[str, type[enum.Enum]] = {e.__name__: e for e in (Side, OrderType, TIF, OrderStatus, SelfMatch, CancelReason)}


def distinctive_values(cls: type) -> dict[str, Any]:
    """A value for every field of ``cls`` that differs from its default and from every other field's.

    Driven by each field's annotation, so a new field gets a value without editing this
    test; an annotation it cannot fill fails loudly, naming the field.
    """
    values: dict[str, Any] = {}
    for i, f in enumerate(dataclasses.fields(cls)):
        kinds = {part.strip() for part in str(f.type).split("|")} - {"None"}
        if len(kinds) != 1:
            raise AssertionError(f"{cls.__name__}.{f.name}: no distinctive value for annotation {f.type!r}")
        (kind,) = kinds
        default = f.default
        if kind == "int":
            values[f.name] = 1000 + 37 * i
        elif kind == "str":
            values[f.name] = f"{f.name}-value-{i}"
        elif kind in ENUMS:
            # The last member that is not the default (wire strings must survive too).
            values[f.name] = [m for m in ENUMS[kind] if m is not default][-1]
        else:
            raise AssertionError(f"{cls.__name__}.{f.name}: no distinctive value for annotation {f.type!r}")
        assert values[f.name] != default, f.name
    return values


def wire(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.value if isinstance(v, enum.Enum) else v) for k, v in values.items()}


def test_order_round_trips_every_field() -> None:
    values = distinctive_values(Order)
    d = wire(values)
    order = Order.from_dict(d)
    for name, value in values.items():  # from_dict read every field ...
        assert getattr(order, name) == value, f"Order.from_dict does not read {name!r}"
    assert order.to_dict() == d  # ... and to_dict wrote every field back, and nothing else
    assert set(order.to_dict()) == {f.name for f in dataclasses.fields(Order)}
    again = Order(**values)
    assert again.to_dict() == d


def test_trade_to_dict_covers_every_field() -> None:
    values = distinctive_values(Trade)
    trade = Trade(**values)
    assert trade.to_dict() == wire(values)


def test_from_dict_defaults_for_a_client_order() -> None:
    order = Order.from_dict({"id": "a", "symbol": "XYZ", "side": "SELL", "order_type": "MARKET", "qty": 7})
    assert (order.tif, order.smp, order.status, order.owner) == (TIF.GTC, SelfMatch.NONE, OrderStatus.NEW, "")
    assert (order.price, order.stop_price, order.display_qty) == (None, None, None)
    assert (order.remaining_qty, order.filled_qty, order.visible_qty, order.arrival_seq, order.timestamp_ns) == (7, 0, 0, 0, 0)


def test_enums_are_their_wire_strings() -> None:
    for e in ENUMS.values():
        for member in e:
            assert member == member.value and isinstance(member, str)


@pytest.mark.parametrize(
    ("table", "enum_class"),
    [(SIDE_BY_VALUE, Side), (ORDER_TYPE_BY_VALUE, OrderType), (TIF_BY_VALUE, TIF), (STATUS_BY_VALUE, OrderStatus),
     (SELF_MATCH_BY_VALUE, SelfMatch), (CANCEL_REASON_BY_VALUE, CancelReason)],
)
def test_each_enum_table_covers_every_member(table: dict[str, Any], enum_class: type[enum.Enum]) -> None:
    assert len(table) == len(enum_class)
    for member in enum_class:
        assert table[member.value] is member


def test_every_enum_has_a_table_in_model() -> None:
    tables = {type(next(iter(v.values()))) for k, v in vars(model).items() if k.endswith("_BY_VALUE")}
    assert tables == set(ENUMS.values())


def test_new_order_id_is_32_hex_characters_and_fresh_each_call() -> None:
    ids = [new_order_id() for _ in range(1000)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert len(set(ids)) == len(ids)


def test_order_rejected_carries_code_and_message() -> None:
    exc = OrderRejected(RejectReason.BAD_QTY, "qty must be positive")
    assert exc.code is RejectReason.BAD_QTY and exc.message == "qty must be positive"
    assert str(exc) == "BAD_QTY: qty must be positive"


def test_slots_catch_a_misspelt_field() -> None:
    order = Order.from_dict({"id": "a", "symbol": "XYZ", "side": "BUY", "order_type": "LIMIT", "qty": 1, "price": 1})
    with pytest.raises(AttributeError):
        order.remaning_qty = 0  # type: ignore[attr-defined]


def test_optional_enum_fields_sent_as_none_mean_absent() -> None:
    order = Order.from_dict({"id": "a", "symbol": "X", "side": "BUY", "order_type": "LIMIT", "qty": 1,
                             "price": 5, "tif": None, "smp": None, "status": None})
    assert (order.tif, order.smp, order.status) == (TIF.GTC, SelfMatch.NONE, OrderStatus.NEW)
