"""What a benchmark's environment looks like here, and which parts of it Python can set.

The C++ engine README (quoted, a C++ engine) made its EC2 figures reproducible by pinning the
benchmark to an isolated core (``taskset -c 1``), turning turbo boost off and
setting the CPU governor to ``performance``. Some of that a Python process can do
for itself; some only the operating system (an administrator, a boot parameter)
can. ``environment_rows`` reads what this machine says about each, without
changing anything: every value comes from the running process or from
``/sys`` (Linux), and reads "not exposed here" where the file or call is absent
(macOS, Windows, most containers and VMs).

>>> rows = environment_rows()
>>> [r[0] for r in rows][:2]
['CPU affinity of this process', 'cores allowed by the cgroup quota']
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

__all__ = ["read_sys", "environment_rows"]

_NOT_EXPOSED = "not exposed here"


def read_sys(path: str) -> str:
    """The stripped text of a ``/sys`` (or any) file, or ``"not exposed here"`` if it cannot be read."""
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return _NOT_EXPOSED
    return text or "(empty)"


def _affinity() -> str:
    if not hasattr(os, "sched_getaffinity"):
        return "not settable from Python on this platform (os.sched_setaffinity is Linux-only)"
    cores = sorted(os.sched_getaffinity(0))
    return f"cores {cores} of {os.cpu_count()}"


def _turbo() -> str:
    no_turbo = read_sys("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo != _NOT_EXPOSED:
        return "off" if no_turbo == "1" else "on"
    boost = read_sys("/sys/devices/system/cpu/cpufreq/boost")
    if boost != _NOT_EXPOSED:
        return "on" if boost == "1" else "off"
    return _NOT_EXPOSED


def environment_rows() -> list[list[str]]:
    """Rows of (what, value here, who can change it, how) for a table; reads only, changes nothing."""
    from .pitfalls import _cgroup_cpus

    quota = _cgroup_cpus()
    isolated = read_sys("/sys/devices/system/cpu/isolated")
    return [
        ["CPU affinity of this process", _affinity(), "Python",
         "os.sched_setaffinity(0, {core}) (Linux); taskset -c 1 from a shell"],
        ["cores allowed by the cgroup quota", "no quota" if quota is None else f"{quota:g}", "the container's owner",
         "docker --cpus / --cpuset-cpus; Binder sets it for you"],
        ["the collector during timing", "on" if gc.isenabled() else "off", "Python",
         "gc.disable() / measure(..., gc=False), and report what it hid"],
        ["a fresh process per measurement", "each worker of run_isolated", "Python",
         "edumatcher.kit._worker.run_isolated; pyperf's worker processes"],
        ["warm-up before timing", "one untimed pass in the course's harness", "Python", "measure(..., warmup=1)"],
        ["GIL switch interval", f"{sys.getswitchinterval() * 1e3:g} ms", "Python", "sys.setswitchinterval(seconds)"],
        ["CPU frequency governor", read_sys("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
         "the OS (root)", "cpupower frequency-set -g performance"],
        ["turbo boost", _turbo(), "the OS (root) or firmware",
         "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"],
        ["cores kept free of other work", "none" if isolated == "(empty)" else isolated,
         "the kernel, at boot", "isolcpus=1 nohz_full=1 on the kernel command line"],
    ]
