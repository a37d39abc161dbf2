"""The course's headline measurements, as one self-contained script for any CPython 3.10+.

``python -m edumatcher versions`` (``edumatcher.kit.versions``) runs this file with
each interpreter it finds, as ``python path/to/version_suite.py '{"budget": 1.0}'``,
and reads one JSON document from its stdout; progress lines go to stderr. The
child uses **only the standard library**: the interpreter under test may have no
numpy, scipy or orjson. It takes raw samples and returns them all; the parent
computes every ratio's confidence interval with ``edumatcher.kit``.

How each pair is sampled (the same method as ``edumatcher.kit``):
interleaved rounds, one sample of A and one of B per round in an order drawn at
random for each round, each sample calibrated to last about half a millisecond
(``SAMPLE_TARGET``) and read from the thread's CPU clock where that clock is
precise. Rounds are taken until ``budget`` seconds (calibration included) have
passed, with at least ``MIN_ROUNDS`` and at most ``MAX_ROUNDS``. The collector
stays on, as in the chapters.

The figures, and the the Python engine notes statement each one re-measures:

=================  ==========================================================  ============
key                what is measured                                            kind
=================  ==========================================================  ============
slots_memory       bytes per instance, plain vs ``slots=True`` (tracemalloc)    bytes
slots_construct    ``P()`` vs ``S()``, 18-field dataclasses                     pair
from_dict          ``S(**d)`` vs ``object.__new__`` + 18 slot writes            pair
enum_lookup        ``OrderType("LIMIT")`` vs a prebuilt dict                    pair
member_value       ``Side.BUY.value`` vs ``Side.BUY``                           pair
member_read        ``Side.BUY`` vs a module constant bound to it                pair
ids                ``str(uuid.uuid4())`` vs ``os.urandom(16).hex()``            pair
dumps              ``json.dumps(p).encode()`` vs ``orjson.dumps(p)``            pair
gc_freeze          ``gc.collect()`` over N live objects, before vs after        pair
                   ``gc.freeze()``
gc_young           each generation-0 collection's pause at the default          samples
                   threshold, timed through ``gc.callbacks``
bare_book          ``BareBook`` on ``workloads.standard(n, seed=1)``            passes
=================  ==========================================================  ============

A figure that needs orjson or the engine, in an interpreter where it does not
import, comes back as ``{"kind": "missing", "reason": ...}``; one that raises,
as ``{"kind": "error", "reason": ...}``. Either way the other figures still run.

This file must stay importable and runnable by every CPython from 3.10: no
3.11+ syntax, no third-party import at module level.
"""

from __future__ import annotations

import os
import sys

# Run as a script, Python puts this file's folder (edumatcher/) first on sys.path, where a module
# named like a standard one would shadow it. Take it off before importing anything else.
_HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import gc  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import sysconfig  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
import tracemalloc  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import make_dataclass  # noqa: E402
from enum import Enum  # noqa: E402
from typing import Any  # noqa: E402

SUITE_VERSION = 1
"""Bumped when a figure's definition changes, so JSON files from different suites are not mixed up."""

SAMPLE_TARGET = 0.0005
"""Seconds one sample should last (as ``edumatcher.kit.SAMPLE_TARGET``)."""

MIN_ROUNDS = 12
"""Fewest interleaved rounds per pair (as ``edumatcher.kit.MIN_ROUNDS``)."""

MAX_ROUNDS = 400
"""Most interleaved rounds per pair (as ``edumatcher.kit.MAX_ROUNDS``)."""

FIELDS = 18
"""Field count of the Python engine notes' dataclass."""

SEED = 20_261_201
"""Seed of the per-round order, so a rerun draws the same AB/BA sequence."""

FULL = {"gc_objects": 200_000, "young_allocations": 300_000, "book_ops": 20_000}
"""Sizes of the collector and book figures in a normal run (200 000 objects: the Python engine notes' size)."""

QUICK = {"gc_objects": 50_000, "young_allocations": 100_000, "book_ops": 5_000}
"""Sizes in a ``quick`` run (50 000 objects: the Python engine notes' smaller size)."""

PAYLOAD = {
    "type": "order.new", "id": "o-7f3a9c12", "symbol": "EDU", "side": "BUY", "order_type": "LIMIT",
    "tif": "GTC", "qty": 250, "price": "100.12", "owner": "ana", "smp": "NONE", "display_qty": 50,
    "ts": 1_764_000_000_123_456_789,
}
"""The 12-key order message chapter 06 encodes (``edumatcher.chapters.serialisation.serialisation.realistic_order_payload``)."""


class Side(str, Enum):
    """The engine's side enum, restated so the figure needs no engine import."""

    BUY = "BUY"
    SELL = "SELL"


