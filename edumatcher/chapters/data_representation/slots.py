"""What ``__slots__`` buys on this interpreter: memory, construction and attribute reads.

The chapter on data representation compares a plain dataclass with a slotted one
of the same fields (the Python engine notes used 18 ``int`` fields defaulting to 0; so do the
defaults here). Classes are built with ``dataclasses.make_dataclass`` so the
field count is a parameter, and cached, so repeated experiments reuse them.

Memory per instance is counted by ``tracemalloc`` (it does not vary from run to
run), two ways: what one instance owns (``bytes_per_instance``: the list that
holds the instances is subtracted), and the Python engine notes' own method
(``seed_bytes_per_instance``: everything allocated while the instances are built,
so each instance also carries its 8-byte pointer in that list). The two differ by
that pointer and nothing else, which is why the Python engine notes' 240/184 B must be compared
with the second, not the first. The two timings, construction and one attribute read, are each an
interleaved ``compare_interleaved`` of plain against slotted (see
``edumatcher.kit._compare``). On CPython 3.11 both ratios sit close to 1, near the
edge of the 5 % band in which two times count as the same, so their outcome can
change from one run to the next: the chapter reports them with their interval
(``ratio_report``), and draws its conclusion (``verdict:``) only from memory and
from the comparison of frozen and mutable classes (``frozen_classes``), whose
effects are large.

>>> Plain, Slotted = field_classes(3)
>>> hasattr(Plain(), "__dict__"), hasattr(Slotted(), "__dict__")
(True, False)
"""

from __future__ import annotations

import functools
import gc
import tracemalloc
from dataclasses import dataclass, make_dataclass

from edumatcher.kit import SAMPLE_TARGET, Comparison, Measurement, compare_interleaved, format_seconds
from edumatcher.kit.side_by_side import QUOTED_000, SideBySide, measured_here, side_by_side

__all__ = [
    "SEED_FIELDS", "SEED_SLOTS", "SEED_RATIOS", "field_classes", "frozen_classes", "bytes_per_instance",
    "seed_bytes_per_instance", "SlotsFigures", "measure_slots", "ratio_report",
]

SEED_FIELDS = 18
"""Field count of the Python engine notes' comparison class."""

SEED_SLOTS: dict[str, tuple[str, str]] = {
    "memory per instance": ("240 B", "184 B"),
    "construct (all defaults)": ("456 ns", "184 ns"),
    "read one attribute": ("11.2 ns", "10.8 ns"),
}
"""The Python engine notes' figures for its 18-field dataclass, (plain, slots=True); quoted, CPython 3.14.10.

Its memory row counts the list that holds the instances too (one 8-byte pointer
per instance): see ``seed_bytes_per_instance``.
"""

SEED_RATIOS: dict[str, float] = {"construct (all defaults)": 456 / 184, "read one attribute": 11.2 / 10.8}
"""The Python engine notes' plain / slotted time ratios, computed from ``SEED_SLOTS`` (CPython 3.14.10)."""


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


def bytes_per_instance(cls: type, n: int = 20_000, *, collect: bool = True) -> float:
    """Bytes allocated per instance of ``cls()``, from ``tracemalloc`` over ``n`` instances. O(n).

    Counts everything each instance owns (the object, and a plain object's
    ``__dict__`` or values array); the ``int`` defaults are shared cached objects
    and cost nothing. ``collect`` runs ``gc.collect()`` first, so garbage freed
    during the count cannot hide part of it; a caller measuring many classes in a
    row collects once and passes ``False`` (a full collection in a big heap costs
    more than the count).

    >>> Plain, Slotted = field_classes(18)
    >>> bytes_per_instance(Slotted, 1000) < bytes_per_instance(Plain, 1000)
    True
    """
    traced, list_bytes = _traced_build(cls, n, collect=collect)
    return (traced - list_bytes) / n  # the list holding them is not the instances' cost


