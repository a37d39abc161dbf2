"""Who produced a figure, and where: the interpreter and the machine every value travels with.

Like pyperf's ``_collect_metadata``: a measurement records the conditions it was
taken under, so a table can say which interpreter and machine its rows belong
to, and a comparison of rows taken under different conditions is visible.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
import sysconfig
from dataclasses import dataclass

__all__ = ["InterpreterInfo", "MachineInfo", "interpreter", "machine"]


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

