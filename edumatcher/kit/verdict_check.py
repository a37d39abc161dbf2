"""Verdict records, and the ``check-verdicts`` subcommand that holds a chapter to them over many runs.

A chapter's conclusions about measurements are *verdicts*: lines that start with ``verdict:``,
each one conclusion, conclusion first. What must come out the same on every run, on a busy
machine too, is not the line's numbers but its **record**: which comparison, which category
(slower / faster / same / too close to call, or a claim's own word), which direction.

* A verdict made by the kit carries its record. ``Comparison`` (``edumatcher.kit``) and
  ``Claim`` (``claim()``, for conclusions that are not a timing comparison: exact counts, a
  trend) put it in their rich output as ``RECORD_MIME`` beside the text a reader sees, and the
  text itself is worded from the record, so the two cannot disagree.
* A ``verdict:`` line printed as text (``print(c.verdict)``) is read back by ``record_of``: the
  kit's phrases ("2.3x slower than", "faster than", "as fast as", "too close to call") give the
  category. A line with none of them is *free text*: it is compared word for word with its
  numbers masked, and the report says its direction, if numbers carry one, is not checked.

``check-verdicts`` executes each notebook ``runs`` times, each in a fresh ``python3`` kernel whose
cwd is the notebook's folder (optionally with CPU-hog processes beside it,
``edumatcher.kit.load.cpu_hog``), collects the records in order of appearance and compares them
position by position: for each verdict, how many runs gave a different record from the most
common one (its flip count). ``DEFAULT_RUNS`` (29) is enough to see a verdict that flips in
10 % of runs with 95 % probability. A run that fails (a cell raises, times out, or the kernel
dies) makes its chapter unstable, as does a different number of verdicts. Example::

    python -m edumatcher check-verdicts 03 07 --runs 5 --hog 1 --json verdicts.json

>>> record_of("verdict: orjson encodes 14.3x faster than json").category
'faster'
>>> print(claim("rebuilds thin out", "yes", "rebuilds thin out as the book grows"))
verdict: rebuilds thin out as the book grows
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
    "DEFAULT_RUNS", "DEFAULT_TIMEOUT_S", "PREFIX", "RECORD_MIME", "MEAN_NOTE", "VerdictRecord", "Claim", "claim", "record_of",
    "Verdict", "Run", "ChapterResult", "normalise", "verdict_lines", "find_chapters", "run_notebook",
    "check_chapter", "check", "format_chapter", "add_parser",
]

DEFAULT_RUNS = 29
"""Runs per chapter: a verdict that flips in 10 % of runs shows at least one flip in 29 runs with
probability 1 - 0.9**29 - 0.1**29 = 95.3 % (22 runs: 90 %; 5 runs: 41 %)."""
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


RECORD_MIME = "application/vnd.edumatcher.verdict+json"
"""The MIME type of the verdict records a kit object puts in its rich output (a JSON list of records)."""

_PHRASES = (
    (re.compile(r"\d[\d,.]*x slower than\b"), "slower"),
    (re.compile(r"\d[\d,.]*x faster than\b"), "faster"),
    (re.compile(r"\btoo close to call\b"), "too close to call"),
    (re.compile(r"\bas fast as\b"), "same"),
    # the kit's wording before issue 21, still printed by older chapters
    (re.compile(r"\btake the same time\b"), "same"),
    (re.compile(r"\bno difference detectable\b"), "too close to call"),
)


@dataclass(frozen=True)
class VerdictRecord:
    """What a verdict says, as data: the comparison it judges, its category and its direction.

    ``category`` is one of the comparison categories (slower, faster, same, too close to call)
    or a claim's own word; "" for free text. ``direction`` reads like "json > orjson" (json
    costs more; "=" same, "?" too close to call). ``processes``: how many processes the
    evidence came from (1 for an in-process comparison, 0 when unknown: a record read back
    from printed text). ``line``: the text a reader sees.
    Two runs agree on a verdict when ``key`` is equal; ``line`` and ``processes`` may differ.
    """

    comparison: str
    category: str
    direction: str = ""
    processes: int = 1
    line: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What must not change between runs."""
        return (self.comparison, self.category, self.direction)

    def fixed_form(self) -> str:
        """The record in one fixed form: ``comparison · category · direction``.

        >>> VerdictRecord("encode", "faster", "orjson < json").fixed_form()
        'encode · faster · orjson < json'
        """
        return " · ".join(part for part in (self.comparison, self.category or "free text", self.direction) if part)

    def as_dict(self) -> dict[str, Any]:
        """Plain data (JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerdictRecord:
        """The record ``as_dict`` wrote (unknown keys ignored)."""
        return cls(str(data.get("comparison", "")), str(data.get("category", "")), str(data.get("direction", "")),
                   int(data.get("processes", 1)), str(data.get("line", "")))


MEAN_NOTE = " (mean cost: the collector's pauses included)"
"""What a comparison's line adds when it judged the mean: how it was judged, not what it found.

