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
  ``MPLCONFIGDIR``. The only writable host folders are the kernel's working directory (a fresh,
  empty folder per submission, deleted afterwards) and the folder of the kernel's sockets and
  connection file. Nothing else of the host exists inside: not the gradebook, not the other
  submissions, not the worker's job folder, events file or the submitted file itself.
* **Its own processes.** A PID namespace with its own ``/proc``: the kernel sees only its own
  processes, so it cannot signal, ptrace or read ``/proc/<pid>/cmdline`` of the grader; its
  parent is the namespace's init (``bwrap``), which ignores its signals. ``--die-with-parent``
  and the namespace mean that when the kernel's ``bwrap`` is killed (end of the submission,
  timeout, Ctrl-C), every process it started dies with it: no double-forked child survives.
* **No network** (its own empty network namespace), a new session (no terminal to inject
  keystrokes into), every capability dropped, an empty environment apart from a few variables.
* **Resource limits** (also applied with ``none``): address-space data (``RLIMIT_DATA``,
  ``memory_mb``: an allocation beyond it raises ``MemoryError`` in the cell), file size
  (``RLIMIT_FSIZE``), no core files, and, when the grader does not run as root, a process cap
  (``RLIMIT_NPROC``: the kernel ignores it for root, whose fork bombs are bounded by the
  notebook timeout and ended with the namespace). Output size is capped by the grader, per cell
  and per notebook, outside the sandbox (``execute``).

What it does not guarantee
--------------------------
* Student code still shares the kernel with the check cells: tricks played *inside* the
  interpreter are another layer's job (the checks are restored and cross-checked by the worker).
* Memory is capped per process by ``RLIMIT_DATA``, which does not count shared anonymous
  mappings (``mmap.mmap(-1, n)``): a kernel can still take more RAM that way, until its timeout.
  Only a cgroup (``memory.max``) would count everything; none is used, since grading must run
  without systemd or root. The tmpfs folders are capped: ``/tmp`` (``tmp_mb``) and ``/dev/shm``
  (64 MB); the rest of ``/dev`` is read-only.
* Dying with the grader relies on ``PR_SET_PDEATHSIG`` down the chain grader → worker → bwrap →
  the sandbox's init. A worker killed in the few milliseconds while bwrap sets up its namespace
  can leave that init (and an idle kernel) behind: bwrap sets its own death signal only once its
  child runs. Killing a worker from outside at any later moment takes everything down.
* CPU is not capped beyond the cell and notebook timeouts; disk use in the working directory is
  bounded per file (``RLIMIT_FSIZE``) and by the timeout, not in total.
* It reads what every user may read in ``/usr`` and the Python installation, and the bwrap
  command line (``/proc/1/cmdline``) reveals the paths of its own working and socket folders.
* ``none`` (and ``auto`` where bwrap is missing or user namespaces are disabled, e.g. macOS,
  some containers) runs the kernel as the grader's user, as before: student code can then
  read anything the grader can. Use ``--sandbox bwrap`` to refuse to grade without it.
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

from edumatcher.cli import CliError

__all__ = [
    "DEFAULT_MEMORY_MB", "DEFAULT_FILE_MB", "DEFAULT_TMP_MB", "SANDBOX_MODES", "SandboxChoice",
    "SandboxUnavailable", "resolve_sandbox", "wrap_kernel_command", "sandbox_spec", "sandboxed_kernel_manager",
]

SANDBOX_MODES = ("auto", "bwrap", "none")
DEFAULT_MEMORY_MB = 2048
DEFAULT_FILE_MB = 256
DEFAULT_TMP_MB = 256
# Size of the sandbox's /dev/shm, the only writable place under its read-only /dev.
_SHM_MB = 64
# Processes a kernel may add to its user's count (RLIMIT_NPROC counts every process of the user).
_EXTRA_PROCESSES = 256

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

