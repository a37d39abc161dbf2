"""The two standard tools that measure from *another* process: pyperf and py-spy.

**pyperf** (``python -m pyperf timeit``) runs a statement in several fresh
*worker* processes, one after another, and reports the mean ± standard deviation
of all their values. A process fixes things for its whole life (where objects sit
in memory, the string hash seed, what the allocator got from the system), so
samples from one process vary less than samples from several; pyperf's workers
put that between-process variation *into* the spread instead of hiding it.
``pyperf_timeit`` runs it as a subprocess and reads its JSON back with
``pyperf.Benchmark.load``; ``PyperfResult`` keeps each worker's values apart, so
the chapter can set the spread of the workers' means against ``within / sqrt(n)``,
what the means of ``n`` values spread by when processes differ in nothing
(``process_spread``, a one-way analysis of variance).

**py-spy** is a *sampling* profiler written in Rust: it reads another process's
memory a few hundred times a second and records the Python stack it finds, so
the target runs unmodified and at full speed (no hooks inside the interpreter,
unlike cProfile). Attaching needs permission to read the other process
(``ptrace``): it works as root or on one's own processes where
``kernel.yama.ptrace_scope`` allows it, and fails on Binder's containers and on
macOS without ``sudo``. ``py_spy_record`` starts a child that drives the engine
(``python -m edumatcher.chapters.the_standard_tools.out_of_process SECONDS``), attaches to it, and
returns the folded stacks; ``py_spy_unavailable`` says in one line why it cannot
run here, or returns None.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ENGINE_SETUP", "ENGINE_PASS", "PyperfResult", "ProcessSpread", "pyperf_command", "pyperf_timeit", "load_pyperf",
    "py_spy_path", "py_spy_unavailable", "py_spy_record", "SpyRecord", "well_formed_stacks", "drive_engine",
]

ENGINE_SETUP = (
    "from edumatcher.engine import Engine; "
    "from edumatcher.workloads import SYMBOL, encode_workload, steady_state; "
    "payloads = encode_workload(steady_state(3_000, seed=1, depth=500))[:500]; "
    "tick = lambda: 1"
)
"""pyperf's ``-s`` for the chapter's benchmark: the first 500 wire payloads of chapter 02's seeded steady-state
flow, the pass its ``timeit`` section times (``one_pass``), so the figures can be set side by side.