def _traced_build(cls: type, n: int, *, collect: bool) -> tuple[int, int]:
    """``(bytes traced while [cls() for _ in range(n)] runs, the list's own size)``. O(n).

    Reads the traced memory before and after rather than starting the tracer, so it
    gives the same number when a tracer is already running (it starts one only if not).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n!r}")
    if collect:
        gc.collect()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        objs = [cls() for _ in range(n)]
        after = tracemalloc.get_traced_memory()[0]
        list_bytes = objs.__sizeof__()
        del objs
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return after - before, list_bytes


def seed_bytes_per_instance(cls: type, n: int = 20_000) -> float:
    """The Python engine notes' method: everything allocated while ``[cls() for _ in range(n)]`` runs, over ``n``. O(n).

    The Python engine notes' script starts ``tracemalloc``, builds the list, and divides the
    memory traced by ``n``; so each instance also carries its slot in the list (an
    8-byte pointer, plus the list's small over-allocation). Equivalent to
    ``bytes_per_instance(cls, n)`` plus about 8. This reads the traced memory
    before and after instead of starting the tracer, so it gives the same number
    when a tracer is already running.

    >>> Plain, Slotted = field_classes(4)
    >>> 7 <= seed_bytes_per_instance(Slotted, 1000) - bytes_per_instance(Slotted, 1000) <= 10
    True
    """
    traced, _list_bytes = _traced_build(cls, n, collect=True)
    return traced / n


def ratio_report(what: str, comparison: Comparison, quoted: float | None = None) -> str:
    """An informational line: the measured ratio a/b with its interval, and the quoted ratio; no verdict.

    For a pair whose true ratio sits so close to 1 that its outcome ("slower",
    "same", "undetermined") could differ between two runs, the honest report is
    the number and its interval, with no ``verdict:`` prefix and no category.

    >>> from edumatcher.kit import compare
    >>> a = Measurement.from_samples([1.1, 1.0, 1.05, 1.1, 1.0], label="a")
    >>> b = Measurement.from_samples([1.0, 1.0, 1.0, 1.02, 0.99], label="b")
    >>> ratio_report("x", compare(a, b), 2.0).split(";")[0]
    'x: ratio 1.05 (95 % CI 1.00–1.10)'
    """
    c = comparison
    line = f"{what}: ratio {c.ratio:.2f} ({c.ci_text})"
    if quoted is not None:
        line += f"; quoted {quoted:.2f} for CPython 3.14"
    return line + " (reported, not judged: on some interpreters it sits too close to 1 for a stable verdict)"


@dataclass(frozen=True)
class SlotsFigures:
    """Everything ``measure_slots`` measured for one field count.

    ``construction`` and ``read`` compare plain (a) against slotted (b), so a
    ratio above 1 means slots are faster. ``plain_bytes``/``slotted_bytes`` are
    what one instance owns; ``seed_plain_bytes``/``seed_slotted_bytes`` the same
    classes counted by the Python engine notes' method (the holding list's pointer included),
    ``None`` when not measured.
    """

    n_fields: int
    plain_bytes: float
    slotted_bytes: float
    construction: Comparison
    read: Comparison
    seed_plain_bytes: float | None = None
    seed_slotted_bytes: float | None = None

    @property
    def construct_plain(self) -> Measurement:
        """Constructing a plain instance (all defaults)."""
        return self.construction.a

    @property
    def construct_slotted(self) -> Measurement:
        """Constructing a slotted instance (all defaults)."""
        return self.construction.b

    @property
    def read_plain(self) -> Measurement:
        """Reading one attribute of a plain instance."""
        return self.read.a

    @property
    def read_slotted(self) -> Measurement:
        """Reading one attribute of a slotted instance."""
        return self.read.b

    @property
    def memory_saving(self) -> float:
        """Fraction of a plain instance's bytes that slots save (0.23 is 23 %)."""
        return 1 - self.slotted_bytes / self.plain_bytes

    @property
    def construct_ratio(self) -> float:
        """Plain construction time over slotted (above 1: slots construct faster)."""
        return self.construction.ratio

    @property
    def read_ratio(self) -> float:
        """Plain attribute-read time over slotted (near 1: no difference)."""
        return self.read.ratio

    def beside_seed(self) -> SideBySide:
        """One table: each of the Python engine notes' quoted figures, then the same quantity measured here.

        Measured times show the median with the fastest and slowest sample in
        brackets; the ratio carries its 95 % confidence interval.
        """
        def timing(m: Measurement) -> str:
            return f"{format_seconds(m.median)} ({format_seconds(m.min)} – {format_seconds(m.max)})"

        def ratio(c: Comparison) -> str:
            return f"plain / slots = {c.ratio:.2f} ({c.ci_text})"

        def saves(plain: float, slotted: float) -> str:
            return f"saves {(1 - slotted / plain) * 100:.0f} %"

        here = measured_here()
        memory = "memory per instance"
        measured = {
            "construct (all defaults)": (timing(self.construct_plain), timing(self.construct_slotted),
                                         ratio(self.construction)),
            "read one attribute": (timing(self.read_plain), timing(self.read_slotted), ratio(self.read)),
        }
        quoted_ratio = {memory: "saves 23 %", **{k: f"plain / slots = {v:.2f}" for k, v in SEED_RATIOS.items()}}
        rows = []
        for what, (plain, slotted) in SEED_SLOTS.items():
            if what == memory:
                rows.append((f"{memory}, list pointer included", QUOTED_000, plain, slotted, quoted_ratio[what]))
                if self.seed_plain_bytes is not None and self.seed_slotted_bytes is not None:
                    rows.append((f"{memory}, list pointer included", f"{here}, the Python engine notes' method",
                                 f"{self.seed_plain_bytes:,.0f} B", f"{self.seed_slotted_bytes:,.0f} B",
                                 saves(self.seed_plain_bytes, self.seed_slotted_bytes)))
                rows.append((f"{memory}, the instance alone", f"{here}, list subtracted",
                             f"{self.plain_bytes:,.0f} B", f"{self.slotted_bytes:,.0f} B",
                             saves(self.plain_bytes, self.slotted_bytes)))
                continue
            rows.append((what, QUOTED_000, plain, slotted, quoted_ratio[what]))
            rows.append((what, here, *measured[what]))
        note = f"Both: a dataclass of {self.n_fields} int fields."
        if self.n_fields != SEED_FIELDS:
            note = note[:-1] + f" here, {SEED_FIELDS} in the Python engine notes."
        note += (" The Python engine notes divides all the memory its list comprehension allocated by the count, so its bytes"
                 " include each instance's 8-byte pointer in that list; compare like with like.")
        return side_by_side(["quantity", "source", "plain", "slots=True", "comparison"], rows, note=note)

    def memory_verdict(self) -> str:
        """The ``verdict:`` line on memory; ``tracemalloc`` counts bytes, so it does not vary between runs."""
        if self.slotted_bytes < self.plain_bytes:
            how = f"slots save {self.memory_saving * 100:.0f} % per instance here"
        elif self.slotted_bytes == self.plain_bytes:
            how = "slotted and plain instances are the same size here"
        else:
            how = f"slotted instances are {-self.memory_saving * 100:.0f} % larger here"
        return (f"verdict: memory: {how} ({self.plain_bytes:,.0f} B plain against "
                f"{self.slotted_bytes:,.0f} B slotted, {self.n_fields} int fields).")

    def seed_method_verdict(self, tolerance: float = 2.0) -> str:
        """The ``verdict:`` line comparing the Python engine notes' memory figures with the same method here (counted bytes).

        ``tolerance`` bytes absorb the holding list's over-allocation, which
        depends on the count. Needs ``seed_plain_bytes`` and ``seed_slotted_bytes``.
        """
        if self.seed_plain_bytes is None or self.seed_slotted_bytes is None:
            raise ValueError("the Python engine notes' method was not measured (seed_plain_bytes is None)")
        quoted_plain, quoted_slotted = (float(v.split()[0]) for v in SEED_SLOTS["memory per instance"])
        here = (self.seed_plain_bytes, self.seed_slotted_bytes)
        agree = abs(here[0] - quoted_plain) <= tolerance and abs(here[1] - quoted_slotted) <= tolerance
        pointer = ((self.seed_plain_bytes - self.plain_bytes) + (self.seed_slotted_bytes - self.slotted_bytes)) / 2
        how = "the same as their 3.14.10 figures" if agree else "unlike their 3.14.10 figures: this layout differs"
        return (f"verdict: memory, counted like the Python engine notes: {here[0]:,.0f} B plain and "
                f"{here[1]:,.0f} B slotted here, {how}\n"
                f"    list pointer included; quoted {quoted_plain:.0f} B and {quoted_slotted:.0f} B, within {tolerance:.0f} B. "
                f"Counting the instance alone gives {pointer:.0f} B less on "
                "each side: the list's pointer, a difference of method, not of interpreter.")

    def timing_reports(self) -> list[str]:
        """Informational lines (not verdicts) for construction and attribute read, against the quoted ratios."""
        return [
            ratio_report("construction, plain / slotted", self.construction, SEED_RATIOS["construct (all defaults)"]),
            ratio_report("attribute read, plain / slotted", self.read, SEED_RATIOS["read one attribute"]),
        ]


