"""Where a submission's kernel runs: inside bubblewrap (``bwrap``), or as before, plus resource limits.

``grade --sandbox {auto,bwrap,none}`` picks one; :func:`resolve_sandbox` decides once per run and
:meth:`SandboxChoice.describe` is the line the terminal shows. Only the **kernel** (the student's
code) is sandboxed. The grading worker stays outside: it holds the source with the hidden tests,
restores the checks, talks to the kernel over ZeroMQ and writes the events file, none of which
the kernel can see.

What the ``bwrap`` sandbox guarantees (Linux with bubblewrap and user/PID/mount namespaces)
------------------------------------------------------------------------------------------------
* **A filesystem of its own.** The kernel sees read-only binds of ``/usr`` (and the ``/bin``,
  ``/lib*`` links), a few files of ``/etc`` (loader cache, fonts, time zone, passwd), the Python
  installation (``sys.base_prefix``), the virtual environment (``sys.prefix``) and the
  ``edumatcher`` package folder: not the repository around it, so no ``solutions/``, no tests.
  ``/tmp`` is a private, size-capped tmpfs holding ``HOME``, ``IPYTHONDIR`` and
  ``MPLCONFIGDIR``; the kernel's working directory is another (``work_mb``), and ``/dev/shm`` a
  third (64 MB): whatever the kernel writes lives in memory, capped, and goes with the sandbox.
  The one host folder it can write is that of its sockets and connection file, and only while
  the kernel starts: the worker closes it before any student code runs (``seal``). Nothing else
  of the host exists inside: not the gradebook, not the other submissions, not the worker's job
  folder, events file or the submitted file itself.
* **Its own processes.** A PID namespace with its own ``/proc``: the kernel sees only its own
  processes, so it cannot signal, ptrace or read ``/proc/<pid>/cmdline`` of the grader; its
  parent is the namespace's init (``bwrap``), which ignores its signals. ``--die-with-parent``
  and the namespace mean that when the kernel's ``bwrap`` is killed (end of the submission,
  timeout, Ctrl-C), every process it started dies with it: no double-forked child survives.
* **No network** (its own empty network namespace), a new session (no terminal to inject
  keystrokes into), every capability dropped (with a user of its own: all but the two the launcher
  needs to switch to it, gone with the switch), an empty environment apart from a few variables.
* **Its own user, when the grader runs as root** (as CI does): the sandbox is then made without a
  user namespace, and the kernel drops to a user id of its own (``KERNEL_UID_BASE`` + the
  worker's pid, no capabilities, ``no_new_privs``) before any student code runs. So the process
  cap ``RLIMIT_NPROC``, which Linux never applies to root, binds, and it counts only this
  kernel's processes: a fork bomb fails in its own kernel and nowhere else.
* **Resource limits** (also applied with ``none``): address-space data (``RLIMIT_DATA``,
  ``memory_mb``, twice that where a memory cgroup counts what is really used: an allocation beyond
  it raises ``MemoryError`` in the cell), file size (``RLIMIT_FSIZE``), no core files, a process
  cap (``RLIMIT_NPROC``: per kernel as above; for a grader that is not root, a cap on all of that
  user's processes), and, where the grader can make control groups (``kernel_cgroups``), a memory
  cgroup that counts everything the kernel and its children use (shared mappings included), a
  pids cgroup and a cpu cgroup (one share of the processors). Output size is capped by the
  grader, per cell and per notebook, outside the sandbox (``execute``).

What it does not guarantee
--------------------------
* Student code still shares the kernel with the check cells: tricks played *inside* the
  interpreter are another layer's job (the checks are restored and cross-checked by the worker).
* Without a memory cgroup (the run's header says when), memory is capped per process by
  ``RLIMIT_DATA``, which does not count shared anonymous mappings (``mmap.mmap(-1, n)``): a
  kernel can then take more RAM that way, until its timeout. Without a pids cgroup or a kernel
  user of its own (a grader that is not root), a fork bomb uses up the grader user's process
  cap, and kernels graded at the same moment cannot start processes until it ends.
* Dying with the grader relies on ``PR_SET_PDEATHSIG`` down the chain grader → worker → bwrap →
  the sandbox's init. A worker killed in the few milliseconds while bwrap sets up its namespace
  can leave that init (and an idle kernel) behind: bwrap sets its own death signal only once its
  child runs. Killing a worker from outside at any later moment takes everything down.
* CPU time is not capped beyond the cell and notebook timeouts (a cpu cgroup only shares it out).
* It reads what every user may read in ``/usr`` and the Python installation, and the bwrap
  command line (``/proc/1/cmdline``) reveals the paths of its own working and socket folders.
* ``none`` runs the kernel as the grader's user: student code can then read and write anything
  the grader can. ``auto`` (the default) and ``bwrap`` refuse to grade where bubblewrap cannot
  run (not installed, not Linux, user namespaces disabled): ``none`` must be asked for by name.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edumatcher import CliError

from .kernel_cgroups import CgroupSupport, kernel_cgroups
from .kernel_cgroups import probe as probe_cgroups

__all__ = [
    "DEFAULT_MEMORY_MB", "DEFAULT_FILE_MB", "DEFAULT_TMP_MB", "DEFAULT_WORK_MB", "KERNEL_UID_BASE", "SANDBOX_MODES",
    "SandboxChoice", "SandboxUnavailable", "resolve_sandbox", "wrap_kernel_command", "sandbox_spec",
    "sandboxed_kernel_manager",
]

SANDBOX_MODES = ("auto", "bwrap", "none")
DEFAULT_MEMORY_MB = 2048
DEFAULT_FILE_MB = 256
DEFAULT_TMP_MB = 256
DEFAULT_WORK_MB = 256  # the kernel's working directory (a tmpfs inside the sandbox)
# Size of the sandbox's /dev/shm, the only writable place under its read-only /dev.
_SHM_MB = 64
# Processes a kernel may add to its user's count (RLIMIT_NPROC counts every process of the user).
_EXTRA_PROCESSES = 256
# Processes (threads included) one kernel may have when it has a user or a pids cgroup of its own.
_KERNEL_PROCESSES = 512
# A grader running as root gives each kernel the user id KERNEL_UID_BASE + its worker's pid: unique
# among running kernels (pids are at most 2**22), far above real users, below 2**31.
KERNEL_UID_BASE = 1_900_000_000
_INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), "
                 "or pass --sandbox none to run student code with your permissions")

# /etc files a Python kernel with numpy and matplotlib uses; the rest of /etc stays out of view.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "fonts", "passwd", "group",
        "nsswitch.conf", "mime.types", "matplotlibrc", "alternatives", "ssl/certs")
# Environment variables passed into the sandbox (everything else is cleared).
_KEEP_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONHASHSEED", "PYTHONIOENCODING", "OMP_NUM_THREADS")

# Both launchers below start with this: ask Linux to SIGKILL the process when its parent dies.
_DIE_WITH_PARENT = """\
import os, sys
if sys.platform.startswith("linux"):
    import ctypes, signal
    try:
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
"""

# Run before the kernel (inside the sandbox, or in its place with none): join the kernel's cgroups, set the
# limits (soft = hard, so student code cannot raise them back), drop to the kernel's own user when given one,
# ask to die with the parent (after the user change, which clears that request), then exec the kernel in the
# same process. Plain -c code, so it works before anything is imported and without the edumatcher package.
_LIMITS_LAUNCHER = """\
import json, os, resource, sys
settings = json.loads(sys.argv[1])
for procs in settings.get("cgroups", ()):
    try:
        with open(procs, "w") as handle:
            handle.write(str(os.getpid()))
    except OSError:
        pass
