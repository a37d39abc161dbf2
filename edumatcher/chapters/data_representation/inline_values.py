"""Where a plain instance keeps its attributes, and why its size jumps at about 30 fields.

On CPython 3.11 and later an ordinary instance does not start with a dictionary.
Its class holds one *shared key table* (the attribute names, in the order
``__init__`` first assigns them), and each instance holds only an array of
values that lines up with it ("inline values"). A real per-instance ``dict`` is
*materialised* only when something asks for one, for example ``obj.__dict__``,
and even then it points at the same values array. CPython 3.10 also shares keys
(PEP 412), but every instance has its ``dict`` object from the start.

A class's shared key table is capped: ``SHARED_KEYS_MAX_SIZE`` is 30 in CPython's
``Include/internal/pycore_dict.h`` (3.11 to 3.14). An instance whose attribute
names do not fit gives up the shared table and gets an ordinary dictionary of
its own, several times larger: that is the cliff in chapter 04's memory curve.
Each new instance lowers the table's usable count by one while it has room
(``Objects/dictobject.c``), so a dataclass, whose first instance assigns every
field in ``__init__``, fits 29 names and its 30th is the first that does not
(true on 3.11 to 3.13; a class that builds empty instances first fits fewer).
Where exactly it falls is measured, not assumed (``layout_by_fields``,
``largest_step``).

Memory is counted with ``edumatcher.chapters.data_representation.slots.bytes_per_instance`` (the
instance alone), so the numbers do not vary from run to run.

>>> rows = layout_by_fields([2, 3], instances=500)
>>> [r.n_fields for r in rows], all(r.slotted < r.plain for r in rows)
([2, 3], True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from edumatcher.kit import run_isolated

from .slots import bytes_per_instance, field_classes

__all__ = ["SHARED_KEYS_MAX_SIZE", "LayoutRow", "materialised", "layout_by_fields", "layout_rows_json",
           "layout_by_fields_isolated", "largest_step"]

_WARM_UP = 64

SHARED_KEYS_MAX_SIZE = 30
"""CPython's cap on a class's shared key table (``Include/internal/pycore_dict.h``, 3.11 to 3.14); quoted, not measured."""


def materialised(cls: type) -> Callable[[], object]:
    """A factory that builds ``cls()`` and then reads its ``__dict__``, which makes CPython 3.11+ create the dict.

    >>> Plain, _ = field_classes(2)
    >>> type(vars(materialised(Plain)()))
    <class 'dict'>
    """
    def make() -> object:
        obj = cls()
        obj.__dict__  # noqa: B018 - the read is the point: it materialises the instance's dict
        return obj

    make.__name__ = f"{cls.__name__}_with_dict"
    return make


@dataclass(frozen=True)
class LayoutRow:
    """Bytes one instance owns with ``n_fields`` int fields: plain, plain after ``__dict__`` was read, slotted."""

    n_fields: int
    plain: float
    materialised: float
    slotted: float


def _bytes(factory: Callable[[], object], instances: int) -> float:
    # bytes_per_instance calls its argument with no arguments: a class or a factory both work. It runs a
    # full collection first, which also empties the dict free lists: an instance's dict taken from a free
    # list would be memory tracemalloc never sees allocated.
    return bytes_per_instance(factory, instances)  # type: ignore[arg-type]


def layout_by_fields(counts: Sequence[int], *, instances: int = 2_000) -> list[LayoutRow]:
    """One ``LayoutRow`` per field count, in the given order. O(sum(counts) * instances).

    The classes are ``field_classes(n)``: dataclasses of ``n`` int fields, plain and
    slotted. Each count starts with a full collection, whose cost grows with the
    heap: in a notebook kernel prefer ``layout_by_fields_isolated``.
    """
    if not counts:
        raise ValueError("layout_by_fields needs at least one field count")
    rows = []
    for n in counts:
        plain, slotted = field_classes(n)
        for factory in (plain, slotted):
            # Warm-up: while a class's shared key table still has spare room, each new instance's values
            # array is given a little of it (3.11+), so the first few dozen instances are larger than
            # the steady state that a book of thousands of orders lives in.
            for _ in range(_WARM_UP):
                factory()
        rows.append(LayoutRow(n, _bytes(plain, instances), _bytes(materialised(plain), instances),
                              _bytes(slotted, instances)))
    return rows


def layout_rows_json(counts: list[int], instances: int = 2_000) -> list[dict[str, Any]]:
    """``layout_by_fields`` as JSON-able dicts: the function a fresh interpreter runs for ``layout_by_fields_isolated``."""
    return [asdict(row) for row in layout_by_fields(counts, instances=instances)]


def layout_by_fields_isolated(counts: Sequence[int], *, instances: int = 2_000) -> list[LayoutRow]:
    """``layout_by_fields`` run in a fresh interpreter (``edumatcher.kit._worker``): a small heap, cheap collections.

    A notebook kernel's heap makes each full collection cost a tenth of a second or
    more, and its free lists and import history are whatever earlier cells left.
    """
    result = run_isolated("edumatcher.chapters.data_representation.inline_values:layout_rows_json",
                          {"counts": list(counts), "instances": instances})
    return [LayoutRow(**row) for row in result]


def largest_step(rows: Sequence[LayoutRow]) -> tuple[LayoutRow, LayoutRow]:
    """The two neighbouring rows between which a plain instance grows most: where the cliff is.

    >>> a, b, c = LayoutRow(1, 80, 144, 40), LayoutRow(2, 88, 152, 48), LayoutRow(3, 900, 900, 56)
    >>> [r.n_fields for r in largest_step([a, b, c])]
    [2, 3]
    """
    if len(rows) < 2:
        raise ValueError("largest_step needs at least two rows")
    pairs = list(zip(rows[:-1], rows[1:], strict=True))
    return max(pairs, key=lambda pair: pair[1].plain - pair[0].plain)