Only the engine and the workloads are imported (not the course's measuring modules,
which pull in numpy and scipy): every worker pays its imports before it measures."""

ENGINE_PASS = ("handle = Engine([SYMBOL], clock=tick).handle", "for p in payloads: handle(p)")
"""The timed statement, as pyperf takes it (one argument per line): one pass over the payloads on a
fresh engine with a constant clock (``message_path.fresh_engine``'s engine)."""

_ROOT = str(Path(__file__).resolve().parents[3])
"""The repository (this file is ``edumatcher/chapters/the_standard_tools/out_of_process.py``)."""


def _env() -> dict[str, str]:
    # The workers must import this package from the same checkout as the notebook.
    env = dict(os.environ)
    env["PYTHONPATH"] = _ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@dataclass(frozen=True)
class PyperfResult:
    """What ``pyperf timeit`` measured: every worker's values (seconds per loop) and its summary line."""

    command: tuple[str, ...]
    runs: tuple[tuple[float, ...], ...]
    loops: int
    summary: str

    @property
    def values(self) -> list[float]:
        """All values of all workers, in order."""
        return [v for run in self.runs for v in run]

    @property
    def mean(self) -> float:
        """The mean of all values: pyperf's headline."""
        return statistics.fmean(self.values)

    @property
    def stdev(self) -> float:
        """The standard deviation of all values: pyperf's ``±``."""
        return statistics.stdev(self.values)

    @property
    def worker_means(self) -> list[float]:
        """Each worker's mean: how much one whole process differs from the next."""
        return [statistics.fmean(run) for run in self.runs]

    @property
    def within_worker_stdev(self) -> float:
        """Pooled standard deviation of values around their own worker's mean: the spread one process sees."""
        squares = sum((v - statistics.fmean(run)) ** 2 for run in self.runs for v in run)
        dof = sum(len(run) - 1 for run in self.runs)
        return (squares / dof) ** 0.5 if dof > 0 else 0.0

    @property
    def between_worker_stdev(self) -> float:
        """Standard deviation of the workers' means: the spread only several processes reveal."""
        means = self.worker_means
        return statistics.stdev(means) if len(means) > 1 else 0.0

    def process_spread(self) -> ProcessSpread:
        """The workers' means set against what their own noise predicts (a one-way analysis of variance).

        Even when processes differ in nothing, the mean of ``n`` values varies by about
        ``within / sqrt(n)`` from one worker to the next, so the two spreads are compared on
        that scale: ``F = n * between**2 / within**2`` follows Fisher's F distribution with
        ``(workers - 1, values - workers)`` degrees of freedom when the processes are alike.
        ``p`` is the chance of an ``F`` this large from alike processes; below 0.05 is the
        5 % level pyperf's ``compare_to`` uses for its own test (Student's t, two benchmarks).
        Needs two or more workers with the same number (at least two) of values each.
        """
        sizes = {len(run) for run in self.runs}
        if len(self.runs) < 2 or len(sizes) != 1 or min(sizes) < 2:
            raise ValueError(f"needs two or more workers of equal size (>= 2 values); got sizes {[len(r) for r in self.runs]}")
        from scipy.stats import f as fisher  # imported here: the py-spy child imports this module

        n = sizes.pop()
        within, between = self.within_worker_stdev, self.between_worker_stdev
        expected = within / n ** 0.5
        ratio = between / expected if expected > 0 else float("inf")
        f_value = ratio ** 2
        p = float(fisher.sf(f_value, len(self.runs) - 1, len(self.values) - len(self.runs))) if expected > 0 else 0.0
        return ProcessSpread(between, expected, f_value, p)


@dataclass(frozen=True)
class ProcessSpread:
    """How far apart pyperf's workers are, against how far their own noise would put them (``process_spread``)."""

    between: float
    """Standard deviation of the workers' means (seconds)."""
    expected: float
    """``within / sqrt(values per worker)``: what ``between`` comes to, on average, when processes differ in nothing."""
    f: float
    """``(between / expected) ** 2``: the analysis of variance's F."""
    p: float
    """The chance of an F at least this large were the processes alike."""

    @property
    def ratio(self) -> float:
        """``between / expected``: about 1 for alike processes, well above 1 when the processes differ."""
        return self.f ** 0.5

    @property
    def differ(self) -> bool:
        """Whether the workers differ beyond their noise at the 5 % level (``p < 0.05``)."""
        return self.p < 0.05


def pyperf_command(setup: str, statements: Sequence[str], output: str, *, processes: int = 4, values: int = 3,
                   warmups: int = 1, min_time: float = 0.02, python: str | None = None) -> list[str]:
    """The ``python -m pyperf timeit`` command line the chapter runs (pyperf's defaults: 20 workers, 3 values)."""
    return [
        python or sys.executable, "-m", "pyperf", "timeit", "--quiet",
        "--processes", str(processes), "--values", str(values), "--warmups", str(warmups),
        "--min-time", str(min_time), "--output", output, "--setup", setup, *statements,
    ]


def load_pyperf(path: str | os.PathLike[str]) -> tuple[tuple[tuple[float, ...], ...], int]:
    """Each worker's values and the loop count, from a pyperf JSON file (calibration runs, which have none, skipped)."""
    import pyperf  # imported here: only this reader needs it

    bench = pyperf.Benchmark.load(str(path))
    runs = tuple(tuple(run.values) for run in bench.get_runs() if run.values)
    loops = int(bench.get_metadata().get("loops", 1))
    return runs, loops


def pyperf_timeit(setup: str = ENGINE_SETUP, statements: Sequence[str] = ENGINE_PASS, *, processes: int = 4,
                  values: int = 3, warmups: int = 1, min_time: float = 0.02, timeout: float = 120.0) -> PyperfResult:
    """Run ``python -m pyperf timeit`` in a subprocess and read back what every worker measured.

    Cost: ``processes`` interpreter start-ups plus ``processes * (values + warmups)``
    values of about ``min_time`` seconds each (a few seconds with the defaults).
    Raises ``RuntimeError`` with pyperf's error output if it fails.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "bench.json")
        cmd = pyperf_command(setup, statements, out, processes=processes, values=values, warmups=warmups,
                             min_time=min_time)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(), cwd=tmp)
        if done.returncode != 0:
            raise RuntimeError(f"pyperf failed ({done.returncode}): {(done.stderr or done.stdout)[-1500:]}")
        runs, loops = load_pyperf(out)
    shown = ["python" if i == 0 else part for i, part in enumerate(cmd)]
    shown[shown.index("--output") + 1] = "bench.json"
    return PyperfResult(tuple(shown), runs, loops, done.stdout.strip())


def py_spy_path() -> str | None:
    """Where the ``py-spy`` executable is: beside this interpreter (a venv's ``bin``) or on ``PATH``."""
    beside = Path(sys.executable).parent / ("py-spy.exe" if os.name == "nt" else "py-spy")
    if beside.exists():
        return str(beside)
    return shutil.which("py-spy")


def py_spy_unavailable() -> str | None:
    """One line saying why py-spy cannot attach here, or None when it should work.

    Checks what can be known without trying: the executable, macOS (which needs
    ``sudo``), and Linux's ptrace policy (``kernel.yama.ptrace_scope`` 3 forbids
    attaching; 2 needs root). Anything else shows when ``py_spy_record`` runs.
    """
    if py_spy_path() is None:
        return "py-spy is not installed (pip install py-spy); skipping the sampling profiler."
    if sys.platform == "darwin" and os.geteuid() != 0:
        return "py-spy needs sudo on macOS to read another process; skipping (run it by hand with sudo)."
    scope_file = Path("/proc/sys/kernel/yama/ptrace_scope")
    if sys.platform.startswith("linux") and scope_file.exists():
        scope = scope_file.read_text().strip()
        if scope == "3" or (scope == "2" and os.geteuid() != 0):
            return f"ptrace is restricted here (kernel.yama.ptrace_scope={scope}); py-spy cannot attach, skipping."
    return None


@dataclass(frozen=True)
class SpyRecord:
    """py-spy's output: folded stacks (``"a;b;c count"`` lines) and the command that made them."""

    folded: tuple[str, ...]
    command: tuple[str, ...]
    samples: int
    dropped: int = 0  # samples on lines with no frame at all (see ``well_formed_stacks``)


def well_formed_stacks(text: str) -> tuple[tuple[str, ...], int]:
    """The ``"frames COUNT"`` lines of py-spy's raw output, and the samples on the lines left out.

    ``--nonblocking`` reads the target without pausing it, so now and then a sample
    is torn and py-spy writes it with an empty stack (``" 1"``): a line every folded
    stack reader rightly rejects. Those carry no frame, so they are dropped and counted.

    >>> well_formed_stacks("main;handle 3\\n 1\\n\\nmain;idle 2\\n")
    (('main;handle 3', 'main;idle 2'), 1)
    """
    kept: list[str] = []
    dropped = 0
    for raw in text.splitlines():
        stack, _, count = raw.strip().rpartition(" ")
        if not count.isdigit():
            continue
        if stack.strip():
            kept.append(raw.strip())
        else:
            dropped += int(count)
    return tuple(kept), dropped


def py_spy_record(seconds: float = 1.5, *, rate: int = 250, timeout: float = 60.0) -> SpyRecord:
    """Start a child driving the engine, attach ``py-spy record --format raw`` to it for ``seconds``.

    ``--function`` makes py-spy name each frame by its function's first line, so
    all samples of one function merge. ``--nonblocking`` reads the child without
    pausing it (a sample may then be torn, and py-spy says how many errors it had).
    Raises ``RuntimeError`` with py-spy's own words when it cannot attach.
    """
    spy = py_spy_path()
    if spy is None:
        raise RuntimeError("py-spy is not installed")
    child = subprocess.Popen([sys.executable, "-m", "edumatcher.chapters.the_standard_tools.out_of_process", str(seconds + 5)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(), text=True)
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":  # imports and workload built: now it only handles messages
            raise RuntimeError("the engine child did not start")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "stacks.txt"
            cmd = [spy, "record", "--pid", str(child.pid), "--duration", str(max(1, round(seconds))),
                   "--rate", str(rate), "--format", "raw", "--function", "--output", str(out)]
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                raise RuntimeError(f"py-spy did not finish within {timeout:.0f} s") from exc
            if done.returncode != 0 or not out.exists():
                raise RuntimeError(f"py-spy could not record: {(done.stderr or done.stdout).strip()[-500:]}")
            folded, dropped = well_formed_stacks(out.read_text())
    finally:
        child.kill()
        child.wait()
    samples = sum(int(line.rsplit(" ", 1)[1]) for line in folded)
    shown = ("py-spy", "record", "--pid", "<child pid>", *cmd[4:-1], "stacks.txt")
    return SpyRecord(folded, shown, samples, dropped)


def drive_engine(seconds: float) -> int:
    """Handle a seeded workload over and over on fresh engines for ``seconds``; return the passes made.

    The target py-spy attaches to. Prints ``ready`` once set up, so the parent
    starts sampling only when the child is handling messages.
    """
    from edumatcher.engine import Engine  # not message_path: its measuring imports would slow the start
    from edumatcher.workloads import SYMBOL, encode_workload, steady_state

    # chapter 02's workload (its cProfile section profiles the same 3,000 payloads), so the two pictures compare
    payloads = encode_workload(steady_state(3_000, seed=1, depth=500))
    print("ready", flush=True)
    passes = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        handle = Engine([SYMBOL], clock=lambda: 1).handle
        for payload in payloads:
            handle(payload)
        passes += 1
    return passes


if __name__ == "__main__":  # pragma: no cover - the child of py_spy_record
    drive_engine(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0)
