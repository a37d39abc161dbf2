"""The ``check-verdicts`` subcommand: run chapters several times and diff the verdicts they print.

The course's convention: every conclusion a chapter prints about a measurement is a line that
starts with ``verdict:``, and its category (slower / faster / same / undetermined, a direction)
must come out the same on every run, on a busy machine too; the numbers inside may vary. This
module checks that promise. It executes each notebook ``runs`` times, each in a fresh
``python3`` kernel whose cwd is the notebook's folder (optionally with CPU-hog processes beside
it, ``edumatcher.kit.load.cpu_hog``), collects the verdict lines in order of appearance, replaces
every number by ``#`` (``normalise``), and compares the runs position by position.

A run that fails (a cell raises, times out, or the kernel dies) makes its chapter unstable, as
does a different number of verdicts. Example::

    python -m edumatcher check-verdicts 03 07 --runs 3 --hog 2 --json verdicts.json
"""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_RUNS", "DEFAULT_TIMEOUT_S", "PREFIX", "Verdict", "Run", "ChapterResult",
    "normalise", "verdict_lines", "find_chapters", "run_notebook", "check_chapter", "check",
    "format_chapter", "add_parser",
]

DEFAULT_RUNS = 3
DEFAULT_TIMEOUT_S = 300
"""Per cell. A chapter's cell should take seconds; this only catches a hang, with room for a CPU hog."""

PREFIX = "verdict:"
"""What a verdict line starts with (after leading whitespace): the course's convention, case and all."""

_NUMBER = re.compile(
    r"""
    (?<![\w.])                      # not the digits of a word (p99, x86_64, gen2) nor after a point
    [-+\u2212]?                     # a sign (also U+2212, the typographic minus)
    (?:\d{1,3}(?:[,_]\d{3})+|\d+)   # an integer part, with thousands separators or without
    (?:\.\d+)*                      # decimals (and the rest of a version such as 3.11.7)
    (?:[eE][-+]?\d+)?               # an exponent
    %?                              # a percentage written against its number
    """,
    re.VERBOSE,
)
# Tags that end a line of text when rendered; every other tag simply disappears.
_LINE_BREAK_TAGS = re.compile(r"<\s*(?:br|/p|/div|/tr|/li|/h[1-6]|/pre|/table|/caption)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")


def normalise(line: str) -> str:
    """Return ``line`` stripped, with every number replaced by ``#``: what must not differ between runs.

    Words stay, numbers that are part of a word (``p99``) too; a ``%`` written against its number
    goes with it.

    >>> normalise("verdict: a is 2.31x slower than b (95 % CI 2.10–2.55)")
    'verdict: a is #x slower than b (# % CI #–#)'
    >>> [normalise(s) for s in ("1,234", "-3.5e-06", "12 %", "12%", "p99 of 40_000 orders", "1.5-2.0")]
    ['#', '#', '# %', '#', 'p99 of # orders', '#-#']
    """
    return _NUMBER.sub("#", line.strip())


def _html_text(markup: str) -> str:
    """The text of an HTML fragment, one line per rendered line."""
    return html.unescape(_TAG.sub("", _LINE_BREAK_TAGS.sub("\n", markup)))


def _as_text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _prefixed(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.lstrip().startswith(PREFIX)]


@dataclass(frozen=True)
class Verdict:
    """One verdict line as printed (``raw``), its ``normalised`` form, and the code cell (1-based) that printed it."""

    raw: str
    normalised: str
    cell: int


def verdict_lines(nb: Any) -> list[Verdict]:
    """Every verdict line in the outputs of ``nb``'s code cells, in order of appearance.

    Looks at stream text, ``text/plain`` and ``text/html`` (tags stripped). A rich output usually
    carries the same text twice (plain and HTML), so a line its HTML repeats from its plain text
    is counted once. Error outputs (tracebacks) are ignored.

    >>> import nbformat.v4 as v4
    >>> nb = v4.new_notebook(cells=[v4.new_code_cell(outputs=[
    ...     v4.new_output("stream", name="stdout", text="setup\\n  verdict: a is 2x slower\\n"),
    ...     v4.new_output("execute_result", data={"text/plain": "verdict: same", "text/html":
    ...                   "<p>verdict: <b>same</b><br>notes</p><p>verdict: undetermined</p>"})])])
    >>> [(v.raw, v.cell) for v in verdict_lines(nb)]
    [('verdict: a is 2x slower', 1), ('verdict: same', 1), ('verdict: undetermined', 1)]
    """
    found: list[Verdict] = []
    code_cell = 0
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        code_cell += 1
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                lines = _prefixed(_as_text(out.get("text", "")))
            elif kind in ("execute_result", "display_data", "update_display_data"):
                data = out.get("data", {})
                lines = _prefixed(_as_text(data.get("text/plain", "")))
                seen = [normalise(line) for line in lines]
                for line in _prefixed(_html_text(_as_text(data.get("text/html", "")))):
                    key = normalise(line)
                    if key in seen:
                        seen.remove(key)  # the plain text already gave this one
                    else:
                        lines.append(line)
            else:
                continue
            found += [Verdict(line, normalise(line), code_cell) for line in lines]
    return found