class OrderType(str, Enum):
    """The engine's order-type enum, restated."""

    LIMIT = "LIMIT"
    MARKET = "MARKET"
    STOP = "STOP"
    STOP_LIMIT = "STOP_LIMIT"


ORDER_TYPE_BY_VALUE = {member.value: member for member in OrderType}
_BUY = Side.BUY  # the module constant the engine's hot loops read instead of Side.BUY


# --------------------------------------------------------------------------- sampling


def clock() -> tuple[Callable[[], float], str]:
    """``(timer, name)``: this thread's CPU time where it is precise, else wall time (as ``comparison.TIMER``)."""
    info = time.get_clock_info("thread_time") if hasattr(time, "thread_time") else None
    if info is not None and info.resolution <= 1e-6:
        return time.thread_time, "thread CPU time"
    return time.perf_counter, "wall time"


TIMER, TIMER_NAME = clock()

Figure = dict[str, Any]
"""One figure as plain data: ``kind`` says which other keys it has (see the module docstring)."""


def _say(text: str) -> None:
    print("    " + text, file=sys.stderr, flush=True)


def statement_sampler(stmt: str, namespace: dict[str, Any],
                      target: float = SAMPLE_TARGET) -> tuple[Callable[[], float], int]:
    """``(sample, number)``: ``sample()`` times ``number`` runs of ``stmt`` (inlined in a loop) and returns seconds per run.

    ``number`` is calibrated so one sample lasts about ``target`` seconds; one
    untimed sample has run as a warm-up. ``timeit``'s loop is used without
    ``timeit.timeit`` itself, which would switch the collector off.
    """
    inner = timeit.Timer(stmt, timer=TIMER, globals=namespace).inner

    def run(calls: int) -> float:
        return inner(_repeat(calls), TIMER)

    number = 1
    while True:
        elapsed = run(number)
        if elapsed >= target:
            break
        wanted = int(number * target * 1.2 / elapsed) + 1 if elapsed > 0 else number * 10
        number = max(number + 1, min(number * 10, wanted))
    run(number)
    return (lambda: run(number) / number), number


def _repeat(calls: int) -> itertools.repeat[None]:
    return itertools.repeat(None, calls)


def interleave(sample_a: Callable[[], float], sample_b: Callable[[], float], budget: float,
               started: float | None = None) -> tuple[list[float], list[float], str]:
    """Paired rounds of ``sample_a()`` and ``sample_b()``, each round in a random order, until ``budget`` s.

    Returns ``(xs, ys, stop_reason)``.
    """
    started = time.perf_counter() if started is None else started
    order = random.Random(SEED)
    xs: list[float] = []
    ys: list[float] = []
    while True:
        if order.random() < 0.5:
            x = sample_a()
            y = sample_b()
        else:
            y = sample_b()
            x = sample_a()
        xs.append(x)
        ys.append(y)
        spent = time.perf_counter() - started
        if len(xs) >= MAX_ROUNDS:
            return xs, ys, f"stopped at the cap of {MAX_ROUNDS} rounds ({spent:.1f} s)"
        if spent >= budget and len(xs) >= MIN_ROUNDS:
            return xs, ys, f"the time budget of {budget:g} s ran out ({len(xs)} rounds)"


def pair(labels: Sequence[str], stmt_a: str, stmt_b: str, namespace: dict[str, Any], budget: float) -> Figure:
    """One interleaved comparison of two statements, as plain data."""
    started = time.perf_counter()
    sample_a, number_a = statement_sampler(stmt_a, namespace)
    sample_b, number_b = statement_sampler(stmt_b, namespace)
    xs, ys, reason = interleave(sample_a, sample_b, budget, started)
    return {"kind": "pair", "labels": list(labels), "a": xs, "b": ys, "number": [number_a, number_b],
            "stop_reason": reason, "clock": TIMER_NAME}


# --------------------------------------------------------------------------- the figures


def field_classes() -> tuple[type, type]:
    """``(Plain, Slotted)``: 18-field dataclasses of ``int = 0`` (the Python engine notes' class), the second ``slots=True``."""
    fields = [(f"f{i}", int, 0) for i in range(FIELDS)]
    return make_dataclass("Plain", fields), make_dataclass("Slotted", fields, slots=True)


