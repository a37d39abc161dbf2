"""Execute a restored notebook cell by cell in a fresh ``python3`` kernel and report each outcome.

One cell's failure never stops the next: errors are allowed, a cell that overruns its timeout is
interrupted and the run goes on. The run stops early only when the kernel dies, or when it is still
busy after an interrupt (code that swallows ``KeyboardInterrupt``); the caller decides what that
means for the cells that did not run. Outputs are capped per cell, so a print loop cannot fill
memory or the stored notebook.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from queue import Empty
from time import monotonic
from typing import Any

from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from nbformat.v4 import new_output

from ..process_groups import signal_group

__all__ = ["CellOutcome", "run_cells", "describe_error", "DEFAULT_MAX_OUTPUT_CHARS"]

DEFAULT_MAX_OUTPUT_CHARS = 20_000
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
    return sum(len(value) if isinstance(value, str) else len(str(value)) for value in data.values())


class _GradingClient(NotebookClient):
    """``NotebookClient`` that caps stored output per cell and remembers whether a cell timed out."""

    def __init__(self, nb: NotebookNode, max_output_chars: int, **kwargs: Any) -> None:
        super().__init__(nb, **kwargs)
        self.max_output_chars = max_output_chars
        self.timed_out = False
        self._used: dict[int, int] = {}
        self._truncated: set[int] = set()

    def output(self, outs: list[NotebookNode], msg: dict[str, Any], display_id: str | None,
               cell_index: int) -> NotebookNode | None:
        used = self._used.get(cell_index, 0)
        if used >= self.max_output_chars and not display_id:
            self._note_truncation(outs, cell_index)
            return None  # dropped: nothing more is kept for this cell
        out = super().output(outs, msg, display_id, cell_index)
        if out is None:
            return None
        size = _output_size(out)
        self._used[cell_index] = used + size
        if used + size > self.max_output_chars:
            room = max(self.max_output_chars - used, 0)
            if out.get("output_type") == "stream":
                out["text"] = out["text"][:room]
            elif not display_id and outs and outs[-1] is out:
                outs.pop()
            self._note_truncation(outs, cell_index)
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
) -> CellOutcome | None:
    """Run every code cell of ``nb`` in order in a new ``python3`` kernel whose cwd is ``cwd``.

    ``on_outcome`` is called after each code cell (so results survive if the caller is killed later).
    Returns None when every cell ran, else the outcome that stopped the run: status ``dead``, or
    ``timeout`` for a cell that was still busy after an interrupt. Outputs are stored in ``nb``.
    The kernel and every process in its group are killed on the way out.
    """
    replies: list[dict[str, Any]] = []

    def keep_reply(**hook: Any) -> None:
        replies.append(hook.get("execute_reply") or {})

    client = _GradingClient(
        nb,
        max_output_chars,
        kernel_name="python3",  # never the notebook's own kernelspec, which the student controls
        timeout=cell_timeout,
        interrupt_on_timeout=True,
        error_on_timeout={"ename": "TimeoutError", "evalue": f"cell did not finish within {cell_timeout} s",
                          "traceback": []},
        allow_errors=True,
        record_timing=False,
        startup_timeout=startup_timeout,
        iopub_timeout=2,
        shutdown_kernel="immediate",
        skip_cells_with_tag="edumatcher-grader-never-skips",  # students must not be able to skip checks
        on_cell_executed=keep_reply,
        resources={"metadata": {"path": cwd}},
    )
    kernel_pid: int | None = None
    try:
        # The kernel's own stdout/stderr (fd level: subprocesses, os.write, start-up warnings) go nowhere:
        # what a cell prints through Python arrives as capped outputs, and nothing can fill a log file.
        async with client.async_setup_kernel(cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            kernel_pid = getattr(getattr(client.km, "provisioner", None), "pid", None)
            if kernel_pid is not None and on_kernel_started is not None:
                on_kernel_started(kernel_pid)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                client.timed_out = False
                replies.clear()
                try:
                    await client.async_execute_cell(cell, index)
                except DeadKernelError:
                    outcome = CellOutcome(index, "dead", "the kernel died while running this cell")
                    on_outcome(outcome)
                    return outcome
                if client.timed_out:
                    outcome = CellOutcome(index, "timeout", f"timed out after {cell_timeout} s")
                    on_outcome(outcome)
                    if not await client.kernel_responds(_RESPONSIVE_WITHIN_S):
                        return CellOutcome(index, "timeout", f"timed out after {cell_timeout} s and ignored "
                                                             "the interrupt, so the rest could not run")
                    continue
                on_outcome(_outcome_from_reply(index, replies[-1] if replies else None))
            return None
    finally:
        signal_group(kernel_pid)  # the kernel leads its own group: this also catches what student code spawned


def _outcome_from_reply(index: int, reply: dict[str, Any] | None) -> CellOutcome:
    if not reply:
        return CellOutcome(index, "skipped", "the cell did not run (empty cell)")
    content = reply.get("content", {})
    if content.get("status") == "ok":
        return CellOutcome(index, "ok")
    return CellOutcome(index, "error", describe_error(str(content.get("ename", "Error")),
                                                      str(content.get("evalue", "")), content.get("traceback")))