for name, value in settings["limits"].items():
    which = getattr(resource, name, None)
    if which is None:
        continue
    hard = resource.getrlimit(which)[1]
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass
uid = settings.get("uid")
if uid is not None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)  # drops every capability; a failure stops the launch: never run student code as root
""" + _DIE_WITH_PARENT + """\
if sys.argv[2] != "0" and os.getppid() != int(sys.argv[2]):
    sys.exit(1)  # the worker died before the request above: nobody would ever stop this kernel
os.execv(sys.argv[3], sys.argv[3:])
"""


class SandboxUnavailable(CliError):
    """``--sandbox bwrap`` was asked for but cannot run here (the message says why, in one line)."""


@dataclass(frozen=True)
class SandboxChoice:
    """The isolation a grading run uses: ``kind`` is ``"bwrap"`` or ``"none"``; ``reason`` says why.

    ``kernel_uid`` is true when each kernel runs as a user of its own (a root grader, bwrap);
    ``cgroups`` says which per-kernel control groups can be made (``kernel_cgroups``).
    """

    kind: str
    reason: str = ""
    bwrap: str = ""
    kernel_uid: bool = False
    cgroups: CgroupSupport = CgroupSupport()

    def describe(self) -> str:
        """One line for the terminal: which sandbox, and why not bwrap when it is not."""
        if self.kind == "bwrap":
            return f"sandbox: bubblewrap ({self.bwrap}): no network, no view of solutions/ or other submissions"
        return f"sandbox: none ({self.reason}); student code runs with the grader's permissions"

    def describe_limits(self, memory_mb: int) -> str:
        """One line for the terminal: what bounds each kernel's memory and processes, and what does not."""
        if self.cgroups.has("memory"):
            memory = (f"memory: {memory_mb} MB for each kernel and its children, plus its folders, shared memory "
                      "counted (a memory cgroup per kernel)")
        else:
            memory = (f"memory: {memory_mb} MB per process (RLIMIT_DATA) only, so shared memory (mmap) is not "
                      f"counted: no memory cgroup ({self.cgroups.reasons.get('memory', 'not available')})")
        if self.kernel_uid or self.cgroups.has("pids"):
            ways = [way for way, on in (("a user of its own", self.kernel_uid), ("a pids cgroup", self.cgroups.has("pids")))
                    if on]
            processes = f"processes: {_KERNEL_PROCESSES} per kernel ({' and '.join(ways)})"
        elif hasattr(os, "getuid") and os.getuid() == 0:
            processes = "processes: not capped (a root grader without a pids cgroup): a fork bomb can slow the class"
        else:
            processes = ("processes: one cap for all of your user's processes (no pids cgroup): a fork bomb can "
                         "keep kernels graded at the same time from starting processes")
        return f"limits: {memory}; {processes}"


