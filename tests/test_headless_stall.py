"""Headless runs of widget cells never stall: 20 consecutive nbclient runs, each reply on time.

The stall (issue 13, section 4): nbclient imitates a front end's Output widget by sending a
``comm_msg`` on the shell socket for every output an ``Output`` captures, while it waits on
that socket for the cell's ``execute_reply``; the raw send can swallow the socket's wake-up and
the reply then sits unread until the cell timeout, after which the run goes on with no error
(jupyter/nbclient#312). ``FigureControl`` used to capture its drawing with ``with output:``;
it now sets ``Output.outputs``, so nothing is captured and nothing is sent.

What is counted, never timed: Output-widget messages the client sent on the shell socket,
shell waits that ran to their full timeout and only then found a reply ("stranded" replies:
the stall's signature), and cell timeouts. The notebook draws many items per redraw, which made
the old ``FigureControl`` strand the reply in 6 of 8 runs here (a chapter widget: 2 of 40).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

nbclient = pytest.importorskip("nbclient")
from jupyter_client.channels import AsyncZMQSocketChannel  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402
from nbclient.exceptions import CellTimeoutError  # noqa: E402
from nbclient.output_widget import OutputWidget  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RUNS = 20
CELL_TIMEOUT_S = 20
"""Per cell; the cells take about a second. A stranded reply costs exactly this long."""

ITEMS = 120
"""Things each redraw shows: many outputs per cell is what made the old pattern strand the reply."""

WIDGET_CELL = f"""\
from IPython.display import HTML
from matplotlib.figure import Figure
import ipywidgets as widgets
from edumatcher.kit.figure_control import FigureControl

def draw(n):
    fig = Figure(figsize=(3, 2))
    fig.add_subplot().plot(range(n))
    return (fig,) + tuple(HTML(f"<b>{{i}}</b>") for i in range(n))

control = FigureControl(draw, {{"n": widgets.IntSlider(value={ITEMS}, min=1, max={2 * ITEMS})}})
control"""

SLIDER_CELL = f"""\
for n in ({ITEMS - 1}, {ITEMS + 1}, {ITEMS}):
    control.controls["n"].value = n  # what a student's slider does: a redraw per move
len(control.last)"""


def _notebook() -> nbformat.NotebookNode:
    return new_notebook(cells=[new_code_cell("%matplotlib inline"), new_code_cell(WIDGET_CELL),
                               new_code_cell(SLIDER_CELL), new_code_cell("print('done')")])


@dataclass
class _Counts:
    """What one headless run did that could stall it."""

    widget_sends: int = 0
    stranded: list[str] = field(default_factory=list)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Counts]:
    """Count the Output-widget imitation's shell sends and the shell waits that hit their timeout."""
    seen = _Counts()
    publish = OutputWidget._publish_msg
    get_msg = AsyncZMQSocketChannel.get_msg

    def counting_publish(self: OutputWidget, *args: Any, **kwargs: Any) -> None:
        seen.widget_sends += 1
        publish(self, *args, **kwargs)

    async def watching_get_msg(self: AsyncZMQSocketChannel, timeout: float | None = None) -> dict[str, Any]:
        started = time.monotonic()
        msg = await get_msg(self, timeout)
        # A wait that ran to its timeout and still got a message: the message was there unnoticed.
        if timeout is not None and timeout >= CELL_TIMEOUT_S and time.monotonic() - started >= timeout:
            seen.stranded.append(msg["msg_type"])
        return msg

    monkeypatch.setattr(OutputWidget, "_publish_msg", counting_publish)
    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", watching_get_msg)
    yield seen


def _output_widget_outputs(nb: nbformat.NotebookNode) -> list[dict[str, Any]]:
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    outputs = [model["state"]["outputs"] for model in state.values() if model["model_name"] == "OutputModel"]
    assert len(outputs) == 1, "the notebook shows exactly one FigureControl"
    return outputs[0]


def test_figure_control_sets_its_output_without_capturing(monkeypatch: pytest.MonkeyPatch) -> None:
    """No kernel needed: the drawing goes into ``Output.outputs``, ``with output:`` is never entered."""
    import ipywidgets as widgets
    from IPython.display import HTML
    from matplotlib.figure import Figure

    from edumatcher.kit.figure_control import FigureControl

    def no_capture(self: widgets.Output) -> None:
        raise AssertionError("FigureControl captured output with `with output:`")

    monkeypatch.setattr(widgets.Output, "__enter__", no_capture)
    slider = widgets.IntSlider(value=2, min=1, max=5)
    control = FigureControl(lambda n: (Figure(),) + tuple(HTML(str(i)) for i in range(n)), {"n": slider})
    assert [out["output_type"] for out in control.output.outputs] == ["display_data"] * 3
    slider.value = 4
    # Replaced, not appended: one state update per redraw holds exactly the new picture.
    assert len(control.output.outputs) == 5 and control.output.msg_id == ""
    assert control.output.outputs[-1]["data"]["text/html"] == "3"


@pytest.mark.slow  # about 35 s on an idle 2-CPU machine, 85 s on a busy one: 20 kernels
def test_twenty_headless_runs_of_a_figure_control_never_strand_a_reply(counts: _Counts, tmp_path: Path) -> None:
    timeouts = 0
    for run in range(RUNS):
        nb = _notebook()
        # IPC sockets in a folder of the test's own: TCP ports chosen free can be taken by another
        # job's kernel before this one binds them (CI runs notebooks on other Pythons meanwhile:
        # "Address already in use", "Kernel died before replying to kernel_info").
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(tmp_path / f"kernel-{run}"))
        client = nbclient.NotebookClient(nb, km=km, timeout=CELL_TIMEOUT_S, interrupt_on_timeout=False)
        try:
            client.execute(cwd=str(REPO))
        except CellTimeoutError:
            timeouts += 1
            continue
        outputs = _output_widget_outputs(nb)
        # The picture is still there for a static render: the figure as a PNG, then every item.
        assert len(outputs) == 1 + ITEMS and "image/png" in outputs[0]["data"]
        assert nb.cells[2].outputs[0]["data"]["text/plain"] == str(1 + ITEMS)
    stranded = len(counts.stranded)
    assert (counts.widget_sends, stranded, timeouts) == (0, 0, 0), (
        f"{RUNS} runs: {counts.widget_sends} Output-widget messages sent on the shell socket, "
        f"{stranded} stranded replies, {timeouts} cell timeouts")


CAPTURING_CELL = f"""\
from IPython.display import HTML, display
import ipywidgets as widgets

out = widgets.Output()
with out:  # the capturing pattern FigureControl no longer uses; chapters may still meet it
    for i in range({ITEMS}):
        display(HTML(f"<b>{{i}}</b>"))
out"""


def test_check_verdicts_driver_survives_a_capturing_output_widget(counts: _Counts, tmp_path: Path) -> None:
    """``verdict_check.run_notebook`` re-arms the shell socket after the imitation's sends."""
    from edumatcher.kit.verdict_check import run_notebook

    path = tmp_path / "capture.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(CAPTURING_CELL), new_code_cell("print('done')")]), str(path))
    runs = [run_notebook(path, timeout=CELL_TIMEOUT_S) for _ in range(5)]
    assert [run.error for run in runs] == [""] * len(runs)
    assert counts.widget_sends > 0, "the capture did reach the imitation: the case under test happened"
    assert len(counts.stranded) == 0, f"{len(runs)} runs: {len(counts.stranded)} stranded replies"