@dataclass
class Run:
    """One execution of a notebook: wall time, the verdicts it printed, and the error that stopped it ("" if none)."""

    seconds: float
    verdicts: list[Verdict] = field(default_factory=list)
    error: str = ""
    kernel_python: str = ""

    @property
    def ok(self) -> bool:
        """True when every cell ran without error."""
        return not self.error


@dataclass
class ChapterResult:
    """A notebook's runs and what they say together."""

    path: str
    runs: list[Run] = field(default_factory=list)

    @property
    def stable(self) -> bool:
        """True when every run finished and all printed the same normalised verdicts, in the same order."""
        if not self.runs or not all(run.ok for run in self.runs):
            return False
        first = [v.normalised for v in self.runs[0].verdicts]
        return all([v.normalised for v in run.verdicts] == first for run in self.runs[1:])

    def differing_positions(self) -> list[int]:
        """Indices (0-based) of verdict positions whose normalised text is not the same in every finished run.

        A run that printed fewer verdicts than another differs at every position it lacks.
        """
        done = [run for run in self.runs if run.ok]
        longest = max((len(run.verdicts) for run in done), default=0)
        texts = [[v.normalised for v in run.verdicts] + [""] * (longest - len(run.verdicts)) for run in done]
        return [i for i in range(longest) if len({t[i] for t in texts}) > 1]

    def as_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"path": self.path, "stable": self.stable,
                "runs": [{**asdict(run), "ok": run.ok} for run in self.runs]}


def find_chapters(names: Sequence[str], course: Path) -> list[Path]:
    """The notebooks ``names`` designate: a path to a notebook (or a folder of them), or a chapter prefix.

    A prefix is matched against the file names in ``course``; a one-digit number is zero-padded,
    so ``3`` and ``03`` both mean ``03_*.ipynb``. No names: every chapter in ``course``.
    Raises ``CliError`` for a name that matches nothing.
    """
    from ..cli import CliError

    if not names:
        found = sorted(course.glob("*.ipynb"))
        if not found:
            raise CliError(f"no notebooks in {course}; name a chapter's path")
        return found
    chapters: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_file():
            matches = [path]
        elif path.is_dir():
            matches = sorted(path.glob("*.ipynb"))
        else:
            prefix = name.zfill(2) if name.isdigit() else name
            matches = sorted(course.glob(f"{prefix}*.ipynb"))
        if not matches:
            known = ", ".join(p.stem for p in sorted(course.glob("*.ipynb"))) or "none"
            raise CliError(f"no chapter matches {name!r} (chapters in {course}: {known})")
        chapters += [m for m in matches if m not in chapters]
    return chapters


def _default_course() -> Path:
    """``course/`` in the working directory, else the one beside the package (a checkout)."""
    here = Path("course")
    return here if here.is_dir() else Path(__file__).resolve().parents[2] / "course"


class _HogKeeper:
    """N CPU-hog workers kept busy for a whole notebook run.

    ``cpu_hog`` workers stop by themselves after ``max_seconds`` (a safety net); a long notebook
    outlives that, so before each cell the keeper starts a fresh set if any worker has left.
    """

    def __init__(self, n_processes: int) -> None:
        self.n_processes = n_processes
        self._stack = ExitStack()
        self._hog: Any = None

    def __enter__(self) -> _HogKeeper:
        self.refresh()
        return self

    def refresh(self, **_hook: Any) -> None:
        """Start the workers, or restart them if any has exited."""
        from .load import MAX_SECONDS, cpu_hog

        if self._hog is not None and self._hog.alive() == self.n_processes:
            return
        self._stack.close()
        self._stack = ExitStack()
        self._hog = self._stack.enter_context(cpu_hog(self.n_processes, max_seconds=MAX_SECONDS * 10))

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def _rearming_output_widget() -> type:
    """nbclient's imitation of a front end's Output widget, fixed so it cannot strand a reply.

    While nbclient waits on the shell socket for a cell's ``execute_reply``, its imitation
    answers each output captured by an ``Output`` widget (``with out:``, ``interact``) with a
    ``comm_msg`` sent on that socket through a raw shadow of it (jupyter_client's
    ``Session.send``). The raw send can consume the socket's edge-triggered wake-up, so a reply
    that lands just then sits unread until the cell timeout and the run goes on with no error
    (jupyter/nbclient#312). Reading ``EVENTS`` through the asyncio socket after the send makes
    pyzmq look again and wake the waiting poll. The course's widgets no longer capture output
    (``edumatcher.widgets.figure_control``); this keeps any other capture from stalling a check.
    """
    import zmq
    from nbclient.output_widget import OutputWidget

    class RearmingOutputWidget(OutputWidget):
        def _publish_msg(self, *args: Any, **kwargs: Any) -> None:
            super()._publish_msg(*args, **kwargs)
            self.kernel_client.shell_channel.socket.get(zmq.EVENTS)

    return RearmingOutputWidget


