"""Execute a restored notebook cell by cell in a fresh ``python3`` kernel and report each outcome.

One cell's failure never stops the next: errors are allowed, a cell that overruns its timeout is
interrupted and the run goes on. The run stops early only when the kernel dies, or when it is still
busy after an interrupt (code that swallows ``KeyboardInterrupt``); the caller decides what that
means for the cells that did not run. Outputs are capped per cell and per notebook (display
updates included), so a print or display loop cannot fill memory or the stored notebook. Where the
kernel runs (bubblewrap, resource limits) is ``sandbox``'s business.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Callable, Collection
from dataclasses import dataclass
from queue import Empty
from time import monotonic
from typing import Any

from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from nbformat.v4 import new_output

from ..process_groups import signal_group
from .guarded_checks import CheckGuard
from .sandbox import sandboxed_kernel_manager

__all__ = ["CellOutcome", "run_cells", "describe_error", "DEFAULT_MAX_OUTPUT_CHARS", "DEFAULT_MAX_TOTAL_OUTPUT_CHARS"]

DEFAULT_MAX_OUTPUT_CHARS = 20_000
# Every output of one notebook together (nbformat JSON grows a little beyond this with escaping).
DEFAULT_MAX_TOTAL_OUTPUT_CHARS = 2_000_000
# After an interrupt, how long a healthy kernel needs to answer an empty request.
_RESPONSIVE_WITHIN_S = 5.0
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_ARROW = re.compile(r"^-+>\s*\d*\s*")  # IPython's "----> 12 " prefix on the failing line


@dataclass(frozen=True)
class CellOutcome:
    """How one code cell ended: ``ok``, ``error``, ``timeout``, ``dead`` (kernel died) or ``skipped``."""

    index: int
    status: str
    message: str = ""


def describe_error(ename: str, evalue: str, traceback: list[str] | None = None) -> str:
    """One readable line for an exception raised in a cell: ``Name: message``, or the failing line.

    A bare ``assert`` has no message, so the line IPython marks with an arrow is shown instead.

    >>> describe_error("AssertionError", "add(2, 3) should be 5")
    'AssertionError: add(2, 3) should be 5'
    >>> describe_error("AssertionError", "", ["Cell In[3], line 2", "----> 2 assert f(1) == 2"])
    'AssertionError at: assert f(1) == 2'
    """
    if evalue and evalue.strip():
        text = f"{ename}: {evalue.strip()}"
    else:
        lines = [line for entry in traceback or [] for line in _ANSI.sub("", str(entry)).splitlines()]
        marked = [line.strip() for line in lines if line.lstrip().startswith("---->")]
        if marked:
            text = f"{ename} at: {_ARROW.sub('', marked[-1])}"
        else:
            text = ename or "error"
    return text if len(text) <= 1000 else text[:997] + "..."


def _output_size(out: NotebookNode) -> int:
    if out.get("output_type") == "stream":
        return len(out.get("text", ""))
    if out.get("output_type") == "error":
        return sum(len(line) for line in out.get("traceback", [])) + len(out.get("evalue", ""))
    data = out.get("data", {})
    return _data_size(data)


def _data_size(data: Any) -> int:
    if not isinstance(data, dict):
        return len(str(data))
    return sum(len(value) if isinstance(value, str) else len(str(value)) for value in data.values())


def _with_note(msg: dict[str, Any], note: str) -> dict[str, Any]:
    """A copy of a display message whose data is replaced by ``note``."""
    content = {**msg.get("content", {}), "data": {"text/plain": note}, "metadata": {}}
    return {**msg, "content": content}


class _GradingClient(NotebookClient):
    """``NotebookClient`` that caps stored output per cell and per notebook, and remembers timeouts.

    The per-notebook cap also covers outputs replaced through a ``display_id`` (``update_display_data``
    or a second ``display(..., display_id=)``), which nbclient writes without calling ``output``:
    any output that would pass either cap is stored as a one-line note instead.
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

    def clear_output(self, outs: list[NotebookNode], msg: dict[str, Any], cell_index: int) -> None:
        super().clear_output(outs, msg, cell_index)
        self._recount()

    def _update_display_id(self, display_id: str, msg: dict[str, Any]) -> None:
        # An update replaces earlier outputs in place: allowed only while both caps still hold.
        places = [(cell, i) for cell, indices in self._display_id_map.get(display_id, {}).items() for i in indices
                  if i < len(self.nb.cells[cell].get("outputs", ()))]
        replaced = sum(_output_size(self.nb.cells[cell].outputs[i]) for cell, i in places)
        size = _data_size(msg.get("content", {}).get("data", {}))
        if size > self.max_output_chars or self._total - replaced + len(places) * size > self.max_total_output_chars:
            msg = _with_note(msg, f"[grader: display update of {size:,} characters dropped: output cap reached]")
        super()._update_display_id(display_id, msg)
        self._recount()

    def output(self, outs: list[NotebookNode], msg: dict[str, Any], display_id: str | None,
               cell_index: int) -> NotebookNode | None:
        used = self._used.get(cell_index, 0)
        full = used >= self.max_output_chars or self._total >= self.max_total_output_chars
        if msg.get("msg_type") in ("display_data", "execute_result"):
            size = _data_size(msg.get("content", {}).get("data", {}))
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
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
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
    """
    replies: list[dict[str, Any]] = []

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
        on_cell_executed=keep_reply,
        resources={"metadata": {"path": cwd}},
    )
    kernel_pid: int | None = None
    try:
        # The kernel's own stdout/stderr (fd level: subprocesses, os.write, start-up warnings) go nowhere:
        # what a cell prints through Python arrives as capped outputs, and nothing can fill a log file.
        async with client.async_setup_kernel(cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             cleanup_kc=True):  # also shut down a kernel manager we made
            kernel_pid = getattr(getattr(client.km, "provisioner", None), "pid", None)
            if kernel_pid is not None and on_kernel_started is not None:
                on_kernel_started(kernel_pid)
            guard = CheckGuard(client, within=max(cell_timeout, _RESPONSIVE_WITHIN_S)) if checks else None
            if guard is not None:
                await guard.install()  # before any student code runs
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                client.timed_out = False
                replies.clear()
                source = cell.source
                guarded = guard is not None and index in checks and source.strip() != ""
                if guarded:
                    reset = await guard.reset()
                    cell.source, token = guard.prepare(source)
                try:
                    await client.async_execute_cell(cell, index)
                except DeadKernelError:
                    outcome = CellOutcome(index, "dead", "the kernel died while running this cell")
                    on_outcome(outcome)
                    return outcome
                finally:
                    cell.source = source  # the stored notebook shows the check as written
                if client.timed_out:
                    outcome = CellOutcome(index, "timeout", f"timed out after {cell_timeout} s")
                    on_outcome(outcome)
                    if not await client.kernel_responds(_RESPONSIVE_WITHIN_S):
                        return CellOutcome(index, "timeout", f"timed out after {cell_timeout} s and ignored "
                                                             "the interrupt, so the rest could not run")
                    continue
                outcome = _outcome_from_reply(index, replies[-1] if replies else None)
                if guarded and outcome.status == "ok":
                    failure = guard.failure(cell, token, reset)
                    if failure is not None:
                        outcome = CellOutcome(index, "error", failure)
                on_outcome(outcome)
            return None
    finally:
        signal_group(kernel_pid)  # the kernel leads its own group: this also catches what student code spawned
        launch.close()


def _outcome_from_reply(index: int, reply: dict[str, Any] | None) -> CellOutcome:
    if not reply:
        return CellOutcome(index, "skipped", "the cell did not run (empty cell)")
    content = reply.get("content", {})
    if content.get("status") == "ok":
        return CellOutcome(index, "ok")
    return CellOutcome(index, "error", describe_error(str(content.get("ename", "Error")),
                                                      str(content.get("evalue", "")), content.get("traceback")))