# Run inside the sandbox before the kernel: ask to die with the worker, set the limits (soft = hard,
# so student code cannot raise them back), then exec the kernel in the same process. Plain -c code, so it works
# before anything is imported and without the edumatcher package.
_LIMITS_LAUNCHER = _DIE_WITH_PARENT + """\
import json, resource
if sys.argv[2] != "0" and os.getppid() != int(sys.argv[2]):
    sys.exit(1)  # the worker died before the request above: nobody would ever stop this kernel
for name, value in json.loads(sys.argv[1]).items():
    which = getattr(resource, name, None)
    if which is None:
        continue
    hard = resource.getrlimit(which)[1]
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass
os.execv(sys.argv[3], sys.argv[3:])
"""


class SandboxUnavailable(CliError):
    """``--sandbox bwrap`` was asked for but cannot run here (the message says why, in one line)."""


@dataclass(frozen=True)
class SandboxChoice:
    """The isolation a grading run uses: ``kind`` is ``"bwrap"`` or ``"none"``; ``reason`` says why."""

    kind: str
    reason: str = ""
    bwrap: str = ""

    def describe(self) -> str:
        """One line for the terminal: which sandbox, and why not bwrap when it is not."""
        if self.kind == "bwrap":
            return f"sandbox: bubblewrap ({self.bwrap}): no network, no view of solutions/ or other submissions"
        return f"sandbox: none ({self.reason}); student code runs with the grader's permissions"


def resolve_sandbox(mode: str) -> SandboxChoice:
    """Decide the sandbox for ``mode`` (``auto``, ``bwrap`` or ``none``).

    ``auto`` uses bwrap when it is on PATH and a probe sandbox starts, else ``none`` with the
    reason. ``bwrap`` raises :class:`SandboxUnavailable` when it cannot run.
    """
    if mode not in SANDBOX_MODES:
        raise SandboxUnavailable(f"--sandbox must be one of {', '.join(SANDBOX_MODES)}, not {mode!r}")
    if mode == "none":
        return SandboxChoice("none", "--sandbox none")
    found, why_not = _probe_bwrap()
    if found:
        return SandboxChoice("bwrap", bwrap=found)
    if mode == "bwrap":
        raise SandboxUnavailable(f"--sandbox bwrap: {why_not}")
    return SandboxChoice("none", why_not)


@functools.lru_cache(maxsize=1)
def _probe_bwrap() -> tuple[str, str]:
    """``(path, "")`` if bwrap can start a sandbox like the kernel's, else ``("", reason)``."""
    if not sys.platform.startswith("linux"):
        return "", f"bubblewrap needs Linux namespaces; this is {sys.platform}"
    path = shutil.which("bwrap")
    if not path:
        return "", "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    argv = [path, *_namespace_args(), *_system_binds(), "--", "true"]
    try:
        probe = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", f"bwrap did not start: {exc}"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        return "", f"bwrap cannot create namespaces here: {said[-1] if said else f'exit {probe.returncode}'}"
    return path, ""


def sandbox_spec(choice: SandboxChoice, *, memory_mb: int = DEFAULT_MEMORY_MB, file_mb: int = DEFAULT_FILE_MB,
                 tmp_mb: int = DEFAULT_TMP_MB) -> dict[str, Any]:
    """The JSON-able description of the sandbox a worker passes to ``run_cells(sandbox=...)``."""
    return {"kind": choice.kind, "bwrap": choice.bwrap, "memory_mb": int(memory_mb), "file_mb": int(file_mb),
            "tmp_mb": int(tmp_mb), "nproc": _nproc_limit()}


def _nproc_limit() -> int | None:
    """A process cap for the kernel's user, or None as root (the kernel never applies it to uid 0)."""
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
    limits = {"RLIMIT_DATA": int(spec["memory_mb"]) * mb, "RLIMIT_FSIZE": int(spec["file_mb"]) * mb,
              "RLIMIT_CORE": 0}
    if spec.get("nproc"):
        limits["RLIMIT_NPROC"] = int(spec["nproc"])
    return limits


# Run outside the sandbox, in place of bwrap: ask to die with the worker, then exec bwrap. bwrap's own
# --die-with-parent ties the sandbox to *this* process, and the kernel manager starts it in a new
# session, so without this a worker killed outright (kill -9 of the grader, which PR_SET_PDEATHSIG
# passes on to the workers) would leave bwrap and the kernel running until they finish.
_DIE_WITH_WORKER_LAUNCHER = _DIE_WITH_PARENT + """\
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)  # the worker died before the request above: nobody would ever stop this sandbox
os.execv(sys.argv[2], sys.argv[2:])
"""