Whether the collector ran inside a window can differ between runs; the verdict's category
and direction must not, so ``record_of`` leaves the note out of the record.
"""


def record_of(line: str) -> VerdictRecord:
    """The record a printed verdict line carries: its category from the kit's phrases, or free text.

    ``comparison`` is the line with its numbers masked (``normalise``) and each category phrase
    replaced by ``<category>``; a line with no phrase is free text (category "").

    >>> r = record_of("verdict: at 1,000 resting orders, factor 1 is 1.21x slower than factor 2")
    >>> r.category, r.comparison
    ('slower', 'verdict: at # resting orders, factor # is <slower> factor #')
    >>> record_of("verdict: 12 orders matched").fixed_form()
    'verdict: # orders matched · free text'
    >>> record_of("verdict: a is 3.0x slower than b" + MEAN_NOTE).key == record_of("verdict: a is 3.1x slower than b").key
    True
    """
    text = line.strip().replace(MEAN_NOTE, "")
    found: list[str] = []
    for pattern, category in _PHRASES:
        if pattern.search(text):
            found.append(category)
            text = pattern.sub(f"<{category}>", text)
    return VerdictRecord(normalise(text), "+".join(found), processes=0, line=line.strip())


@dataclass(frozen=True)
class Claim:
    """A verdict that is not a timing comparison (exact counts, a trend, a memory figure), with its record.

    Made by ``claim``; shown as ``verdict: <line>``, and carries ``record`` in its rich output.
    """

    record: VerdictRecord

    def __str__(self) -> str:
        return f"verdict: {self.record.line}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return f"<p>verdict: <b>{html.escape(self.record.line)}</b></p>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": str(self), "text/html": self._repr_html_(), RECORD_MIME: [self.record.as_dict()]}


def claim(comparison: str, category: str, line: str, *, direction: str = "", processes: int = 1) -> Claim:
    """A verdict on something other than a timing comparison: ``category`` is the word a rerun must keep.

    ``comparison`` names what is judged; ``line`` is what the reader reads (one conclusion,
    conclusion first, one line, at most 160 characters with its "verdict: " prefix, as
    printed; a ValueError otherwise: supporting figures go in a line of their own). Let the category come from data that a rerun
    reproduces (exact counts, an interval's side), never from two numbers compared bare.

    >>> c = claim("peak entries vs compact_factor", "rise", "as compact_factor grows, peak heap entries rise")
    >>> c.record.fixed_form()
    'peak entries vs compact_factor · rise'
    """
    if not category:
        raise ValueError("a claim needs a category: the word a rerun must keep")
    shown = f"{PREFIX} {line}"
    if "\n" in line or len(shown) > 160:  # issue 21: a verdict line is one paragraph of 160 characters at most
        raise ValueError(f"a verdict line is one line of at most 160 characters with its prefix; this one has {len(shown)}")
    return Claim(VerdictRecord(comparison, category, direction, processes, line))


def _html_text(markup: str) -> str:
    """The text of an HTML fragment, one line per rendered line."""
    return html.unescape(_TAG.sub("", _LINE_BREAK_TAGS.sub("\n", markup)))


def _as_text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _prefixed(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.lstrip().startswith(PREFIX)]


@dataclass(frozen=True)
class Verdict:
    """One verdict as a run showed it: the line (``raw``), its ``normalised`` form, the code cell (1-based), its record.

    ``record`` comes from the output's ``RECORD_MIME`` data when the kit made the verdict, else
    from the line (``record_of``).
    """

    raw: str
    normalised: str
    cell: int
    record: VerdictRecord | None = None

    def __post_init__(self) -> None:
        if self.record is None:
            object.__setattr__(self, "record", record_of(self.raw))

    @property
    def key(self) -> tuple[str, str, str]:
        """What two runs must agree on (``VerdictRecord.key``)."""
        assert self.record is not None
        return self.record.key


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
                if RECORD_MIME in data:  # the kit's own records: exact, and the text would repeat them
                    records = data[RECORD_MIME]
                    records = json.loads(records) if isinstance(records, str) else records
                    for item in records:
                        record = VerdictRecord.from_dict(item)
                        line = f"{PREFIX} {record.line}"
                        found.append(Verdict(line, normalise(line), code_cell, record))
                    continue
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
class Tally:
    """One verdict position over the finished runs: the most common record, and the runs that said otherwise."""

    position: int
    usual: VerdictRecord | None
    agreeing: int
    differing: list[tuple[int, Verdict | None]]  # (run number, what it showed; None: no verdict there)

    @property
    def flips(self) -> int:
        """How many runs differ from the most common record (a missing verdict counts)."""
        return len(self.differing)


@dataclass
class ChapterResult:
    """A notebook's runs and what they say together."""

    path: str
    runs: list[Run] = field(default_factory=list)

    @property
    def stable(self) -> bool:
        """True when every run finished and all gave the same records, in the same order."""
        if not self.runs or not all(run.ok for run in self.runs):
            return False
        return not any(t.flips for t in self.tallies())

    def tallies(self) -> list[Tally]:
        """Per verdict position, over the finished runs: the most common record and the runs that differ from it."""
        done = [(number, run) for number, run in enumerate(self.runs, 1) if run.ok]
        longest = max((len(run.verdicts) for _, run in done), default=0)
        out = []
        for i in range(longest):
            shown = [(number, run.verdicts[i] if i < len(run.verdicts) else None) for number, run in done]
            keys = [v.key if v is not None else None for _, v in shown]
            counts: dict[Any, int] = {}
            for k in keys:
                counts[k] = counts.get(k, 0) + 1
            usual_key = max(counts, key=lambda k: (k is not None, counts[k]))  # first seen wins a tie
            usual = next(v.record for _, v in shown if v is not None and v.key == usual_key) if usual_key else None
            differing = [(number, v) for number, v in shown if (v.key if v is not None else None) != usual_key]
            out.append(Tally(i, usual, counts[usual_key], differing))
        return out

    def differing_positions(self) -> list[int]:
        """Indices (0-based) of verdict positions whose record is not the same in every finished run.

        A run that printed fewer verdicts than another differs at every position it lacks.
        """
        return [t.position for t in self.tallies() if t.flips]

    def as_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``: runs, their verdicts with records, and each position's flip count."""
        return {"path": self.path, "stable": self.stable,
                "flips": [{"verdict": t.position + 1, "record": t.usual.as_dict() if t.usual else None,
                           "flips": t.flips} for t in self.tallies()],
                "runs": [{**asdict(run), "ok": run.ok} for run in self.runs]}


def find_chapters(names: Sequence[str], course: Path) -> list[Path]:
    """The notebooks ``names`` designate: a path to a notebook (or a folder of them), or a chapter prefix.

    A prefix is matched against the file names in ``course``; a one-digit number is zero-padded,
    so ``3`` and ``03`` both mean ``03_*.ipynb``. No names: every chapter in ``course``.
    Raises ``CliError`` for a name that matches nothing.
    """
    from edumatcher import CliError

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
    (``edumatcher.kit.figure_control``); this keeps any other capture from stalling a check.
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

    from ..grading.check_messages import describe_error
    from ..grading.process_groups import signal_group

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
    """The check's report on one chapter: each verdict's record in fixed form with its flip count.

    Failed runs are named (their errors are on their run lines); records are compared across
    the runs that finished. A differing verdict lists every run that differs, with its line.
    """
    runs = result.runs
    done = [(number, run) for number, run in enumerate(runs, 1) if run.ok]
    counts = [len(run.verdicts) for _, run in done]
    tallies = result.tallies() if done else []
    flipped = [t for t in tallies if t.flips]
    failed = [str(number) for number, run in enumerate(runs, 1) if not run.ok]
    if result.stable:
        if not counts[0]:
            return [f"  stable, trivially: none of the {len(runs)} runs printed a verdict line"]
        lines = [f"  stable: all {len(runs)} runs gave the same {counts[0]} verdicts"]
    elif failed:
        lines = [f"  UNSTABLE: {len(failed)} of {len(runs)} runs failed (run {', '.join(failed)}; errors above)"]
    else:
        lines = [f"  UNSTABLE: {len(flipped)} of {len(tallies)} verdicts flipped in {len(done)} runs"]
    if len(set(counts)) > 1:
        lines.append("    verdicts per finished run differ: "
                     + ", ".join(f"run {number}: {len(run.verdicts)}" for number, run in done))
    for t in tallies:
        fixed = t.usual.fixed_form() if t.usual else "(no verdict)"
        note = ""
        if t.usual is not None and not t.usual.category:
            note = " [free text: compared word for word; a direction its numbers carry is not checked]"
        elif t.usual is not None and t.usual.processes == 1 and t.usual.category in _COMPARISON_CATEGORIES:
            note = " [one process]"
        if not t.flips:
            lines.append(f"    verdict {t.position + 1}: {fixed}, {t.agreeing} of {len(done)} runs{note}")
            continue
        lines.append(f"    verdict {t.position + 1} differs: {fixed} in {t.agreeing} of {len(done)} runs, "
                     f"FLIPPED in {t.flips}{note}")
        for number, v in t.differing:
            if v is None:
                lines.append(f"      run {number}: (no verdict {t.position + 1})")
            else:
                assert v.record is not None
                lines.append(f"      run {number} (cell {v.cell}): {v.record.fixed_form()}")
                lines.append(f"        raw: {v.raw}")
    return lines


_COMPARISON_CATEGORIES = frozenset({"slower", "faster", "same", "too close to call"})


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
                     "'verdict:' that it shows as records (comparison, category, direction) and report each verdict's "
                     "flip count. Exit code 0 when every chapter gave the same records in every run, 1 otherwise. "
                     "Example: python -m edumatcher check-verdicts 03 07 --runs 5 --hog 1"),
    )
    p.add_argument("chapters", nargs="*", metavar="CHAPTER",
                   help="a notebook path or a chapter number/prefix such as 03 (default: every chapter in course/)")
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS, help=f"runs per chapter (default {DEFAULT_RUNS}: a verdict that flips in 10 %% of runs "
                        "shows a flip with 95 %% probability)")
    p.add_argument("--hog", type=int, default=0, metavar="N",
                   help="keep N CPU-hog processes busy beside each run (default 0: none)")
    p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"per-cell timeout in seconds; a cell that overruns fails its run (default {DEFAULT_TIMEOUT_S})")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the raw results to FILE")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from edumatcher import CliError

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
