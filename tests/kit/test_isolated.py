"""Isolated runs: a fresh worker process per call, its JSON result back, its failures reported plainly."""

from __future__ import annotations

import os

import pytest

from edumatcher.kit._worker import IsolatedRunError, run_isolated, run_workers


def test_a_target_runs_in_another_process_and_its_result_comes_back() -> None:
    got = run_isolated("edumatcher.kit._worker:echo", {"value": {"a": [1, 2.5, None, "x"]}})
    assert got["value"] == {"a": [1, 2.5, None, "x"]}
    assert got["pid"] != os.getpid()
    assert got["matplotlib"] is False, "a fresh worker has not imported what the caller had"


def test_several_workers_are_separate_processes() -> None:
    results = run_workers("edumatcher.kit._worker:echo", {"value": 7}, processes=3)
    assert [r["value"] for r in results] == [7, 7, 7]
    assert len({r["pid"] for r in results}) == 3
    with pytest.raises(ValueError, match="processes"):
        run_workers("edumatcher.kit._worker:echo", processes=0)


def test_a_failing_target_raises_with_the_workers_traceback() -> None:
    with pytest.raises(IsolatedRunError, match="exit code 1") as info:
        run_isolated("edumatcher.kit._worker:fail", {"message": "planted for the test"})
    assert "ValueError: planted for the test" in info.value.stderr
    assert "planted for the test" in str(info.value)


def test_a_missing_target_is_a_clear_error() -> None:
    with pytest.raises(IsolatedRunError) as info:
        run_isolated("edumatcher.kit._worker:no_such_function")
    assert "AttributeError" in info.value.stderr
    with pytest.raises(ValueError, match="package.module:function"):
        run_isolated("edumatcher.kit._worker.echo")


def test_a_worker_past_its_timeout_is_killed() -> None:
    with pytest.raises(IsolatedRunError, match="did not finish within 0.5 s"):
        run_isolated("edumatcher.kit._worker:sleep", {"seconds": 30}, timeout=0.5)


def test_a_print_inside_the_target_does_not_corrupt_the_result() -> None:
    # echo does not print, but pause_worker-style targets might; the worker points stdout at stderr meanwhile
    got = run_isolated("builtins:print", {"sep": " "})
    assert got is None