def wrap_kernel_command(argv: list[str], spec: dict[str, Any], *, cwd: str, ipc_dir: str) -> list[str]:
    """The command that runs kernel ``argv`` with ``spec``'s limits, inside bwrap when ``spec`` says so.

    ``cwd`` (the kernel's working directory) and ``ipc_dir`` (its sockets and connection file)
    are the only host folders it may write, bound at the same paths inside.
    """
    if spec.get("kind") != "bwrap":  # the worker formats this command: it is the launcher's parent
        return [sys.executable, "-c", _LIMITS_LAUNCHER, json.dumps(_limits(spec)), str(os.getpid()), *argv]
    # Inside bwrap the launcher's parent is the sandbox's own init: "0" skips the parent check.
    limited = [sys.executable, "-c", _LIMITS_LAUNCHER, json.dumps(_limits(spec)), "0", *argv]
    home = "/tmp/home"
    # bwrap mounts in argument order: the private /tmp first, so that a Python, venv or package that
    # lives under /tmp (a clone in a temporary folder, as CI makes) is bound on top of it, not hidden.
    args = [spec["bwrap"], *_namespace_args(), *_system_binds(),
            "--size", str(int(spec["tmp_mb"]) * 1024 * 1024), "--tmpfs", "/tmp"]
    for folder in _python_folders():
        args += ["--ro-bind", folder, folder]
    args += ["--dir", home, "--bind", cwd, cwd, "--bind", ipc_dir, ipc_dir, "--chdir", cwd,
             "--clearenv", "--setenv", "PATH", f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
             "--setenv", "HOME", home, "--setenv", "TMPDIR", "/tmp",
             "--setenv", "IPYTHONDIR", f"{home}/.ipython", "--setenv", "MPLCONFIGDIR", f"{home}/.matplotlib",
             "--setenv", "MPLBACKEND", "module://matplotlib_inline.backend_inline"]
    for name in _KEEP_ENV:
        if name in os.environ:
            args += ["--setenv", name, os.environ[name]]
    # The worker formats this command, so os.getpid() is the parent the launcher must still have.
    return [sys.executable, "-c", _DIE_WITH_WORKER_LAUNCHER, str(os.getpid()), *args, "--", *limited]


def _namespace_args() -> list[str]:
    # bwrap's /dev is a tmpfs sized only by the host's RAM: make it read-only, and give /dev/shm
    # (POSIX shared memory, multiprocessing's semaphores) a small tmpfs of its own.
    return ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--proc", "/proc", "--dev", "/dev", "--size", str(_SHM_MB * 1024 * 1024), "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev"]


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
    """A kernel manager whose kernel runs under ``spec`` (see :func:`sandbox_spec`); its socket folder is removed after.

    The kernel talks over unix sockets (``transport="ipc"``) in a fresh folder bound into the
    sandbox, since the sandbox has no network, not even localhost. Interrupts are sent as
    messages: a signal would reach ``bwrap``, not the kernel.
    """
    from jupyter_client.manager import AsyncKernelManager

    class _LimitedKernelManager(AsyncKernelManager):  # type: ignore[misc]
        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            argv = super().format_kernel_cmd(extra_arguments)
            return wrap_kernel_command(argv, spec, cwd=cwd, ipc_dir=ipc_dir)

    ipc_dir = tempfile.mkdtemp(prefix="edumatcher-kernel-")
    try:
        if spec.get("kind") == "bwrap":
            km = _LimitedKernelManager(kernel_name=kernel_name, transport="ipc", ip=f"{ipc_dir}/kernel",
                                       connection_file=f"{ipc_dir}/kernel.json")
            km.kernel_spec.interrupt_mode = "message"
        else:
            km = _LimitedKernelManager(kernel_name=kernel_name, connection_file=f"{ipc_dir}/kernel.json")
        yield km
    finally:
        shutil.rmtree(ipc_dir, ignore_errors=True)
