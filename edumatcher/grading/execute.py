"""Execute a restored notebook cell by cell in a fresh ``python3`` kernel and report each outcome.

One cell's failure never stops the next: errors are allowed, a cell that overruns its timeout is
interrupted and the run goes on. The run stops early only when the kernel dies, or when it is still
busy after an interrupt (code that swallows ``KeyboardInterrupt``); the caller decides what that
means for the cells that did not run. Outputs are capped per cell and per notebook (display
updates and display metadata included), so a print or display loop cannot fill memory or the
stored notebook; comm messages (widget state) are not kept at all. A check may have a twin
(``decoys``): both run here, the same way, in the order given, and only the real one's outputs are
stored. Where the kernel runs (bubblewrap, resource limits) is ``sandbox``'s business.
"""

from __future__ import annotations

import contextlib
import copy
import subprocess
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from queue import Empty
from time import monotonic
from typing import Any

from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionComplete, DeadKernelError
from nbformat import NotebookNode
from nbformat.v4 import new_output

from .check_messages import describe_error
from .guarded_checks import CheckGuard
from .process_groups import signal_group
from .sandbox import sandboxed_kernel_manager

__all__ = ["CellOutcome", "Twin", "run_cells", "describe_error", "DEFAULT_MAX_OUTPUT_CHARS",
           "DEFAULT_MAX_TOTAL_OUTPUT_CHARS"]

DEFAULT_MAX_OUTPUT_CHARS = 20_000
# Every output of one notebook together (nbformat JSON grows a little beyond this with escaping).
DEFAULT_MAX_TOTAL_OUTPUT_CHARS = 2_000_000
# After an interrupt, how long a healthy kernel needs to answer an empty request.
_RESPONSIVE_WITHIN_S = 5.0
# Display metadata nested deeper than this is counted as over every cap (it is never worth storing).
_MAX_DEPTH = 64


@dataclass(frozen=True)
class CellOutcome:
    """How one code cell ended: ``ok``, ``error``, ``timeout``, ``dead`` (kernel died) or ``skipped``.

    For an exception raised in the kernel, ``ename`` is its class name and ``traceback`` the kernel's:
    both are the student's to shape, for the caller to read a line number from (``check_messages``).
    """

    index: int
    status: str
    message: str = ""
    traceback: tuple[str, ...] = ()
    ename: str = ""


@dataclass(frozen=True)
class Twin:
    """A check's decoy (``decoys.Decoy.source``) and whether it runs before the real check."""

    source: str
    first: bool


def _output_size(out: NotebookNode) -> int:
    if out.get("output_type") == "stream":
        return _json_size(out.get("text", ""))
    if out.get("output_type") == "error":
        return _json_size([out.get("ename", ""), out.get("evalue", ""), out.get("traceback", [])])
    return _json_size(out.get("data", {})) + _json_size(out.get("metadata", {}))


def _display_size(content: Any) -> int:
    """Characters a display message would store: its data and its metadata."""
    if not isinstance(content, dict):
        return 0
    return _json_size(content.get("data", {})) + _json_size(content.get("metadata", {}))


def _json_size(value: Any) -> int:
    """About how many characters ``value`` takes as JSON, without recursion; anything nested deeper than
    ``_MAX_DEPTH`` counts as too big to keep. O(size of value)."""
    total, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > _MAX_DEPTH:
            return 1 << 62
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2
            for key, child in item.items():
                total += len(str(key)) + 4
                stack.append((child, depth + 1))
        elif isinstance(item, (list, tuple)):
            total += 2
            stack.extend((child, depth + 1) for child in item)
        else:
            total += len(repr(item)) if isinstance(item, (int, float, bool)) or item is None else 16
    return total


def _with_note(msg: dict[str, Any], note: str) -> dict[str, Any]:
    """A copy of a display message whose data is replaced by ``note``."""
    content = {**msg.get("content", {}), "data": {"text/plain": note}, "metadata": {}}
    return {**msg, "content": content}


