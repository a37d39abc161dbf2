"""Chapter 03's environment table: reads only, one row per control, values never empty."""

from __future__ import annotations

import gc
import sys

from edumatcher.chapters.measuring_honestly.environment import environment_rows, read_sys


def test_rows_read_the_machine_and_change_nothing() -> None:
    before = (gc.isenabled(), sys.getswitchinterval())
    rows = environment_rows()
    assert (gc.isenabled(), sys.getswitchinterval()) == before
    assert all(len(r) == 4 and all(r) for r in rows), "every cell filled"
    who = {r[0]: r[2] for r in rows}
    assert who["CPU affinity of this process"] == "Python" and who["CPU frequency governor"] == "the OS (root)"


def test_read_sys_says_when_a_file_is_absent(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert read_sys(str(tmp_path / "absent")) == "not exposed here"
    (tmp_path / "f").write_text("performance\n")
    assert read_sys(str(tmp_path / "f")) == "performance"
