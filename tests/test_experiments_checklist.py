"""The hot-path checklist: every answer leads somewhere, every path ends, the walk can go back."""

from __future__ import annotations

import pytest

from edumatcher.chapters.measuring_honestly.checklist import (
    CHECKLIST,
    START,
    ChecklistWalk,
    Outcome,
    Question,
    all_paths,
    checklist_rows,
)


def test_every_answer_names_a_node_and_every_node_is_reachable() -> None:
    reachable = {START}
    for node in CHECKLIST.values():
        if isinstance(node, Question):
            assert node.yes in CHECKLIST and node.no in CHECKLIST
            reachable |= {node.yes, node.no}
    assert reachable == set(CHECKLIST)


def test_every_path_ends_in_an_outcome_and_only_a_fully_checked_path_proceeds() -> None:
    paths = all_paths()
    assert len(paths) >= 8
    for path in paths:
        walk = ChecklistWalk()
        for _, answer in path:
            walk.answer(answer)
        assert walk.done
        outcome = walk.current
        assert isinstance(outcome, Outcome)
        if outcome.proceed:
            names = [name for name, _ in path]
            assert {"profiled", "share", "macro", "remeasure"} <= set(names), "no shortcut reaches 'merge'"


def test_walk_back_and_restart() -> None:
    walk = ChecklistWalk()
    walk.answer(True)
    walk.answer(False)
    assert walk.done and walk.current.text.startswith("Leave it")
    with pytest.raises(ValueError):
        walk.answer(True)
    with pytest.raises(ValueError):
        _ = walk.question
    walk.back()
    assert not walk.done and walk.path == [(CHECKLIST["profiled"].text, True)]
    walk.restart()
    assert walk.node == START and walk.path == []
    walk.back()  # nothing to undo: stays at the start
    assert walk.node == START
    with pytest.raises(KeyError):
        ChecklistWalk(start="nowhere")


def test_a_loop_is_detected() -> None:
    looping = {"a": Question("A?", "b", "end"), "b": Question("B?", "a", "end"), "end": Outcome("done", True)}
    with pytest.raises(ValueError, match="loops"):
        all_paths(looping, "a")


def test_rows_number_the_questions() -> None:
    rows = checklist_rows()
    assert [r[0] for r in rows] == [str(i) for i in range(1, len(rows) + 1)]
    assert rows[0][2] == "go to 2" and rows[0][3].startswith("✘")
