"""No exercise can be answered by importing the package: its nearest code, wrapped, loses points (issue 22, §4).

The course guide's rule: "The answer is not importable from the package nor printed in a chapter." For
every exercise this module writes the submission a student would write who went looking in
``edumatcher`` for the answer: each answer cell replaced by thin wrappers over (or re-exports of) the
package's nearest function, class or method, every other answer cell left as the solution has it. It is
graded through the real pipeline (restored checks, hidden ones included, in a fresh kernel), like
``tests/test_exercises.py`` grades the blank copy and the solution, and must lose points: the checks
named in ``MUST_FAIL`` score 0 (they test what the exercise asks beyond what the package does), and the
total stays below full marks.

Exercises are found by topic, not number (``toy_submissions.real_exercise``), so a renumbering of the
chapters changes nothing here. An exercise added to ``solutions/`` without an entry in ``NEAREST``
fails ``test_every_exercise_has_a_package_submission``: whoever adds one says what the package holds
nearest to its answer.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from toy_submissions import REAL_SOURCES, SANDBOX, real_exercise

from edumatcher.grading import SubmissionResult, grade_submissions, load_exercise, notebook_text
from edumatcher.grading.notebook_cells import grade_id
from edumatcher.grading.submissions import Submission

# topic -> {answer cell grade_id: the code a student would write from the package's nearest code}
NEAREST: dict[str, dict[str, str]] = {
    "next_one_percent": {
        # The chapter's own report: rows sorted by own time, with each row's share of the total.
        "a_own_shares": '''
from edumatcher.chapters.where_the_time_goes.profiling import function_label, report_from_stats


class _Stats:
    def __init__(self, stats):
        self.stats = stats


def own_shares(stats):
    keys = {function_label(key): key for key in stats}
    report = report_from_stats(_Stats(stats), 1, leave_out=())
    return [(keys[row.function], row.own_share) for row in report.rows]
''',
    },
    "edit_and_reprofile": {
        # The engine as it is: the exercise asks for an edit of it.
        "a_lean_order": '''
from edumatcher.model import Order

lean_order = Order.from_dict
''',
        "a_lean_engine": '''
class LeanEngine(Engine):
    pass
''',
    },
    "exact_ticks": {
        "a_price_to_ticks": '''
from edumatcher.ticks import to_ticks


def price_to_ticks(price, decimals):
    return to_ticks(price, decimals)
''',
        "a_ticks_to_price": '''
from edumatcher.ticks import from_ticks


def ticks_to_price(ticks, decimals):
    return format(from_ticks(ticks, decimals), "f")
''',
    },
    "slots_memory": {
        "a_make_class": '''
import gc
import tracemalloc

from edumatcher.chapters.data_representation.slots import field_classes


def make_class(n_fields, slots):
    plain, slotted = field_classes(n_fields)
    return slotted if slots else plain
''',
        "a_bytes_per_instance": '''
from edumatcher.chapters.data_representation import slots as _slots


def bytes_per_instance(cls, count=20_000):
    return _slots.bytes_per_instance(cls, count)


METHOD = "instance"
''',
    },
    "enum_table_builder": {
        # The chapter's generated from_dict: one line per field on object.__new__(cls).
        "a_make_from_dict": '''
from edumatcher.chapters.construction_and_conversion.construction import direct_writer


def make_from_dict(cls, tables=None):
    return direct_writer(cls)
''',
    },
    "cached_topics": {
        "a_owner_topics": '''
from edumatcher.messages import TopicCache


class OwnerTopics:
    def __init__(self, prefix, limit=1024):
        self._cache = TopicCache(prefix.encode("utf-8"), limit)

    def topic(self, owner):
        return self._cache[owner]

    def __len__(self):
        return len(self._cache)
''',
        "a_codec": '''
from edumatcher import messages

stdlib_dumps = messages.STDLIB_CODEC.dumps


def choose_codec():
    if messages.ORJSON_CODEC is not None:
        import orjson
        return "orjson", orjson.dumps
    return "json", stdlib_dumps
''',
    },
    "compaction_break_even": {
        # Chapter 07's own count: the stream watched on a book per factor, peaks read after every operation.
        "a_peaks": '''
from edumatcher.chapters.heaps_and_indexes.heaps import compaction_counts


def watch(ops, factor, slack=COMPACT_SLACK):
    counted = compaction_counts([factor], [], ops, slack=slack)[0]
    return counted.peak_entries, counted.peak_live
''',
    },
    "lazy_cancel_heap": {
        # The book itself keeps one side of resting sells with lazy cancel.
        "a_lazy_asks": '''
from edumatcher import OrderBook
from edumatcher.model import TIF, Order, OrderType, Side


class LazyAsks:
    def __init__(self):
        self._book = OrderBook("EDU")
        self._heap = []

    def add(self, order_id, price, qty):
        self._book.submit(Order(order_id, "EDU", Side.SELL, OrderType.LIMIT, TIF.GTC, qty, price, owner="x"))

    def heap_size(self):
        return self._book.heap_entries()

    def __len__(self):
        return len(self._book)

    def cancel(self, order_id):
        return self._book.cancel(order_id)

    def best(self):
        live = list(self._book._live.values())
        if not live:
            return None
        order = min(live, key=lambda o: (o.price, o.arrival_seq))
        return order.id, order.price, order.remaining_qty

    def pop(self):
        found = self.best()
        if found is None:
            raise IndexError("empty")
        self._book.cancel(found[0])
        return found
''',
    },
    "masked_ring": {
        # The engine's percentile rule, inverted a whole percent at a time.
        "a_share_within": '''
from edumatcher.metrics import nearest_rank


def share_within(sorted_values, limit):
    within = [p for p in range(101) if nearest_rank(sorted_values, p) <= limit]
    return within[-1] / 100 if within else 0.0
''',
        "a_masked_ring": '''
from edumatcher.metrics import LatencyRing


class MaskedRing:
    def __init__(self, size):
        self._ring = LatencyRing(size)
        self.buffer = self._ring.duration_ns
        self.mask = self._ring.mask

    @property
    def pos(self):
        return self._ring.pos

    def add(self, value):
        self._ring.add(0, value)

    def __len__(self):
        return self._ring.count

    def values(self):
        return self._ring.durations()

    def share_within(self, limit):
        return share_within(sorted(self._ring.durations()), limit)
''',
    },
    "frozen_cycles": {
        # The chapter's demonstration: pairs built, frozen, dropped, collected, unfrozen, collected.
        "a_report": '''
from edumatcher.chapters.garbage_collection.gc_pauses import frozen_cycles


def frozen_cycle_report(payload_size, *, weak_back=False):
    run = frozen_cycles(1)
    return {"built": run.built - run.baseline, "frozen_collected": run.held_while_frozen,
            "unfrozen_collected": run.held_after_unfreeze}
''',
    },
    "gc_pause_freeze": {
        # The engine's own monitor of gc.callbacks, with its (generation, duration) pairs as a list.
        "a_recorder": '''
import gc
import time

from edumatcher.metrics import GcMonitor


class CollectionRecorder(GcMonitor):
    def __init__(self):
        super().__init__()
        self.records = []

    def _on_gc(self, phase, info):
        seen = self.pos
        GcMonitor._on_gc(self, phase, info)
        if self.pos != seen:
            self.records.append((self.generations()[-1], self.durations()[-1]))
''',
    },
    "stale_reference": {
        # The chapter's free list of Order objects: handles are the objects themselves.
        "a_pool": '''
from typing import NamedTuple

from edumatcher.chapters.the_java_question.pooling import OrderPool


class Handle(NamedTuple):
    slot: int
    generation: int


class StaleHandle(LookupError):
    pass


class PoolExhausted(Exception):
    pass


class GenerationPool:
    def __init__(self, capacity):
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(capacity)
        self.capacity = capacity
        self._pool = OrderPool()
        self._records = {}

    def acquire(self, owner, qty, price):
        if len(self._records) >= self.capacity:
            raise PoolExhausted()
        order = self._pool.acquire()
        order.owner, order.qty, order.price = owner, qty, price
        handle = Handle(id(order), 0)
        self._records[handle] = order
        return handle

    def get(self, handle):
        order = self._records[handle]
        return order.owner, order.qty, order.price

    def set_qty(self, handle, qty):
        self._records[handle].qty = qty

    def release(self, handle):
        self._pool.release(self._records.pop(handle))

    def __len__(self):
        return len(self._records)
''',
    },
    "significance_test": {
        # The course's comparison: a bootstrap interval of the ratio of medians, read as a verdict.
        "a_permutation_test": '''
from edumatcher.kit._compare import ratio_interval


def permutation_p_value(a, b, *, permutations=10_000, seed=0):
    low, high = ratio_interval(list(a), list(b), paired=False)
    return 0.01 if low > 1 or high < 1 else 1.0
''',
    },
    "array_level_store": {
        # Chapter 10's layout: one side's count and quantity per tick in two arrays.
        "a_array_levels": '''
from edumatcher.chapters.beyond_heaps.array_book import TickColumns


class ArrayLevels:
    def __init__(self, low, high):
        self.low, self.high = low, high
        self._sides = {"BUY": TickColumns(low, high, "bid"), "SELL": TickColumns(low, high, "ask")}

    def add(self, side, price, qty):
        self._sides[side].add(price, qty)

    def remove(self, side, price, qty):
        columns = self._sides[side]
        i = price - self.low
        if not columns.count[i]:
            raise ValueError("no order there")
        columns.count[i] -= 1
        columns.qty[i] -= qty

    def best_bid(self):
        levels = self._sides["BUY"].depth(1)
        return levels[0][0] if levels else None

    def best_ask(self):
        levels = self._sides["SELL"].depth(1)
        return levels[0][0] if levels else None

    def depth(self, levels=None):
        n = self.high - self.low + 1 if levels is None else levels
        return self._sides["BUY"].depth(n), self._sides["SELL"].depth(n)
''',
    },
    "folded_stacks": {
        # The chapter's flame-graph tree, read back as per-function counts.
        "a_profile_from_stacks": '''
from edumatcher.chapters.the_standard_tools.figures import tree_from_folded


def profile_from_stacks(lines):
    profile = {}

    def walk(node):
        for child in node.children:
            own, total = profile.get(child.name, (0, 0))
            profile[child.name] = (own + int(child.own), total + int(child.value))
            walk(child)

    walk(tree_from_folded(lines))
    return profile
''',
    },
}

# topic -> the checks the package's nearest code must fail (score 0): what the exercise asks beyond it.
MUST_FAIL: dict[str, tuple[str, ...]] = {
    "next_one_percent": ("c_shares", "c_shares_empty", "c_candidates"),
    # The engine passes the checks that the edit keeps its behaviour; those that the edit was made fail.
    "edit_and_reprofile": ("c_lean_reads", "c_engine_counts"),
    "exact_ticks": ("c_refused_types", "c_malformed", "c_to_price", "c_round_trip"),
    "slots_memory": ("c_make_class", "c_bytes_slotted", "c_bytes_restores_tracemalloc", "c_plain_against_slotted",
                     "c_saving_table"),
    "enum_table_builder": ("c_same_as_init", "c_build_errors", "c_refuses_bad_setup"),
    # TopicCache builds the same bytes and keeps them (c_topic_bytes, c_topic_kept); it keeps its first owners.
    "cached_topics": ("c_topic_bounded", "c_topic_bad_input", "c_stdlib_dumps", "c_choose_codec"),
    "compaction_break_even": ("c_peaks_by_hand", "c_peaks_replay", "c_table_shape", "c_table_properties"),
    # The book orders and cancels as LazyAsks must (the checks test behaviour); it keeps no flag to skip.
    "lazy_cancel_heap": ("c_skips_dead_entries",),
    # LatencyRing has the same shape (c_ring_size, c_ring_fixed); it neither returns what it overwrites nor
    # answers a share.
    "masked_ring": ("c_share_within", "c_ring_wrap", "c_ring_share", "c_ring_model"),
    "frozen_cycles": ("c_frozen_cycle_kept", "c_weak_back_freed", "c_report_restores"),
    "gc_pause_freeze": ("c_recorder_records", "c_recorder_uninstall", "c_experiment_report", "c_experiment_restores"),
    "stale_reference": ("c_stale_read", "c_stale_write", "c_pool_model"),
    "significance_test": ("c_separated", "c_same_distribution", "c_deterministic", "c_validation", "c_exact"),
    # TickColumns is one side's layout; removals, refusals and the best price kept as levels empty are not in it.
    "array_level_store": ("c_levels_reject", "c_levels_model"),
    # The flame-graph tree counts a recursive frame once per level, not once per stack.
    "folded_stacks": ("c_recursion", "c_invariants"),
}

TOPICS = sorted(NEAREST)
CELL_TIMEOUT = 60
NOTEBOOK_TIMEOUT = 300
JOBS = 2


def _topic(path: Path) -> str:
    return path.stem.split("_", 1)[1]


def _submission(topic: str) -> str:
    """The solution with each answer cell in ``NEAREST[topic]`` replaced by the package-based code."""
    nb = nbformat.read(real_exercise(topic), as_version=4)
    replaced = set()
    for cell in nb.cells:
        code = NEAREST[topic].get(grade_id(cell) or "")
        if code is not None and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = code.strip() + "\n"
            cell.outputs, cell.execution_count = [], None
            replaced.add(grade_id(cell))
    missing = set(NEAREST[topic]) - replaced
    assert not missing, f"{topic}: no answer cell {sorted(missing)} to replace"
    return notebook_text(nb)


def test_every_exercise_has_a_package_submission() -> None:
    assert sorted(_topic(path) for path in REAL_SOURCES.glob("*.ipynb")) == TOPICS == sorted(MUST_FAIL)


def _selected_topics(request: pytest.FixtureRequest) -> list[str]:
    """The topics whose test this session runs (after ``-k``), so ``-k masked_ring`` grades one notebook."""
    return sorted({item.callspec.params["topic"] for item in request.session.items
                   if getattr(item, "module", None) is request.module and hasattr(item, "callspec")
                   and "topic" in item.callspec.params})


@pytest.fixture(scope="module")
def graded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, SubmissionResult]:
    root = tmp_path_factory.mktemp("package-answers")
    exercises, submissions = {}, []
    for topic in _selected_topics(request):
        source = real_exercise(topic)
        exercises[source.stem] = load_exercise(source)
        path = root / "package" / source.name
        path.parent.mkdir(exist_ok=True)
        path.write_text(_submission(topic), encoding="utf-8")
        submissions.append(Submission(path, "package", source.stem))
    results = grade_submissions(submissions, exercises, jobs=JOBS, cell_timeout=CELL_TIMEOUT,
                                timeout=NOTEBOOK_TIMEOUT, sandbox=SANDBOX)
    return {_topic(Path(result.exercise + ".ipynb")): result for result in results}


def _describe(result: SubmissionResult) -> str:
    lines = [f"package-based copy of {result.exercise}: {result.status} {result.reason}".rstrip(),
             f"  {result.total:g} / {result.max_points:g} points"]
    lines += [f"  {c.grade_id}: {c.points:g}/{c.max_points:g} {c.message}".rstrip() for c in result.checks]
    return "\n".join(lines)


@pytest.mark.parametrize("topic", TOPICS)
def test_the_packages_nearest_code_does_not_pass(graded: dict[str, SubmissionResult], topic: str) -> None:
    result = graded[topic]
    assert result.status == "graded", _describe(result)
    assert result.total < result.max_points, _describe(result)
    scored = {check.grade_id: check.points for check in result.checks}
    unknown = set(MUST_FAIL[topic]) - set(scored)
    assert not unknown, f"MUST_FAIL names checks {topic} does not have: {sorted(unknown)}"
    passing = [check for check in MUST_FAIL[topic] if scored[check] != 0]
    assert not passing, f"checks the package's code should fail: {passing}\n{_describe(result)}"