def _first_line(source: str, width: int = 60) -> str:
    line = next((s.strip() for s in source.splitlines() if s.strip()), "")
    return line if len(line) <= width else line[: width - 3] + "..."


def run_notebook(path: Path, *, timeout: int = DEFAULT_TIMEOUT_S, hog: int = 0) -> Run:
    """Execute ``path`` once, top to bottom, in a fresh ``python3`` kernel (cwd: its folder).

    Stops at the first cell that raises or runs longer than ``timeout`` seconds, or when the kernel
    dies, and says so in ``Run.error``; the verdicts printed until then are kept. ``hog`` > 0
    keeps that many CPU-hog processes busy for the whole run.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    from ..grading.execute import describe_error
    from ..process_groups import signal_group

    nb = nbformat.read(str(path), as_version=4)
    code_index = {i: k for k, i in enumerate((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), 1)}
    current: dict[str, int] = {"cell": -1}
    keeper: _HogKeeper | None = _HogKeeper(hog) if hog else None

    def on_cell_start(cell: Any = None, cell_index: int = -1, **_: Any) -> None:
        current["cell"] = cell_index
        if keeper is not None:
            keeper.refresh()

    error = ""
    kernel_pid: int | None = None

    def on_notebook_start(**_: Any) -> None:  # called once the kernel is up
        nonlocal kernel_pid
        kernel_pid = getattr(getattr(client.km, "provisioner", None), "pid", None)

    client = NotebookClient(
        nb,
        kernel_name="python3",  # the course's kernel, whatever the notebook's metadata says
        timeout=timeout,
        interrupt_on_timeout=False,  # a timeout ends the run: CellTimeoutError
        allow_errors=False,
        record_timing=False,
        shutdown_kernel="immediate",
        on_notebook_start=on_notebook_start,
        on_cell_start=on_cell_start,
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    client.widget_registry["@jupyter-widgets/output"]["OutputModel"] = _rearming_output_widget()
    with keeper if keeper is not None else nullcontext():
        started = time.perf_counter()  # the notebook's time, kernel start included; not the hog's
        try:
            # The kernel's own fd-level output (start-up warnings, subprocesses) is not ours to print.
            client.execute(cwd=str(path.parent.resolve()), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except CellTimeoutError:
            error = f"timed out after {timeout} s"
        except CellExecutionError as exc:
            error = describe_error(exc.ename, exc.evalue, exc.traceback.splitlines() if exc.traceback else None)
        except DeadKernelError:
            error = "the kernel died"
        except Exception as exc:  # a kernel that would not start, a broken notebook: the run failed, say why
            error = describe_error(type(exc).__name__, str(exc))
        finally:
            signal_group(kernel_pid)  # the kernel leads its own group: this also ends what the notebook spawned
        seconds = time.perf_counter() - started
    if error and current["cell"] >= 0:
        cell = nb.cells[current["cell"]]
        error = f"cell {code_index.get(current['cell'], '?')} ({_first_line(cell.source)}): {error}"
    version = str(nb.metadata.get("language_info", {}).get("version", ""))
    return Run(seconds=seconds, verdicts=verdict_lines(nb), error=error, kernel_python=version)


def _run_line(number: int, total: int, run: Run) -> str:
    head = f"  run {number}/{total}: {run.seconds:.1f} s, {len(run.verdicts)} verdict{'s' * (len(run.verdicts) != 1)}"
    return head if run.ok else f"{head} before it FAILED: {run.error}"


def check_chapter(path: Path, *, runs: int = DEFAULT_RUNS, timeout: int = DEFAULT_TIMEOUT_S, hog: int = 0,
                  say: Callable[[str], None] = lambda _: None,
                  run: Callable[..., Run] = run_notebook) -> ChapterResult:
    """Run ``path`` ``runs`` times and gather the results; ``say`` receives a progress line after each run."""
    result = ChapterResult(str(path))
    for number in range(1, runs + 1):
        result.runs.append(run(path, timeout=timeout, hog=hog))
        say(_run_line(number, runs, result.runs[-1]))
    return result


def format_chapter(result: ChapterResult) -> list[str]:
    """The verdict of the check on one chapter: stable, or where the runs disagree (normalised and raw).

    Failed runs are named (their errors are on their run lines); the verdicts are compared across
    the runs that finished.
    """
    runs = result.runs
    done = [(number, run) for number, run in enumerate(runs, 1) if run.ok]
    counts = [len(run.verdicts) for _, run in done]
    if result.stable:
        if not counts[0]:
            return [f"  stable, trivially: none of the {len(runs)} runs printed a verdict line"]
        return [f"  stable: all {len(runs)} runs printed the same {counts[0]} verdicts"]
    failed = [str(number) for number, run in enumerate(runs, 1) if not run.ok]
    if failed:
        lines = [f"  UNSTABLE: {len(failed)} of {len(runs)} runs failed (run {', '.join(failed)}; errors above)"]
    else:
        lines = ["  UNSTABLE: the runs printed different verdicts"]
    if len(set(counts)) > 1:
        lines.append("    verdicts per finished run differ: "
                     + ", ".join(f"run {number}: {len(run.verdicts)}" for number, run in done))
    for i in result.differing_positions() if done else []:
        lines.append(f"    verdict {i + 1} differs:")
        for number, run in done:
            if i < len(run.verdicts):
                v = run.verdicts[i]
                lines.append(f"      run {number} (cell {v.cell}): {v.normalised}")
                if v.raw != v.normalised:
                    lines.append(f"        raw: {v.raw}")
            else:
                lines.append(f"      run {number}: (no verdict {i + 1})")
    return lines


def check(paths: Iterable[Path], *, runs: int, timeout: int, hog: int,
          say: Callable[[str], None]) -> list[ChapterResult]:
    """Check every chapter in ``paths``, reporting through ``say``; returns the results."""
    results = []
    for path in paths:
        say(f"{path}: {runs} run{'s' * (runs != 1)}")
        result = check_chapter(path, runs=runs, timeout=timeout, hog=hog, say=say)
        for line in format_chapter(result):
            say(line)
        results.append(result)
    return results


def add_parser(sub: Any) -> None:
    """Register ``check-verdicts``."""
    p = sub.add_parser(
        "check-verdicts",
        help="run chapters several times and check they print the same verdict lines",
        description=("Execute each chapter --runs times in a fresh kernel and compare the lines starting with "
                     "'verdict:' that it prints, every number replaced by '#'. Exit code 0 when every chapter "
                     "gave the same verdicts in every run, 1 otherwise. "
                     "Example: python -m edumatcher check-verdicts 03 07 --runs 3 --hog 2"),
    )
    p.add_argument("chapters", nargs="*", metavar="CHAPTER",
                   help="a notebook path or a chapter number/prefix such as 03 (default: every chapter in course/)")
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS, help=f"runs per chapter (default {DEFAULT_RUNS})")
    p.add_argument("--hog", type=int, default=0, metavar="N",
                   help="keep N CPU-hog processes busy beside each run (default 0: none)")
    p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"per-cell timeout in seconds; a cell that overruns fails its run (default {DEFAULT_TIMEOUT_S})")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the raw results to FILE")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from ..cli import CliError
    from .load import MAX_PROCESSES

    if args.runs < 1:
        raise CliError(f"--runs must be at least 1, got {args.runs}")
    if args.timeout < 1:
        raise CliError(f"--timeout must be at least 1 second, got {args.timeout}")
    if not 0 <= args.hog <= MAX_PROCESSES:
        raise CliError(f"--hog must be from 0 to {MAX_PROCESSES}, got {args.hog}")
    paths = find_chapters(args.chapters, _default_course())

    def say(line: str) -> None:
        print(line, flush=True)

    say(f"check-verdicts: {len(paths)} notebook{'s' * (len(paths) != 1)}, {args.runs} run{'s' * (args.runs != 1)} each, "
        f"kernel python3, per-cell timeout {args.timeout} s, "
        f"{f'{args.hog} CPU-hog process' + 'es' * (args.hog != 1) if args.hog else 'no CPU hog'}; "
        f"driver {sys.implementation.name} {sys.version.split()[0]}")
    results = check(paths, runs=args.runs, timeout=args.timeout, hog=args.hog, say=say)
    unstable = [r.path for r in results if not r.stable]
    if args.json is not None:
        payload = {"runs": args.runs, "hog": args.hog, "timeout": args.timeout, "driver_python": sys.version,
                   "chapters": [r.as_dict() for r in results]}
        args.json.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    kernels = sorted({run.kernel_python for r in results for run in r.runs if run.kernel_python})
    say(f"summary: {len(results) - len(unstable)} of {len(results)} stable"
        + (f" (kernel Python {', '.join(kernels)})" if kernels else ""))
    for path in unstable:
        say(f"  unstable: {path}")
    return 1 if unstable else 0
