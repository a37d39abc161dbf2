"""Tests for edumatcher.kit.load.cpu_hog: it burns CPU, and it always goes away."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import pytest

from edumatcher.kit.load import cpu_hog

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")


def running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (an exited process nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # children that ended and were reaped
    return usage.ru_utime + usage.ru_stime


def test_hog_burns_cpu_then_stops_and_leaves_nothing_behind():
    before = children_cpu_seconds()
    with cpu_hog(2, max_seconds=30) as hog:
        pids = hog.pids
        assert len(pids) == 2 and hog.alive() == 2
        assert all(running(pid) for pid in pids)
        time.sleep(1.0)
        assert hog.alive() == 2, "workers must keep running while the block runs"
    assert hog.alive() == 0
    assert not any(running(pid) for pid in pids)
    # The reaped workers' CPU time is now counted as ours: they really spun.
    # (A loose bound: the machine is shared, so a worker may get much less than a core.)
    assert children_cpu_seconds() - before > 0.05


def test_hog_stops_when_the_block_raises():
    with pytest.raises(RuntimeError), cpu_hog(1, max_seconds=30) as hog:
        pids = hog.pids
        raise RuntimeError("boom")
    assert not any(running(pid) for pid in pids)


def test_workers_exit_after_max_seconds():
    with cpu_hog(1, max_seconds=0.5) as hog:
        assert wait_until(lambda: hog.alive() == 0, timeout=15.0)


def test_workers_exit_when_the_parent_is_killed():
    script = (
        "import sys, time\n"
        "from edumatcher.kit.load import cpu_hog\n"
        "with cpu_hog(1, max_seconds=60) as hog:\n"
        "    print(hog.pids[0], flush=True)\n"
        "    time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(parent.stdout.readline())
        assert running(worker)
        parent.kill()  # no cleanup code runs in the parent
        parent.wait(10)
        assert wait_until(lambda: not running(worker), timeout=10.0), "orphaned worker kept running"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        parent.stdout.close()
        try:
            if running(worker):
                os.kill(worker, 9)
        except (NameError, ProcessLookupError):
            pass


@pytest.mark.parametrize("kwargs", [{"n_processes": 0}, {"n_processes": 1000}, {"n_processes": True},
                                    {"max_seconds": 0}, {"max_seconds": 10_000}])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError), cpu_hog(**kwargs):
        pass
