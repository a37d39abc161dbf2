"""Flame graphs and icicles: trees from folded stacks and from pstats, and the drawing."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import cProfile  # noqa: E402
import pstats  # noqa: E402

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from edumatcher.chapters.the_standard_tools.figures import (  # noqa: E402
    FlameNode,
    flame_graph,
    frame_label,
    function_of,
    module_of,
    tree_from_folded,
    tree_from_pstats,
)


def test_folded_stacks_sum_along_every_path_and_sort_widest_first() -> None:
    root = tree_from_folded(["a;b;c 2", "a;b 1", "a;d;c 5", "", "e 1"])
    assert root.value == 9, "the root holds every sample once"
    a = root.children[0]
    assert (a.name, a.value) == ("a", 8), "a appears in three stacks with 2 + 1 + 5 samples"
    assert [c.name for c in a.children] == ["d", "b"], "children are sorted widest first"
    b = a.child("b")
    assert b.value == 3 and b.own == 1, "b has 3 samples, 1 of them with b itself on top"
    assert root.find("c") is a.child("d").child("c"), "find returns the widest node with the name"


def test_folded_labels_merge_frames_of_one_function() -> None:
    lines = ["main (x/run.py:1);f (x/mod.py:10) 2", "main (x/run.py:1);f (x/mod.py:12) 3"]
    root = tree_from_folded(lines, label=frame_label)
    main = root.children[0]
    assert [(c.name, c.value) for c in main.children] == [("f (mod.py)", 5)], "two lines of f merge into one box"


def test_a_line_without_a_count_is_refused() -> None:
    with pytest.raises(ValueError, match="folded stack"):
        tree_from_folded(["a;b"])


def test_frame_label_keeps_the_function_and_the_file() -> None:
    assert frame_label("OrderBook.submit (edumatcher/book.py:190)") == "OrderBook.submit (book.py)"
    assert frame_label("check (<edumatcher.messages order.new orjson 3.13.0>:90)") == "check (generated)"


def _synthetic_stats() -> dict:
    # root calls a (6 s cumulative) and b (3 s); a calls c (4 s); b calls c too (1 s); c recurses into root's key.
    root, a, b, c = ("r.py", 1, "root"), ("m.py", 2, "a"), ("m.py", 9, "b"), ("m.py", 20, "c")
    return {
        root: (1, 1, 1.0, 10.0, {}),
        a: (1, 1, 2.0, 6.0, {root: (1, 1, 2.0, 6.0)}),
        b: (1, 1, 2.0, 3.0, {root: (1, 1, 2.0, 3.0)}),
        c: (2, 2, 5.0, 5.0, {a: (1, 1, 4.0, 4.0), b: (1, 1, 1.0, 1.0), c: (1, 1, 0.0, 0.0)}),
    }


def test_pstats_tree_takes_widths_from_caller_callee_pairs() -> None:
    stats = _synthetic_stats()
    tree = tree_from_pstats(stats, ("r.py", 1, "root"))
    top = tree.children[0]
    assert top.value == 10.0 and top.name == "root (r.py:1)", "the root box is the root's cumulative time"
    widths = {c.name: c.value for c in top.children}
    assert widths == {"a (m.py:2)": 6.0, "b (m.py:9)": 3.0}, "each child is as wide as its pair's cumulative time"
    assert top.children[0].children[0].value == 4.0, "c under a is the a->c pair's 4 s"
    assert top.children[1].children[0].value == 1.0, "c under b is the b->c pair's 1 s"
    assert top.children[0].children[0].children == [], "c calling itself is not expanded again"


def test_pstats_tree_from_a_real_profile() -> None:
    def leaf(n: int) -> int:
        return sum(range(n))

    def parent() -> int:
        return sum(leaf(2_000) for _ in range(200))

    prof = cProfile.Profile()
    prof.runcall(parent)
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    key = next(k for k in stats if k[2] == "parent")
    tree = tree_from_pstats(stats, key)
    assert tree.find("leaf") is not None, "leaf is drawn below parent"
    assert tree.find("leaf").value <= tree.children[0].value + 1e-12, "a child is never wider than its parent"
    with pytest.raises(KeyError):
        tree_from_pstats(stats, ("nowhere.py", 1, "missing"))


@pytest.mark.parametrize("icicle", [True, False])
def test_flame_graph_draws_one_box_per_visible_node(icicle: bool) -> None:
    root = tree_from_folded(["a;b;c 2", "a;b 1", "a;d 5"])
    fig = flame_graph(root, icicle=icicle, title="t")
    assert isinstance(fig, Figure)
    boxes = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(boxes) == 4, "a, b, c and d: the synthetic root with one child is skipped"
    assert max(b.get_width() for b in boxes) == pytest.approx(1.0), "the top box spans the whole width"


def test_flame_graph_refuses_an_empty_tree() -> None:
    with pytest.raises(ValueError):
        flame_graph(FlameNode("all"))


def test_flame_graph_colours_by_module_with_a_legend_and_elides_labels_that_do_not_fit() -> None:
    lines = ["run (x/main.py:1);OrderBook.submit (e/book.py:10);OrderBook._match_against_the_resting_side (e/book.py:90) 3",
             "run (x/main.py:1);Engine.handle (e/engine.py:5) 96",
             "run (x/main.py:1);OrderBook.a_rather_long_function_name_that_cannot_fit (e/book.py:50) 1"]
    fig = flame_graph(tree_from_folded(lines, label=frame_label), icicle=False)
    fig.canvas.draw()
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    by_x = {round(b.get_x(), 4): b.get_facecolor() for b in boxes if b.get_y() == 1}  # the level under run
    assert len(set(by_x.values())) == 2, "book.py and engine.py boxes differ in colour"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[0] == "engine.py" and {"book.py", "main.py"} <= set(legend), "the legend names the modules, widest first"
    labels = [t.get_text() for t in ax.texts]
    assert "Engine.handle" in labels, "a box's label is its function; the colour names its file"
    assert not any("a_rather_long_function_name" in text and not text.endswith("…") for text in labels), \
        "a label too long for its box is elided with an ellipsis or left out"
    assert ax.get_ylabel() and ax.get_xlabel().startswith("share of")


def test_a_module_keeps_its_colour_whatever_its_width() -> None:
    # Chapter 02 sets a cProfile icicle beside a py-spy flame graph of the same path: where the
    # two rank the modules differently, engine.py and book.py must still read the same colour.
    def colours(lines: list[str]) -> dict[str, tuple[float, ...]]:
        fig = flame_graph(tree_from_folded(lines, label=frame_label))
        return {t.get_text(): tuple(h.get_facecolor()) for t, h in zip(fig.legends[0].get_texts(),
                                                                        fig.legends[0].legend_handles, strict=True)}

    engine_wide = colours(["run (x/main.py:1);Engine.handle (e/engine.py:5) 90", "run (x/main.py:1);OrderBook.submit (e/book.py:10) 10"])
    book_wide = colours(["run (x/main.py:1);Engine.handle (e/engine.py:5) 10", "run (x/main.py:1);OrderBook.submit (e/book.py:10) 90"])
    assert list(engine_wide)[0] == "engine.py" and list(book_wide)[0] == "book.py", "the legend is widest first"
    for module in ("engine.py", "book.py", "main.py"):
        assert engine_wide[module] == book_wide[module], module


def test_module_and_function_of_a_box_name() -> None:
    assert module_of("OrderBook.submit (book.py:419)") == "book.py" and function_of("f (generated)") == "f"
    assert module_of("<built-in method builtins.len>") == "built-in (C)"
