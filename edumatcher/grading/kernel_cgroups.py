"""One control group per grading kernel, where Linux lets the grader make them: memory and process caps.

``RLIMIT_DATA`` caps each process's private memory, but not shared mappings (``mmap.mmap(-1, n)``)
nor the sum over a kernel's children; ``RLIMIT_NPROC`` counts every process of a user, and does
not bind root at all. A cgroup counts everything the kernel and its children use: its
``memory`` limit ends the kernel (the row says the kernel died) instead of the machine, and its
``pids`` limit ends a fork bomb inside that kernel without touching any other, and its ``cpu``
group gives it one kernel's share of the processors however many processes it starts.

Each cgroup is made **inside the grader's own cgroup**, so whatever limits the machine already
puts on the grader still hold (nothing is moved out of them): ``<own cgroup>/edumatcher-k<pid>``,
``pid`` being the grading worker's. The worker makes it before the kernel starts and removes it
after; one left by a killed worker is removed by the next worker that finds it.

Where it works: cgroup v1 with writable ``memory``/``pids`` hierarchies (root, as CI runs), or
cgroup v2 where the grader's cgroup is delegated and holds no process itself (``systemd-run
--user --scope -p Delegate=yes``). Elsewhere :func:`probe` says why not, and the run's header
repeats it (``sandbox.SandboxChoice.describe_limits``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CgroupSupport", "probe", "kernel_cgroups"]

_PREFIX = "edumatcher-k"


@dataclass(frozen=True)
class CgroupSupport:
    """Where per-kernel cgroups can be made: the parent folder per controller (``memory``, ``pids``, ``cpu``),
    the cgroup version, and, for a controller that is missing, why."""

    parents: dict[str, str] = field(default_factory=dict)
    version: int = 0
    reasons: dict[str, str] = field(default_factory=dict)

    def has(self, controller: str) -> bool:
        """True when kernels get a cgroup with this controller."""
        return controller in self.parents


@functools.lru_cache(maxsize=1)
def probe() -> CgroupSupport:
    """Find the grader's own cgroups and check that a child can be made in each (made and removed here)."""
    parents: dict[str, str] = {}
    reasons: dict[str, str] = {}
    try:
        own = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
        mounts = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        return CgroupSupport(reasons={"memory": f"no cgroups here ({exc.strerror or exc})",
                                      "pids": f"no cgroups here ({exc.strerror or exc})"})
    v1 = {controller: path for line in own for _, names, path in [line.split(":", 2)] if names
          for controller in names.split(",")}
    v2_path = next((path for line in own for hierarchy, names, path in [line.split(":", 2)]
                    if hierarchy == "0" and not names), None)
    version = 0
    for controller in ("memory", "pids", "cpu"):
        mount = _mount_point(mounts, controller)
        folder: Path | None = None
        if controller in v1 and mount is not None:
            version = 1
            folder = _inside(mount, v1[controller])
            why = _try_child(folder, None) if folder else "the grader's cgroup is outside the mounted hierarchy"
        elif v2_path is not None and (mount := _mount_point(mounts, None)) is not None:
            version = version or 2
            folder = _inside(mount, v2_path)
            why = _try_child(folder, controller) if folder else "the grader's cgroup is outside the mounted hierarchy"
        else:
            why = "no cgroup hierarchy with this controller is mounted"
        if why is None and folder is not None:
            parents[controller] = str(folder)
        else:
            reasons[controller] = why or "not available"
    return CgroupSupport(parents, version, reasons)


def _mount_point(mounts: list[str], controller: str | None) -> tuple[str, str] | None:
    """``(mount point, root of the hierarchy it shows)`` of the v1 hierarchy of ``controller`` (None: v2)."""
    for line in mounts:
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        described = line.split(" - ", 1)[1].split()
        if len(described) < 3:
            continue
        kind, options = described[0], described[2]
        if (controller is None and kind == "cgroup2") or (
                controller is not None and kind == "cgroup" and controller in options.split(",")):
            return fields[4], fields[3]
    return None


def _inside(mount: tuple[str, str], cgroup: str) -> Path | None:
    """The folder of cgroup ``cgroup`` (a path in its hierarchy) under a mount showing part of that hierarchy."""
    point, root = mount
    relative = os.path.relpath(cgroup, root) if root != "/" else cgroup.lstrip("/")
    if relative.startswith(".."):
        return None
    return Path(point) / ("" if relative == "." else relative)


def _try_child(folder: Path, v2_controller: str | None) -> str | None:
    """None if a child cgroup with the controller can be made under ``folder``, else why not."""
    if v2_controller is not None:
        try:
            enabled = (folder / "cgroup.subtree_control").read_text(encoding="utf-8").split()
        except OSError as exc:
            return f"cannot read {folder}/cgroup.subtree_control ({exc.strerror or exc})"
        if v2_controller not in enabled:
            try:
                (folder / "cgroup.subtree_control").write_text(f"+{v2_controller}", encoding="utf-8")
            except OSError as exc:
                return (f"the grader's cgroup {folder} does not hand the {v2_controller} controller to children "
                        f"({exc.strerror or exc}); run the grader in a delegated cgroup of its own")
    test = folder / f"{_PREFIX}probe-{os.getpid()}"
    try:
        test.mkdir()
    except OSError as exc:
        return f"cannot make a cgroup in {folder} ({exc.strerror or exc})"
    try:
        os.rmdir(test)
    except OSError:
        pass
    return None


@contextlib.contextmanager
def kernel_cgroups(support: CgroupSupport, *, memory_bytes: int, pids_max: int) -> Iterator[list[str]]:
    """Make this worker's cgroups with these limits; yield the ``cgroup.procs`` files a launcher joins by
    writing its pid; remove them on the way out (after the kernel is gone). Yields [] where none can be made.
    """
    made: list[Path] = []
    procs: list[str] = []
    for controller, parent in support.parents.items():
        _remove_stale(Path(parent))
        folder = Path(parent) / f"{_PREFIX}{os.getpid()}"
        try:
            folder.mkdir(exist_ok=True)
            made.append(folder)
            if controller == "memory":
                limit = "memory.limit_in_bytes" if support.version == 1 else "memory.max"
                (folder / limit).write_text(str(memory_bytes), encoding="ascii")
                swap = folder / ("memory.memsw.limit_in_bytes" if support.version == 1 else "memory.swap.max")
                if support.version == 2 and swap.exists():
                    swap.write_text("0", encoding="ascii")
            elif controller == "pids":
                (folder / "pids.max").write_text(str(pids_max), encoding="ascii")
            # cpu: nothing to set; a group of its own already gets one share, like every other kernel
        except OSError:
            continue  # this controller stays unlimited for this kernel; the other may still apply
        procs.append(str(folder / "cgroup.procs"))
    try:
        yield procs
    finally:
        for folder in made:
            _remove(folder)


def _remove(folder: Path, wait: float = 5.0) -> None:
    """Remove a kernel's cgroup once its processes are gone (they are being killed): retry for ``wait`` s."""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return  # still busy: the next worker's _remove_stale takes it
            time.sleep(0.05)


def _remove_stale(parent: Path) -> None:
    """Remove the cgroups of workers that are no longer running (killed before they could)."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(_PREFIX):]
        if entry.name.startswith(_PREFIX) and pid.isdigit() and not _alive(int(pid)):
            _remove(entry, wait=0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