def resolve_sandbox(mode: str) -> SandboxChoice:
    """Decide the sandbox for ``mode`` (``auto``, ``bwrap`` or ``none``).

    ``auto`` and ``bwrap`` use bwrap when it is on PATH and a probe sandbox starts, and raise
    :class:`SandboxUnavailable` (one line, saying how to install it) when it cannot run: grading
    without a sandbox has to be asked for, with ``none``.
    """
    if mode not in SANDBOX_MODES:
        raise SandboxUnavailable(f"--sandbox must be one of {', '.join(SANDBOX_MODES)}, not {mode!r}")
    cgroups = probe_cgroups()
    if mode == "none":
        return SandboxChoice("none", "--sandbox none", cgroups=cgroups)
    found, why_not = _probe_bwrap()
    if not found:
        raise SandboxUnavailable(f"no sandbox for student code: {why_not}; {_INSTALL_HINT}")
    return SandboxChoice("bwrap", bwrap=found, kernel_uid=_probe_kernel_uid(found), cgroups=cgroups)


@functools.lru_cache(maxsize=1)
def _probe_bwrap() -> tuple[str, str]:
    """``(path, "")`` if bwrap can start a sandbox like the kernel's, else ``("", reason)``."""
    if not sys.platform.startswith("linux"):
        return "", f"bubblewrap needs Linux namespaces; this is {sys.platform}"
    path = shutil.which("bwrap")
    if not path:
        return "", "bwrap is not installed"
    argv = [path, *_namespace_args(False), *_system_binds(), "--", "true"]
    try:
        probe = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", f"bwrap did not start: {exc}"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        return "", f"bwrap cannot create namespaces here: {said[-1] if said else f'exit {probe.returncode}'}"
    return path, ""