class _GradingClient(NotebookClient):
    """``NotebookClient`` that caps stored output per cell and per notebook, and remembers timeouts.

    The per-notebook cap also covers outputs replaced through a ``display_id`` (``update_display_data``
    or a second ``display(..., display_id=)``), which nbclient writes without calling ``output``:
    any output that would pass either cap is stored as a one-line note instead. Display metadata
    counts as much as data. Comm messages (widgets) are ignored: no widget state is kept, so none
    can grow, and a malformed one cannot break the run; a malformed message of any kind is dropped.
    """

    def __init__(self, nb: NotebookNode, max_output_chars: int, max_total_output_chars: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(nb, **kwargs)
        self.max_output_chars = max_output_chars
        self.max_total_output_chars = max_total_output_chars or DEFAULT_MAX_TOTAL_OUTPUT_CHARS
        self.timed_out = False
        self._used: dict[int, int] = {}
        self._truncated: set[int] = set()
        self._total = 0  # characters of output stored in the notebook, kept in step with every change
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []  # saved outputs are the student's, not this run's, and not counted

    def _recount(self) -> None:
        self._total = sum(_output_size(out) for cell in self.nb.cells for out in cell.get("outputs", ()))

    def handle_comm_msg(self, outs: list[NotebookNode], msg: dict[str, Any], cell_index: int) -> None:
        """Ignore comm messages: graded notebooks keep no widget state (``guarded_checks`` reads its own)."""
        return None

    def process_message(self, msg: dict[str, Any], cell: NotebookNode, cell_index: int) -> NotebookNode | None:
        """nbclient's handling, for messages shaped as the protocol says; others (student-made) are dropped."""
        content = msg.get("content")
        if not isinstance(content, dict) or not isinstance(msg.get("msg_type"), str):
            return None
        if msg["msg_type"] in ("display_data", "execute_result", "update_display_data") and not (
                isinstance(content.get("data"), dict) and isinstance(content.get("metadata", {}), dict)):
            return None
        try:
            return super().process_message(msg, cell, cell_index)
        except CellExecutionComplete:
            raise
        except (KeyError, TypeError, AttributeError, ValueError, IndexError):
            return None  # a message that only looked well formed

    def clear_output(self, outs: list[NotebookNode], msg: dict[str, Any], cell_index: int) -> None:
        super().clear_output(outs, msg, cell_index)
        self._recount()

    def _update_display_id(self, display_id: str, msg: dict[str, Any]) -> None:
        # An update replaces earlier outputs in place: allowed only while both caps still hold.
        places = [(cell, i) for cell, indices in self._display_id_map.get(display_id, {}).items() for i in indices
                  if i < len(self.nb.cells[cell].get("outputs", ()))]
        replaced = sum(_output_size(self.nb.cells[cell].outputs[i]) for cell, i in places)
        size = _display_size(msg.get("content", {}))
        if size > self.max_output_chars or self._total - replaced + len(places) * size > self.max_total_output_chars:
            msg = _with_note(msg, f"[grader: display update of {size:,} characters dropped: output cap reached]")
        # Only places that still exist (a twin's outputs are forgotten after it runs: ``forget_twin``).
        self._display_id_map[display_id] = {cell: [i for c, i in places if c == cell] for cell in
                                            {c for c, _ in places}}
        super()._update_display_id(display_id, msg)
        self._recount()

    def forget_twin(self, cell_index: int, used_before: int) -> None:
        """After a check's twin ran in place of the real cell: drop what it showed from every count."""
        self.clear_display_id_mapping(cell_index)
        self._used[cell_index] = used_before
        self.clear_before_next_output = False
        self._recount()

    def output(self, outs: list[NotebookNode], msg: dict[str, Any], display_id: str | None,
               cell_index: int) -> NotebookNode | None:
        used = self._used.get(cell_index, 0)
        full = used >= self.max_output_chars or self._total >= self.max_total_output_chars
        if msg.get("msg_type") in ("display_data", "execute_result"):
            size = _display_size(msg.get("content", {}))
            if used + size > self.max_output_chars or self._total + size > self.max_total_output_chars:
                if full and not display_id:
                    self._note_truncation(outs, cell_index)
                    return None  # dropped: nothing more is kept for this cell
                # Kept as a one-line note, so a display_id keeps the place its later updates refer to.
                msg = _with_note(msg, f"[grader: display output of {size:,} characters dropped: output cap reached]")
        elif full:
            self._note_truncation(outs, cell_index)
            return None
        clearing = getattr(self, "clear_before_next_output", False)
        out = super().output(outs, msg, display_id, cell_index)
        if clearing:
            self._recount()  # nbclient ran a delayed clear_output just now
        if out is None:
            return None
        size = _output_size(out)
        self._used[cell_index] = used + size
        room = max(min(self.max_output_chars - used, self.max_total_output_chars - self._total), 0)
        if size > room:
            if out.get("output_type") == "stream":
                out["text"] = out["text"][:room]
                size = room
            elif not display_id and outs and outs[-1] is out:
                outs.pop()
                size = 0
            self._note_truncation(outs, cell_index)
        self._total += size
        return out

    def _note_truncation(self, outs: list[NotebookNode], cell_index: int) -> None:
        if cell_index not in self._truncated:
            self._truncated.add(cell_index)
            outs.append(new_output("stream", name="stderr",
                                   text=f"\n[grader: output truncated after {self.max_output_chars:,} characters]\n"))

    async def _async_handle_timeout(self, timeout: int, cell: NotebookNode | None = None) -> Any:
        # Noted before nbclient interrupts the kernel and substitutes an error reply.
        self.timed_out = True
        return await super()._async_handle_timeout(timeout, cell)

    async def kernel_responds(self, within: float) -> bool:
        """Send an empty, silent request; True if the kernel answers within ``within`` seconds."""
        assert self.kc is not None
        msg_id = self.kc.execute("", silent=True, store_history=False)
        deadline = monotonic() + within
        while (left := deadline - monotonic()) > 0:
            try:
                reply = await self.kc.get_shell_msg(timeout=left)
            except Empty:
                return False
            parent = reply.get("parent_header")
            if isinstance(parent, dict) and parent.get("msg_id") == msg_id:
                return True
        return False


async def run_cells(
    nb: NotebookNode,
    *,
    cwd: str,
    cell_timeout: int,
    on_outcome: Callable[[CellOutcome], None],
    on_kernel_started: Callable[[int], None] | None = None,
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    startup_timeout: int = 60,
    sandbox: dict[str, Any] | None = None,
    max_total_output_chars: int | None = None,
    checks: Collection[int] = (),
    decoys: Mapping[int, Twin] | None = None,
    on_decoy: Callable[[int, bool], None] | None = None,
) -> CellOutcome | None:
    """Run every code cell of ``nb`` in order in a new ``python3`` kernel whose cwd is ``cwd``.

    ``on_outcome`` is called after each code cell (so results survive if the caller is killed later).
    Returns None when every cell ran, else the outcome that stopped the run: status ``dead``, or
    ``timeout`` for a cell that was still busy after an interrupt. Outputs are stored in ``nb``.
    The kernel and every process in its group are killed on the way out.

    ``sandbox`` (from ``sandbox.sandbox_spec``; None: a plain kernel with no limits) says where the
    kernel runs: inside bubblewrap with resource limits, or with the limits only.
    ``max_total_output_chars`` caps the outputs of the whole notebook (display updates included).
    ``checks`` are the indices of check cells: before each, the kernel's execution machinery is reset,
    and its outcome is ``ok`` only if the grader's own channel confirms it ran (``guarded_checks``).
    ``decoys`` maps a check's index to its twin, run just before or after it in exactly the same way;
    ``on_decoy(index, passed)`` hears how each twin ended (its outputs are not kept). A twin that
    kills the kernel or ignores the interrupt stops the run as the check itself would have.
    """
    replies: list[dict[str, Any]] = []
    decoys = decoys or {}

    def keep_reply(**hook: Any) -> None:
        replies.append(hook.get("execute_reply") or {})

    launch = contextlib.ExitStack()  # the sandboxed kernel's socket folder, removed on the way out
    km = launch.enter_context(sandboxed_kernel_manager(sandbox, cwd=cwd)) if sandbox else None
    client = _GradingClient(
        nb,
        max_output_chars,
        max_total_output_chars,
        km=km,
        kernel_name="python3",  # never the notebook's own kernelspec, which the student controls
        timeout=cell_timeout,
        interrupt_on_timeout=True,
        error_on_timeout={"ename": "TimeoutError", "evalue": f"cell did not finish within {cell_timeout} s",
                          "traceback": []},
        allow_errors=True,
        record_timing=False,
        startup_timeout=startup_timeout,
        # How long to wait, after a cell's reply, for the rest of its IOPub messages (its outputs and
        # the guard's witness, which a check needs to pass): generous, since only a slow, loaded
        # machine ever waits this long, and a witness missed there would fail an honest check.
        iopub_timeout=10,
        shutdown_kernel="immediate",
        skip_cells_with_tag="edumatcher-grader-never-skips",  # students must not be able to skip checks
        store_widget_state=False,
        on_cell_executed=keep_reply,
        resources={"metadata": {"path": cwd}},
    )
    kernel_pid: int | None = None

    async def run(cell: NotebookNode, index: int, guard: CheckGuard | None) -> tuple[CellOutcome, CellOutcome | None]:
        """Run one cell (a check through ``guard``); return its outcome and, if the run must stop, why."""
        client.timed_out = False
        replies.clear()
        source = cell.source
        if guard is not None:
            reset = await guard.reset()
            cell.source, token = guard.prepare(source)
        try:
            await client.async_execute_cell(cell, index)
        except DeadKernelError:
            outcome = CellOutcome(index, "dead", "the kernel died while running this cell")
            return outcome, outcome
        finally:
            cell.source = source  # the stored notebook shows the check as written
        if client.timed_out:
            outcome = CellOutcome(index, "timeout", f"timed out after {cell_timeout} s")
            if not await client.kernel_responds(_RESPONSIVE_WITHIN_S):
                return outcome, CellOutcome(index, "timeout", f"timed out after {cell_timeout} s and ignored "
                                                              "the interrupt, so the rest could not run")
            return outcome, None
        outcome = _outcome_from_reply(index, replies[-1] if replies else None)
        if guard is not None and outcome.status == "ok":
            failure = guard.failure(cell, token, reset)
            if failure is not None:  # the grader's words, or the error output the cell shows
                outcome = CellOutcome(index, "error", failure.message, failure.traceback, failure.ename)
        return outcome, None

    async def run_twin(cell: NotebookNode, index: int, twin: Twin,
                       guard: CheckGuard) -> tuple[CellOutcome, CellOutcome | None]:
        """Run a check's twin in the check's place and report it; return its outcome and why the run must
        stop, if it must (then it is not reported: it ended as the check itself would have)."""
        stand_in = copy.deepcopy(cell)
        stand_in.source, stand_in.outputs = twin.source, []
        used_before = client._used.get(index, 0)
        nb.cells[index] = stand_in
        try:
            outcome, stop = await run(stand_in, index, guard)
        finally:
            nb.cells[index] = cell
            client.forget_twin(index, used_before)
        if stop is None and on_decoy is not None:
            on_decoy(index, outcome.status == "ok")
        return outcome, stop

    try:
        # The kernel's own stdout/stderr (fd level: subprocesses, os.write, start-up warnings) go nowhere:
        # what a cell prints through Python arrives as capped outputs, and nothing can fill a log file.
        async with client.async_setup_kernel(cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             cleanup_kc=True):  # also shut down a kernel manager we made
            kernel_pid = getattr(getattr(client.km, "provisioner", None), "pid", None)
            if kernel_pid is not None and on_kernel_started is not None:
                on_kernel_started(kernel_pid)
            seal = getattr(client.km, "seal", None)
            if seal is not None:
                seal()  # the kernel has made its sockets: it may write no more host files
            guard = CheckGuard(client, within=max(cell_timeout, _RESPONSIVE_WITHIN_S)) if checks else None
            if guard is not None:
                await guard.install()  # before any student code runs
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                guarded = guard if guard is not None and index in checks and cell.source.strip() else None
                twin = decoys.get(index) if guarded is not None else None
                if twin is not None and twin.first:
                    outcome, stop = await run_twin(cell, index, twin, guarded)
                    if stop is not None:
                        on_outcome(outcome)  # the check never runs: this is what it would have shown
                        return stop
                outcome, stop = await run(cell, index, guarded)
                on_outcome(outcome)
                if stop is not None:
                    return stop
                if twin is not None and not twin.first and outcome.status != "timeout":
                    _, stop = await run_twin(cell, index, twin, guarded)
                    if stop is not None:
                        return stop
            return None
    finally:
        signal_group(kernel_pid)  # the kernel leads its own group: this also catches what student code spawned
        launch.close()


def _outcome_from_reply(index: int, reply: dict[str, Any] | None) -> CellOutcome:
    if not reply:
        return CellOutcome(index, "skipped", "the cell did not run (empty cell)")
    content = reply.get("content")
    content = content if isinstance(content, dict) else {}
    if content.get("status") == "ok":
        return CellOutcome(index, "ok")
    traceback = content.get("traceback")
    traceback = tuple(str(line) for line in traceback[:200]) if isinstance(traceback, list) else ()
    ename = str(content.get("ename", "Error"))
    return CellOutcome(index, "error", describe_error(ename, str(content.get("evalue", "")), list(traceback)),
                       traceback, ename)


