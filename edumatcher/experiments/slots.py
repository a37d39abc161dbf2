"""What ``__slots__`` buys on this interpreter: memory, construction and attribute reads.

The chapter on data representation compares a plain dataclass with a slotted one
of the same fields (seed 000 used 18 ``int`` fields defaulting to 0; so do the
defaults here). Classes are built with ``dataclasses.make_dataclass`` so the
field count is a parameter, and cached, so repeated experiments reuse them.

>>> Plain, Slotted = field_classes(3)
>>> hasattr(Plain(), "__dict__"), hasattr(Slotted(), "__dict__")
(True, False)
"""

from __future__ import annotations

import functools
import gc
import tracemalloc
from dataclasses import dataclass, make_dataclass

from ..measure import Measurement, format_seconds, measure
from .side_by_side import QUOTED_000, SideBySide, measured_here, side_by_side

__all__ = [
    "SEED_FIELDS", "SEED_SLOTS", "field_classes", "frozen_classes", "bytes_per_instance", "SlotsFigures", "measure_slots",
    "measure_frozen",
]

SEED_FIELDS = 18
"""Field count of seed 000's comparison class."""

SEED_SLOTS: dict[str, tuple[str, str]] = {
    "memory per instance": ("240 B", "184 B"),
    "construct (all defaults)": ("456 ns", "184 ns"),
    "read one attribute": ("11.2 ns", "10.8 ns"),
}
"""Seed 000's figures for its 18-field dataclass, (plain, slots=True); quoted, CPython 3.14.10."""


def _names(n_fields: int) -> list[str]:
    if isinstance(n_fields, bool) or not isinstance(n_fields, int) or n_fields < 1:
        raise ValueError(f"n_fields must be a positive int, not {n_fields!r}")
    return [f"f{i}" for i in range(n_fields)]


@functools.lru_cache(maxsize=32)
def field_classes(n_fields: int = SEED_FIELDS) -> tuple[type, type]:
    """``(Plain, Slotted)``: dataclasses with fields ``f0..f{n-1}: int = 0``; only the second has ``slots=True``."""
    fields = [(name, int, 0) for name in _names(n_fields)]
    return (
        make_dataclass(f"Plain{n_fields}", fields),
        make_dataclass(f"Slotted{n_fields}", fields, slots=True),
    )


@functools.lru_cache(maxsize=32)
def frozen_classes(n_fields: int = SEED_FIELDS) -> tuple[type, type]:
    """``(Slotted, FrozenSlotted)``: the same slotted fields, mutable and ``frozen=True``."""
    fields = [(name, int, 0) for name in _names(n_fields)]
    return (
        make_dataclass(f"Mutable{n_fields}", fields, slots=True),
        make_dataclass(f"Frozen{n_fields}", fields, slots=True, frozen=True),
    )


