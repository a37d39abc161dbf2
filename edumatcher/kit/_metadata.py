"""Who produced a figure, and where: the interpreter, the machine and the measuring conditions.

Like pyperf's ``_collect_metadata`` (which ``environment`` uses where it is
installed): a measurement records the conditions it was taken under, so a table
can say which interpreter and machine its rows belong to. ``environment()`` adds
what varies between processes and runs: ASLR, the hash seed, load, VM steal time.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
import sysconfig
import time
from dataclasses import dataclass

__all__ = ["InterpreterInfo", "MachineInfo", "interpreter", "machine", "Environment", "environment", "steal_time"]


@dataclass(frozen=True)
class InterpreterInfo:
    """Which Python produced a figure: implementation, version, build and compiler."""

    implementation: str
    version: str
    build: str
    compiler: str
    flags: tuple[str, ...] = ()

    def __str__(self) -> str:
        extra = f", {', '.join(self.flags)}" if self.flags else ""
        return f"{self.implementation} {self.version} ({self.build}) [{self.compiler}]{extra}"


@dataclass(frozen=True)
class MachineInfo:
    """Where a figure was produced: operating system, CPU model and CPU counts."""

    system: str
    architecture: str
    processor: str
    cpu_count: int
    usable_cpus: int

    def __str__(self) -> str:
        cpus = f"{self.cpu_count} CPUs"
        if self.usable_cpus != self.cpu_count:
            cpus += f" ({self.usable_cpus} usable)"
        return f"{self.system} {self.architecture}, {self.processor}, {cpus}"


@functools.lru_cache(maxsize=1)
def interpreter() -> InterpreterInfo:
    """Describe the running interpreter (cached: it cannot change within a process).

    >>> interpreter().version == platform.python_version()
    True
    """
    build_no, build_date = platform.python_build()
    flags: list[str] = []
    if sysconfig.get_config_var("Py_DEBUG"):
        flags.append("debug build")
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        flags.append("free-threaded")
    jit = getattr(sys, "_jit", None)  # 3.13+: the experimental JIT, when compiled in
    if jit is not None and getattr(jit, "is_enabled", lambda: False)():
        flags.append("JIT on")
    return InterpreterInfo(
        implementation=platform.python_implementation(),
        version=platform.python_version(),
        build=f"{build_no}, {build_date}",
        compiler=platform.python_compiler(),
        flags=tuple(flags),
    )


def _cpu_model() -> str:
    name = platform.processor()
    if name and name not in ("x86_64", "aarch64", "arm", "i386"):
        return name
    try:  # Linux leaves platform.processor() empty or generic; the model is in /proc
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return name or "unknown CPU"


@functools.lru_cache(maxsize=1)
def machine() -> MachineInfo:
    """Describe the machine: OS, architecture, CPU model, CPU count (cached).

    >>> machine().cpu_count >= 1
    True
    """
    count = os.cpu_count() or 1
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        usable = count
    return MachineInfo(
        system=f"{platform.system()} {platform.release()}",
        architecture=platform.machine(),
        processor=_cpu_model(),
        cpu_count=count,
        usable_cpus=usable,
    )



# --------------------------------------------------------------------------- the environment


_ASLR = {"0": "off (no randomization)", "1": "conservative randomization", "2": "full randomization"}


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _cpu_jiffies() -> tuple[int, int] | None:
    """(steal, total) jiffies of all CPUs from ``/proc/stat``, or None where it is not readable."""
    text = _read("/proc/stat")
    if not text:
        return None
    fields = text.splitlines()[0].split()
    if fields[0] != "cpu" or len(fields) < 9:
        return None
    values = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return values[7], sum(values)


def steal_time(window: float = 0.25) -> float | None:
    """Fraction of CPU time the hypervisor gave to other guests over ``window`` seconds (Linux VMs; else None).

    Steal time is time this VM's CPUs were ready to run but the host ran someone
    else: on a VM it slows everything, and no clock inside the guest can tell.
    """
    before = _cpu_jiffies()
    if before is None:
        return None
    time.sleep(window)
    after = _cpu_jiffies()
    if after is None or after[1] == before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


@dataclass(frozen=True)
class Environment:
    """What a measurement's conditions were, as (what, value here, why it matters) rows.

    Built by ``environment()``; shown as a table in text and HTML.
    """

    rows: tuple[tuple[str, str, str], ...]

    def __str__(self) -> str:
        width = max(len(r[0]) for r in self.rows)
        return "\n".join(f"{what:<{width}}  {value}" for what, value, _ in self.rows)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        import html

        body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in self.rows)
        return f"<table><tr><th>what</th><th>here</th><th>why it matters</th></tr>{body}</table>"

    def as_dict(self) -> dict[str, str]:
        """``{what: value}``."""
        return {what: value for what, value, _ in self.rows}


def _pyperf_metadata() -> dict[str, object]:
    """pyperf's own collection (``python -m pyperf collect_metadata``), or {} where pyperf is missing.

    Its CPU frequency, CPU configuration (governor, isolated CPUs, idle driver) and
    load figures are read the way pyperf reads them for its own benchmarks.
    """
    try:
        from pyperf._collect_metadata import collect_metadata  # pyperf's metadata, the same as its CLI prints
    except ImportError:
        return {}
    try:
        return dict(collect_metadata(process=False))
    except Exception:  # a platform pyperf does not know: the rows below do without it
        return {}


def environment(*, steal_window: float = 0.25) -> Environment:
    """Read this machine's measuring conditions: interpreter, CPUs, ASLR, hash seed, load, steal time.

    Reads only; changes nothing. ``steal_window`` seconds are spent sampling steal
    time (0: skip it). Rows a platform does not expose read "not exposed here".

    >>> env = environment(steal_window=0)
    >>> [what for what, _, _ in env.rows][:3]
    ['interpreter', 'machine', 'ASLR (address space layout randomization)']
    """
    meta = _pyperf_metadata()
    missing = "not exposed here"
    aslr = _read("/proc/sys/kernel/randomize_va_space")
    seed = os.environ.get("PYTHONHASHSEED")
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1, 5, 15 min)"
    except (AttributeError, OSError):
        load = missing
    steal = steal_time(steal_window) if steal_window > 0 else None
    rows = [
        ("interpreter", str(interpreter()), "figures belong to one interpreter"),
        ("machine", str(machine()), "and to one machine"),
        ("ASLR (address space layout randomization)", _ASLR.get(aslr or "", aslr or missing),
         "where code and data land differs per process: one process's figure can be a few % off, "
         "so verdicts come from several processes"),
        ("PYTHONHASHSEED", seed if seed else "not set: random per process (sys.flags.hash_randomization = "
                                            f"{sys.flags.hash_randomization})",
         "dict and set layouts of strings differ per process; the kit's workers each record theirs"),
        ("load average", load, "other processes competing for the CPUs"),
        ("steal time", f"{steal * 100:.1f} % over {steal_window:g} s" if steal is not None else missing,
         "on a VM, time the host gave to other guests: invisible to every clock inside"),
        ("CPU frequency", str(meta.get("cpu_freq", missing)), "turbo and power saving change it between runs"),
        ("CPU configuration", str(meta.get("cpu_config", missing)), "governor, isolated CPUs, idle driver (pyperf)"),
    ]
    return Environment(tuple(rows))