def bytes_per_instance(cls: type, n: int = 20_000) -> float:
    """Bytes ``tracemalloc`` sees allocated per ``cls()``, over ``n`` instances (as ``edumatcher.chapters.data_representation.slots``)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        objs = [cls() for _ in range(n)]
        after = tracemalloc.get_traced_memory()[0]
        list_bytes = objs.__sizeof__()
        del objs
    finally:
        tracemalloc.stop()
    return (after - before - list_bytes) / n


def slots_memory(budget: float) -> Figure:
    """Bytes per instance of the 18-field dataclass, plain (a) and slotted (b); exact, so not timed."""
    plain, slotted = field_classes()
    return {"kind": "bytes", "labels": ["plain", "slots=True"],
            "a": bytes_per_instance(plain), "b": bytes_per_instance(slotted)}


def slots_construct(budget: float) -> Figure:
    """Constructing the 18-field dataclass with its defaults: plain (a) against slotted (b)."""
    plain, slotted = field_classes()
    return pair(["plain P()", "slotted S()"], "P()", "S()", {"P": plain, "S": slotted}, budget)


def from_dict(budget: float) -> Figure:
    """A slotted 18-field object from a dict: ``S(**d)`` (a) against ``__new__`` and 18 written-out stores (b)."""
    _, slotted = field_classes()
    lines = ["def write(d):", "    o = _new(S)"] + [f"    o.f{i} = d['f{i}']" for i in range(FIELDS)]
    namespace = {"_new": object.__new__, "S": slotted}
    exec("\n".join(lines + ["    return o"]), namespace)
    namespace["d"] = {f"f{i}": i for i in range(FIELDS)}
    return pair(["S(**d)", "__new__ + 18 writes"], "S(**d)", "write(d)", namespace, budget)


def enum_lookup(budget: float) -> Figure:
    """A wire string to its member: ``OrderType(value)`` (a) against a prebuilt dict (b)."""
    return pair(['OrderType("LIMIT")', "table[...]"], 'OrderType("LIMIT")', 'table["LIMIT"]',
                {"OrderType": OrderType, "table": ORDER_TYPE_BY_VALUE}, budget)


def member_value(budget: float) -> Figure:
    """``Side.BUY.value`` (a) against the member itself, ``Side.BUY`` (b)."""
    return pair(["Side.BUY.value", "Side.BUY"], "Side.BUY.value", "Side.BUY", {"Side": Side}, budget)


def member_read(budget: float) -> Figure:
    """Reading ``Side.BUY`` from the class (a) against a module constant bound to the member (b)."""
    return pair(["Side.BUY", "module constant"], "Side.BUY", "_BUY", {"Side": Side, "_BUY": _BUY}, budget)


def ids(budget: float) -> Figure:
    """An order id: ``str(uuid.uuid4())`` (a) against ``os.urandom(16).hex()`` (b), both 128 random bits."""
    return pair(["str(uuid4())", "urandom(16).hex()"], "str(uuid4())", "urandom(16).hex()",
                {"uuid4": uuid.uuid4, "urandom": os.urandom}, budget)


def dumps(budget: float) -> Figure:
    """The 12-key order to bytes: ``json.dumps(p).encode()`` (a) against ``orjson.dumps(p)`` (b)."""
    try:
        import orjson
    except ImportError as exc:
        return {"kind": "missing", "reason": f"orjson not installed ({exc})"}
    result = pair(["json.dumps().encode()", "orjson.dumps()"], "json_dumps(p).encode()", "orjson_dumps(p)",
                  {"json_dumps": json.dumps, "orjson_dumps": orjson.dumps, "p": dict(PAYLOAD)}, budget)
    result["orjson"] = getattr(orjson, "__version__", "?")
    return result


class _Resting:
    """A stand-in for a resting order (the Python engine notes' ``O``): a slotted object holding a str, an int and a dict."""

    __slots__ = ("id", "px", "meta")

    def __init__(self, i: int) -> None:
        self.id, self.px, self.meta = str(i), i, {"i": i}


def gc_freeze(budget: float, n_objects: int) -> Figure:
    """Full collections over ``n_objects`` live objects, interleaved: the heap as it is, and frozen."""
    book = [_Resting(i) for i in range(n_objects)]
    gc.collect()

    def full() -> float:
        start = TIMER()
        gc.collect()
        return TIMER() - start

    def frozen() -> float:
        gc.freeze()
        try:
            start = TIMER()
            gc.collect()
            return TIMER() - start
        finally:
            gc.unfreeze()

    full()
    frozen()
    xs, ys, reason = interleave(full, frozen, budget)
    del book
    return {"kind": "pair", "labels": ["full collect", "after gc.freeze()"], "a": xs, "b": ys, "number": [1, 1],
            "stop_reason": reason, "clock": TIMER_NAME, "objects": n_objects}


def gc_young(budget: float, allocations: int) -> Figure:
    """The pause of each generation-0 collection while ``allocations`` small lists are made and kept."""
    pauses: list[float] = []
    began = [0.0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 0:
            return
        if phase == "start":
            began[0] = TIMER()
        else:
            pauses.append(TIMER() - began[0])

    gc.collect()
    keep: list[list[int]] = []
    gc.callbacks.append(watch)
    try:
        for i in range(allocations):
            keep.append([i])  # a tracked container that survives: it counts towards the threshold
    finally:
        gc.callbacks.remove(watch)
    del keep
    return {"kind": "samples", "label": "generation-0 pause", "samples": pauses, "clock": TIMER_NAME,
            "threshold": list(gc.get_threshold()), "allocations": allocations}


def bare_book(budget: float, book_ops: int) -> Figure:
    """Passes of ``BareBook`` over ``workloads.standard(book_ops, seed=1)``, fresh orders each pass (untimed)."""
    try:
        from edumatcher.bare_book import BareBook
        from edumatcher.workloads import apply_prepared, prepare, standard
    except Exception as exc:  # any failure (even a SyntaxError) means the engine does not import here
        return {"kind": "missing", "reason": f"engine not importable here ({type(exc).__name__}: {exc})"}
    ops = standard(book_ops, seed=1)
    samples: list[float] = []
    started = time.perf_counter()
    for round_ in range(100):
        state = (BareBook("EDU"), prepare(ops))
        start = TIMER()
        apply_prepared(*state)
        elapsed = TIMER() - start
        del state
        if round_:  # the first pass is a warm-up
            samples.append(elapsed)
        if len(samples) >= 5 and time.perf_counter() - started >= budget:
            break
    return {"kind": "passes", "label": "BareBook, standard workload", "samples": samples, "ops": book_ops,
            "clock": TIMER_NAME}


def facts() -> dict[str, Any]:
    """What this interpreter's collector does by default (no timing)."""
    return {
        "gc_threshold": list(gc.get_threshold()),
        "atomic_dict_tracked": gc.is_tracked({"a": 1}),
    }


def interpreter() -> dict[str, Any]:
    """Who ran the suite (the fields of ``edumatcher.kit.InterpreterInfo``, plus the executable)."""
    build_no, build_date = platform.python_build()
    flags: list[str] = []
    if sysconfig.get_config_var("Py_DEBUG"):
        flags.append("debug build")
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        flags.append("free-threaded")
    return {"implementation": platform.python_implementation(), "version": platform.python_version(),
            "build": f"{build_no}, {build_date}", "compiler": platform.python_compiler(), "flags": flags,
            "executable": sys.executable}


FIGURES = ("slots_memory", "slots_construct", "from_dict", "enum_lookup", "member_value", "member_read", "ids",
           "dumps", "gc_freeze", "gc_young", "bare_book")
"""Every figure the suite returns, in the order it measures them (the collector figures first, on a small heap)."""

_ORDER = ("gc_freeze", "gc_young") + tuple(k for k in FIGURES if k not in ("gc_freeze", "gc_young"))


def run_suite(budget: float = 1.0, quick: bool = False, root: str | None = None,
              only: Sequence[str] | None = None) -> dict[str, Any]:
    """Measure every figure (or those in ``only``); return the JSON-able result.

    ``budget`` is seconds per comparison; ``quick`` uses the smaller sizes
    (``QUICK``); ``root`` is put first on ``sys.path`` so the engine imports from
    that checkout.
    """
    if root:
        sys.path.insert(0, root)
    sizes = QUICK if quick else FULL
    calls = {
        "gc_freeze": lambda: gc_freeze(budget, sizes["gc_objects"]),
        "gc_young": lambda: gc_young(budget, sizes["young_allocations"]),
        "bare_book": lambda: bare_book(budget, sizes["book_ops"]),
    }
    figures: dict[str, Figure] = {}
    for key in _ORDER:
        if only and key not in only:
            continue
        _say(key)
        started = time.perf_counter()
        try:
            figures[key] = calls[key]() if key in calls else globals()[key](budget)
        except Exception as exc:  # one failed figure must not lose the others
            figures[key] = {"kind": "error", "reason": f"{type(exc).__name__}: {exc}"}
        figures[key]["seconds"] = time.perf_counter() - started
    return {"suite": SUITE_VERSION, "interpreter": interpreter(), "clock": TIMER_NAME, "budget": budget,
            "quick": bool(quick), "sizes": sizes, "facts": facts(), "figures": figures}


def main(argv: Sequence[str] | None = None) -> int:
    """Read the JSON options in ``argv[1]`` (optional), run the suite, print the result as JSON."""
    argv = sys.argv if argv is None else argv
    options = json.loads(argv[1]) if len(argv) > 1 else {}
    result = run_suite(**options)
    sys.stdout.write(json.dumps(result))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