@functools.lru_cache(maxsize=1)
def _probe_kernel_uid(bwrap: str) -> bool:
    """True when this (root) grader can run kernels as a user of their own: a probe sandbox drops to such a
    user and imports what a kernel imports. False for a grader that is not root (it has no other user)."""
    if not hasattr(os, "getuid") or os.getuid() != 0:
        return False
    uid = KERNEL_UID_BASE + os.getpid()
    code = (f"import os; os.setgroups([]); os.setgid({uid}); os.setuid({uid}); "
            "import ipykernel, edumatcher")
    args = [bwrap, *_namespace_args(True), *_system_binds(), "--perms", "01777", "--tmpfs", "/tmp",
            *_parent_dirs(_python_folders())]
    for folder in _python_folders():
        args += ["--ro-bind", folder, folder]
    try:
        probe = subprocess.run([*args, "--", sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def sandbox_spec(choice: SandboxChoice, *, memory_mb: int = DEFAULT_MEMORY_MB, file_mb: int = DEFAULT_FILE_MB,
                 tmp_mb: int = DEFAULT_TMP_MB, work_mb: int = DEFAULT_WORK_MB,
                 scratch: str | None = None) -> dict[str, Any]:
    """The JSON-able description of the sandbox a worker passes to ``run_cells(sandbox=...)``.

    ``scratch`` is the folder the kernel's socket folder is made in (``scratch.run_folder``).
    """
    return {"kind": choice.kind, "bwrap": choice.bwrap, "memory_mb": int(memory_mb), "file_mb": int(file_mb),
            "tmp_mb": int(tmp_mb), "work_mb": int(work_mb), "nproc": _nproc_limit(choice),
            "kernel_uid": choice.kernel_uid and choice.kind == "bwrap", "scratch": scratch,
            "cgroups": {"parents": dict(choice.cgroups.parents), "version": choice.cgroups.version}}


def _nproc_limit(choice: SandboxChoice) -> int | None:
    """The kernel's process cap: its own when it has a user of its own, else room above what the grader's
    user already runs (None as root: the kernel never applies it to uid 0)."""
    if choice.kernel_uid and choice.kind == "bwrap":
        return _KERNEL_PROCESSES
    if not hasattr(os, "getuid") or os.getuid() == 0:
        return None
    uid, mine = str(os.getuid()), 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as status:
                if any(line.startswith("Uid:") and line.split()[1] == uid for line in status):
                    mine += 1
        except OSError:
            continue
    return mine + _EXTRA_PROCESSES


def _limits(spec: dict[str, Any]) -> dict[str, int]:
    mb = 1024 * 1024
    # RLIMIT_DATA counts address space reserved, not memory used: a kernel whose output waits in its
    # socket queue (unix sockets buffer little) reserves far more than it touches, and at the limit some
    # C extensions (orjson) crash instead of raising MemoryError. Where a memory cgroup counts what is
    # really used, the reservation gets twice the room.
    data = int(spec["memory_mb"]) * (2 if (spec.get("cgroups") or {}).get("parents", {}).get("memory") else 1)
    limits = {"RLIMIT_DATA": data * mb, "RLIMIT_FSIZE": int(spec["file_mb"]) * mb, "RLIMIT_CORE": 0}
    if spec.get("nproc"):
        limits["RLIMIT_NPROC"] = int(spec["nproc"])
    return limits


# Run outside the sandbox, in place of bwrap: join the kernel's cgroups, ask to die with the worker, then
# exec bwrap. bwrap's own --die-with-parent ties the sandbox to *this* process, and the kernel manager starts
# it in a new session, so without this a worker killed outright (kill -9 of the grader, which
# PR_SET_PDEATHSIG passes on to the workers) would leave bwrap and the kernel running until they finish.
_DIE_WITH_WORKER_LAUNCHER = """\
import json, os, sys
for procs in json.loads(sys.argv[2]):
    try:
        with open(procs, "w") as handle:
            handle.write(str(os.getpid()))
    except OSError:
        pass
""" + _DIE_WITH_PARENT + """\
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)  # the worker died before the request above: nobody would ever stop this sandbox
os.execv(sys.argv[3], sys.argv[3:])
"""


def wrap_kernel_command(argv: list[str], spec: dict[str, Any], *, cwd: str, ipc_dir: str,
                        cgroups: list[str] = (), uid: int | None = None) -> list[str]:  # type: ignore[assignment]
    """The command that runs kernel ``argv`` with ``spec``'s limits, inside bwrap when ``spec`` says so.

    Inside bwrap, ``cwd`` (the kernel's working directory) is a size-capped tmpfs and ``ipc_dir``
    (its sockets and connection file) the one host folder bound writable. ``cgroups`` are the
    ``cgroup.procs`` files the kernel joins; ``uid``, the user it drops to (bwrap only).
    """
    if spec.get("kind") != "bwrap":  # the worker formats this command: it is the launcher's parent
        settings = {"limits": _limits(spec), "cgroups": list(cgroups)}
        return [sys.executable, "-c", _LIMITS_LAUNCHER, json.dumps(settings), str(os.getpid()), *argv]
    # Inside bwrap the launcher's parent is the sandbox's own init: "0" skips the parent check.
    settings = {"limits": _limits(spec), "uid": uid}
    limited = [sys.executable, "-c", _LIMITS_LAUNCHER, json.dumps(settings), "0", *argv]
    home = "/tmp/home"
    mb = 1024 * 1024
    # bwrap mounts in argument order: the private /tmp first, so that a Python, venv or package that
    # lives under /tmp (a clone in a temporary folder, as CI makes) is bound on top of it, not hidden.
    # Folders the kernel writes are world-writable (sticky): it may run as a user of its own.
    args = [spec["bwrap"], *_namespace_args(uid is not None), *_system_binds(),
            "--perms", "01777", "--size", str(int(spec["tmp_mb"]) * mb), "--tmpfs", "/tmp",
            *_parent_dirs([*_python_folders(), cwd, ipc_dir])]
    for folder in _python_folders():
        args += ["--ro-bind", folder, folder]
    args += ["--perms", "01777", "--dir", home,
             "--perms", "01777", "--size", str(int(spec.get("work_mb") or DEFAULT_WORK_MB) * mb), "--tmpfs", cwd,
             "--bind", ipc_dir, ipc_dir, "--chdir", cwd,
             "--clearenv", "--setenv", "PATH", f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
             "--setenv", "HOME", home, "--setenv", "TMPDIR", "/tmp", "--setenv", "USER", "student",
             "--setenv", "LOGNAME", "student",
             "--setenv", "IPYTHONDIR", f"{home}/.ipython", "--setenv", "MPLCONFIGDIR", f"{home}/.matplotlib",
             "--setenv", "MPLBACKEND", "module://matplotlib_inline.backend_inline"]
    for name in _KEEP_ENV:
        if name in os.environ:
            args += ["--setenv", name, os.environ[name]]
    # The worker formats this command, so os.getpid() is the parent the launcher must still have.
    return [sys.executable, "-c", _DIE_WITH_WORKER_LAUNCHER, str(os.getpid()), json.dumps(list(cgroups)), *args,
            "--", *limited]


def _namespace_args(own_user: bool) -> list[str]:
    """Namespaces and capabilities. ``own_user`` (a root grader): no user namespace, so the kernel can drop to
    a real user of its own, and only the two capabilities that drop needs (gone once it is done)."""
    if own_user:
        namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                      "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        namespaces = ["--unshare-all", "--cap-drop", "ALL"]
    # bwrap's /dev is a tmpfs sized only by the host's RAM: make it read-only, and give /dev/shm
    # (POSIX shared memory, multiprocessing's semaphores) a small tmpfs of its own.
    return [*namespaces, "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev",
            "--perms", "01777", "--size", str(_SHM_MB * 1024 * 1024), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]


def _system_binds() -> list[str]:
    """Read-only binds of the system folders, and ``/bin``-style links recreated as links."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in _ETC:
        path = Path("/etc") / name
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _parent_dirs(folders: list[str]) -> list[str]:
    """``--dir`` arguments for every folder above ``folders``, readable by all: bwrap would make them 0700,
    which a kernel running as a user of its own could not pass through (they hold nothing else)."""
    args: list[str] = []
    seen = {"/", "/tmp"}
    for folder in folders:
        for parent in reversed(Path(folder).parents):
            if str(parent) not in seen:
                seen.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
    return args


def _python_folders() -> list[str]:
    """The Python installation, the venv and the edumatcher package: what the kernel imports from."""
    import edumatcher  # the package folder only: its parent (the repository) holds solutions/ and tests/

    folders = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix),
               os.path.realpath(sys.exec_prefix), str(Path(edumatcher.__file__).resolve().parent)}
    # sys.prefix may be reached through a symlink (and the venv's python links into base_prefix).
    folders |= {sys.base_prefix, sys.prefix}
    outside_usr = [f for f in folders if not f.startswith("/usr/") and os.path.isdir(f)]
    # A folder inside another one is already bound; binding it again is harmless but noisy.
    return sorted(f for f in outside_usr if not any(f != o and f.startswith(o + os.sep) for o in outside_usr))


@contextlib.contextmanager
def sandboxed_kernel_manager(spec: dict[str, Any], *, cwd: str, kernel_name: str = "python3") -> Iterator[Any]:
    """A kernel manager whose kernel runs under ``spec`` (see :func:`sandbox_spec`); its socket folder and
    its cgroups are removed after.

    The kernel talks over unix sockets (``transport="ipc"``) in a fresh folder bound into the
    sandbox, since the sandbox has no network, not even localhost. Interrupts are sent as
    messages: a signal would reach ``bwrap``, not the kernel. Once the kernel has made its sockets,
    ``km.seal()`` closes that folder to it (call it before any student code runs).
    """
    from jupyter_client.manager import AsyncKernelManager

    uid = KERNEL_UID_BASE + os.getpid() if spec.get("kernel_uid") else None
    mb = 1024 * 1024
    # Everything the kernel may hold in memory: its own (memory_mb) and its tmpfs folders, which are memory too.
    memory = (int(spec["memory_mb"]) + int(spec["tmp_mb"]) + int(spec.get("work_mb") or DEFAULT_WORK_MB) + _SHM_MB) * mb
    cgroups = CgroupSupport(parents=(spec.get("cgroups") or {}).get("parents") or {},
                            version=(spec.get("cgroups") or {}).get("version") or 0)

    class _LimitedKernelManager(AsyncKernelManager):  # type: ignore[misc]
        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            argv = super().format_kernel_cmd(extra_arguments)
            if uid is not None and os.path.exists(self.connection_file):
                os.chmod(self.connection_file, 0o644)  # written 0600 by the grader: the kernel's user reads it
            return wrap_kernel_command(argv, spec, cwd=cwd, ipc_dir=ipc_dir, cgroups=joined, uid=uid)

        def seal(self) -> None:
            """Let the kernel make no more files in its socket folder (its sockets exist by now)."""
            os.chmod(ipc_dir, 0o711)

    ipc_dir = tempfile.mkdtemp(prefix="edumatcher-kernel-", dir=spec.get("scratch"))
    try:
        with kernel_cgroups(cgroups, memory_bytes=memory, pids_max=_KERNEL_PROCESSES) as joined:
            if spec.get("kind") == "bwrap":
                if uid is not None:
                    os.chmod(ipc_dir, 0o1733)  # the kernel's user makes its sockets here; it lists nothing
                km = _LimitedKernelManager(kernel_name=kernel_name, transport="ipc", ip=f"{ipc_dir}/kernel",
                                           connection_file=f"{ipc_dir}/kernel.json")
                km.kernel_spec.interrupt_mode = "message"
            else:
                km = _LimitedKernelManager(kernel_name=kernel_name, connection_file=f"{ipc_dir}/kernel.json")
            yield km
    finally:
        shutil.rmtree(ipc_dir, ignore_errors=True)