def bytes_per_instance(cls: type, n: int = 20_000) -> float:
    """Bytes allocated per instance of ``cls()``, from ``tracemalloc`` over ``n`` instances. O(n).

    Counts everything each instance owns (the object, and a plain object's
    ``__dict__``); the ``int`` defaults are shared cached objects and cost nothing.

    >>> Plain, Slotted = field_classes(18)
    >>> bytes_per_instance(Slotted, 1000) < bytes_per_instance(Plain, 1000)
    True
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n!r}")
    gc.collect()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        objs = [cls() for _ in range(n)]
        after = tracemalloc.get_traced_memory()[0]
        list_bytes = objs.__sizeof__()  # the list holding them is not the instances' cost
        del objs
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return (after - before - list_bytes) / n


@dataclass(frozen=True)
class SlotsFigures:
    """Everything ``measure_slots`` measured for one field count."""

    n_fields: int
    plain_bytes: float
    slotted_bytes: float
    construct_plain: Measurement
    construct_slotted: Measurement
    read_plain: Measurement
    read_slotted: Measurement

    @property
    def memory_saving(self) -> float:
        """Fraction of a plain instance's bytes that slots save (0.23 is 23 %)."""
        return 1 - self.slotted_bytes / self.plain_bytes

    @property
    def construct_ratio(self) -> float:
        """Plain construction time over slotted (above 1: slots construct faster)."""
        return self.construct_plain.median / self.construct_slotted.median

    @property
    def read_ratio(self) -> float:
        """Plain attribute-read time over slotted (near 1: no difference)."""
        return self.read_plain.median / self.read_slotted.median

    def beside_seed(self) -> SideBySide:
        """One table: each of seed 000's quoted figures, then the same quantity measured here.

        Measured times show the median with the fastest and slowest sample in brackets.
        """
        def timing(m: Measurement) -> str:
            return f"{format_seconds(m.median)} ({format_seconds(m.min)} – {format_seconds(m.max)})"

        here = measured_here()
        measured = {
            "memory per instance": (f"{self.plain_bytes:,.0f} B", f"{self.slotted_bytes:,.0f} B",
                                    f"saves {self.memory_saving * 100:.0f} %"),
            "construct (all defaults)": (timing(self.construct_plain), timing(self.construct_slotted),
                                         f"plain / slots = {self.construct_ratio:.2f}"),
            "read one attribute": (timing(self.read_plain), timing(self.read_slotted),
                                   f"plain / slots = {self.read_ratio:.2f}"),
        }
        quoted_ratio = {"memory per instance": "saves 23 %", "construct (all defaults)": "plain / slots = 2.48",
                        "read one attribute": "plain / slots = 1.04"}
        rows = []
        for what, (plain, slotted) in SEED_SLOTS.items():
            rows.append((what, QUOTED_000, plain, slotted, quoted_ratio[what]))
            rows.append((what, here, *measured[what]))
        note = f"Both: a dataclass of {self.n_fields} int fields."
        if self.n_fields != SEED_FIELDS:
            note = note[:-1] + f" here, {SEED_FIELDS} in seed 000."
        return side_by_side(["quantity", "source", "plain", "slots=True", "comparison"], rows, note=note)

    def verdict(self) -> str:
        """What slots buy on this interpreter, one sentence per quantity, computed from the figures.

        Reads and constructions count as "no measurable difference" when the
        min-max ranges of the two measurements overlap.
        """
        def differs(a: Measurement, b: Measurement) -> bool:
            return a.max < b.min or b.max < a.min

        memory = (f"Memory: slots save {self.memory_saving * 100:.0f} % per instance here "
                  f"({self.plain_bytes:,.0f} B against {self.slotted_bytes:,.0f} B).")
        if differs(self.construct_plain, self.construct_slotted):
            faster = "faster" if self.construct_ratio > 1 else "slower"
            make = f"Construction: slotted instances are built {max(self.construct_ratio, 1 / self.construct_ratio):.2f}x {faster} here."
        else:
            make = "Construction: no measurable difference here (the min-max ranges overlap)."
        if differs(self.read_plain, self.read_slotted):
            faster = "faster" if self.read_ratio > 1 else "slower"
            read = f"Attribute read: {max(self.read_ratio, 1 / self.read_ratio):.2f}x {faster} with slots here."
        else:
            read = "Attribute read: no measurable difference here (the min-max ranges overlap)."
        return " ".join((memory, make, read))


def measure_slots(n_fields: int = SEED_FIELDS, *, instances: int = 20_000, target: float = 0.02) -> SlotsFigures:
    """Measure memory per instance, construction (all defaults) and one attribute read, plain vs slotted.

    Cost: about 12 calibrated measurements of ``target`` seconds plus two
    allocations of ``instances`` objects under ``tracemalloc``.
    """
    Plain, Slotted = field_classes(n_fields)
    attr = f"f{n_fields // 2}"
    reads = {}
    for name, cls in (("plain", Plain), ("slotted", Slotted)):
        # A statement inlined in the timing loop: the read itself, not a function call around it.
        reads[name] = measure(f"o.{attr}", setup="o = cls()", globals={"cls": cls}, target=target,
                              label=f"read o.{attr}, {name}")
    return SlotsFigures(
        n_fields=n_fields,
        plain_bytes=bytes_per_instance(Plain, instances),
        slotted_bytes=bytes_per_instance(Slotted, instances),
        construct_plain=measure(Plain, target=target, label=f"construct, plain ({n_fields} fields)"),
        construct_slotted=measure(Slotted, target=target, label=f"construct, slots=True ({n_fields} fields)"),
        read_plain=reads["plain"],
        read_slotted=reads["slotted"],
    )


def measure_frozen(n_fields: int = 6, *, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """Construction with every field passed, slotted mutable vs slotted frozen: ``(mutable, frozen)``."""
    Mutable, Frozen = frozen_classes(n_fields)
    args = tuple(range(n_fields))
    return (
        measure(lambda: Mutable(*args), target=target, label=f"slots=True ({n_fields} fields given)"),
        measure(lambda: Frozen(*args), target=target, label=f"slots=True, frozen=True ({n_fields} fields given)"),
    )