def measure_slots(
    n_fields: int = SEED_FIELDS, *, instances: int = 20_000, budget: float = 1.5, target: float = SAMPLE_TARGET,
    seed_instances: int = 100_000,
) -> SlotsFigures:
    """Measure memory per instance, construction (all defaults) and one attribute read, plain vs slotted.

    Each timing is one interleaved comparison of ``budget`` seconds at most,
    samples of about ``target`` seconds. Memory is counted both ways (the instance
    alone over ``instances`` objects, and the Python engine notes' method over ``seed_instances``,
    its own count, since the list's over-allocation per instance depends on the
    count). Cost: about ``2 * budget`` seconds plus four allocations under ``tracemalloc``.
    """
    Plain, Slotted = field_classes(n_fields)
    attr = f"f{n_fields // 2}"
    # Statements inlined in the timing loop: the read itself, not a function call around it.
    read = compare_interleaved(
        f"p.{attr}", f"s.{attr}", setup="p = Plain(); s = Slotted()", globals={"Plain": Plain, "Slotted": Slotted},
        budget=budget, target=target, labels=(f"read p.{attr}, plain", f"read s.{attr}, slotted"),
    )
    construction = compare_interleaved(
        Plain, Slotted, budget=budget, target=target,
        labels=(f"construct, plain ({n_fields} fields)", f"construct, slots=True ({n_fields} fields)"),
    )
    return SlotsFigures(
        n_fields=n_fields,
        plain_bytes=bytes_per_instance(Plain, instances),
        slotted_bytes=bytes_per_instance(Slotted, instances),
        construction=construction,
        read=read,
        seed_plain_bytes=seed_bytes_per_instance(Plain, seed_instances),
        seed_slotted_bytes=seed_bytes_per_instance(Slotted, seed_instances),
    )

