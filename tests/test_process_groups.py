"""process_groups: one signal reaches a whole group; gone or absent targets are not errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from edumatcher.grading.process_groups import descendants, signal_group

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are a POSIX feature")


def test_signal_group_ends_the_group_leader_started_in_its_own_session() -> None:
    code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    leader = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        signal_group(leader.pid)
        assert leader.wait(timeout=10) != 0
    finally:
        if leader.poll() is None:
            leader.kill()


def test_gone_and_missing_targets_are_ignored() -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    done.wait(timeout=10)
    signal_group(done.pid)  # already gone: no error
    signal_group(None)
    assert descendants(done.pid) == []
