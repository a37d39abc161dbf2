"""Drive one notebook in a real JupyterLab page, the way a student would, and read what it shows.

:class:`NotebookPage` opens a notebook in a fresh workspace (so no earlier tab is restored
and starts a kernel of its own), waits for its kernel, runs every cell through JupyterLab's
own ``notebook:run-all-cells`` command, waits for the run to finish, and returns a
:class:`RunReport` built from two sources that must agree:

- the notebook *model* in the page (what the kernel sent: execution counts, error outputs,
  how many images and widget views there should be);
- the rendered *DOM* (what a person sees: tracebacks on screen, ``<img>`` elements that
  decoded, widget views with a size, "Error displaying widget" placeholders).

JupyterLab 4 renders an error output with the stderr renderer, so the DOM alone cannot tell
an error from a warning by its mime type: errors are taken from the model (``output_type ==
"error"``) and, on screen, from the text "Traceback (most recent call last)".
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

# JavaScript run in the page. `PANEL` finds the notebook panel open on a given path.
_FIND_PANEL = """
(path) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.sessionContext) return w;
  }
  return null;
}
"""

_KERNEL_READY = f"""
(path) => {{
  const panel = ({_FIND_PANEL})(path);
  if (!panel || !panel.context.isReady) return false;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
}}
"""

_START_RUN_ALL = f"""
(path) => {{
  const panel = ({_FIND_PANEL})(path);
  window.jupyterapp.shell.activateById(panel.id);
  window.__edumatcherRun = {{done: false}};
  // A kernel that dies (memory limit, segfault) is restarted by JupyterLab and may be idle
  // again by the time we look: remember every status that says it died.
  window.__edumatcherKernelTrouble = [];
  if (window.__edumatcherOnStatus) panel.sessionContext.statusChanged.disconnect(window.__edumatcherOnStatus);
  window.__edumatcherOnStatus = (_, status) => {{
    if (['dead', 'autorestarting', 'restarting'].includes(status)) window.__edumatcherKernelTrouble.push(status);
  }};
  panel.sessionContext.statusChanged.connect(window.__edumatcherOnStatus);
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    (ok) => {{ window.__edumatcherRun = {{done: true, ok: ok}}; }},
    (err) => {{ window.__edumatcherRun = {{done: true, ok: false, error: String(err)}}; }});
}}
"""

_RUN_FINISHED = f"""
(path) => {{
  const panel = ({_FIND_PANEL})(path);
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (kernel && (kernel.status === 'dead' || kernel.status === 'autorestarting')) return true;
  return window.__edumatcherRun.done && !!kernel && kernel.status === 'idle';
}}
"""

_MODEL_STATE = f"""
(path) => {{
  const panel = ({_FIND_PANEL})(path);
  const cells = panel.content.model.cells;
  const result = [];
  for (let i = 0; i < cells.length; i++) {{
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    const outputs = cell.outputs.toJSON().map((o) => ({{
      type: o.output_type,
      name: o.name || null,
      ename: o.ename || null,
      evalue: o.evalue || null,
      text: o.output_type === 'stream' ? String(Array.isArray(o.text) ? o.text.join('') : o.text).slice(0, 400) : null,
      mimes: o.data ? Object.keys(o.data) : [],
    }}));
    result.push({{index: i, count: cell.executionCount, outputs: outputs}});
  }}
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {{cells: result, run: window.__edumatcherRun || null, kernel: kernel ? kernel.status : null,
           trouble: window.__edumatcherKernelTrouble || []}};
}}
"""

_DOM_STATE = f"""
(path) => {{
  const panel = ({_FIND_PANEL})(path);
  const shown = (el) => {{
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && (!el.checkVisibility || el.checkVisibility());
  }};
  const outputs = Array.from(panel.node.querySelectorAll('.jp-OutputArea-output'));
  // Outputs of the cells themselves, not those nested inside a widget (an Output widget
  // holding a figure): these correspond one to one with the model's outputs.
  const topLevel = outputs.filter((o) => !o.parentElement.closest('.jupyter-widgets'));
  const tracebacks = outputs.filter((o) => o.textContent.includes('Traceback (most recent call last)'))
    .map((o) => o.textContent.slice(0, 600));
  const widgetErrors = Array.from(panel.node.querySelectorAll('.jupyter-widgets'))
    .filter((w) => w.textContent.trim().startsWith('Error displaying widget')).map((w) => w.textContent.trim());
  const widgetOutputs = topLevel.filter((o) => o.matches('.jupyter-widgets') || o.querySelector('.jupyter-widgets'));
  const widgetsShown = widgetOutputs.filter((o) => {{
    const views = [o, ...o.querySelectorAll('.jupyter-widgets')].filter((w) => w.matches('.jupyter-widgets'));
    return views.some((w) => shown(w) && !w.textContent.trim().startsWith('Error displaying widget'));
  }}).length;
  const loading = outputs.filter((o) => o.textContent.includes('Loading widget...')).length;
  const decoded = (img) => img.complete && img.naturalWidth > 0 && shown(img);
  const images = Array.from(panel.node.querySelectorAll('.jp-OutputArea-output img'));
  const imagesShown = images.filter(decoded).length;
  const topImagesShown = topLevel.filter((o) => Array.from(o.querySelectorAll('img')).some(decoded)).length;
  return {{tracebacks, widgetErrors, widgetOutputs: widgetOutputs.length, widgetsShown, loading,
           images: images.length, imagesShown, topImagesShown}};
}}
"""

_FOCUS_CELL_EDITOR = f"""
([path, index]) => {{
  const panel = ({_FIND_PANEL})(path);
  const notebook = panel.content;
  notebook.activeCellIndex = index;
  notebook.mode = 'edit';
  const cell = notebook.widgets[index];
  cell.node.scrollIntoView({{block: 'center'}});
  cell.editor.focus();
  return cell.editor.hasFocus();
}}
"""

_CELL_SOURCE = f"""
([path, index]) => ({_FIND_PANEL})(path).content.model.cells.get(index).sharedModel.getSource()
"""

_HAS_SELECTION = f"""
([path, index]) => {{
  const selection = ({_FIND_PANEL})(path).content.widgets[index].editor.getSelection();
  return selection.start.line !== selection.end.line || selection.start.column !== selection.end.column;
}}
"""

_RESTART_KERNEL = f"""
async (path) => {{
  const panel = ({_FIND_PANEL})(path);
  await panel.sessionContext.restartKernel();
}}
"""

_SHUTDOWN_KERNEL = f"""
async (path) => {{
  const panel = ({_FIND_PANEL})(path);
  if (panel && panel.sessionContext.session) await panel.sessionContext.shutdown();
}}
"""

_SCROLL_TO_CELL = f"""
([path, index]) => ({_FIND_PANEL})(path).content.widgets[index].node.scrollIntoView({{block: 'start'}})
"""

_SCROLL_TO_FIRST = f"""
([path, selectors]) => {{
  const panel = ({_FIND_PANEL})(path);
  for (const selector of selectors) {{
    const el = panel.node.querySelector(selector);
    if (el) {{ el.scrollIntoView({{block: 'center'}}); return selector; }}
  }}
  return null;
}}
"""


@dataclass
class RunReport:
    """What one run-all produced, in the model and on screen."""

    path: str
    seconds: float
    finished: bool
    code_cells: int = 0
    unexecuted: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    kernel_status: str | None = None
    kernel_trouble: list[str] = field(default_factory=list)
    image_outputs: int = 0
    widget_outputs: int = 0
    dom: dict = field(default_factory=dict)

    def problems(self, *, expect_widgets: bool, expect_figures: bool) -> list[str]:
        """Return one line per thing a student would see go wrong; empty means the page is good."""
        found = []
        if not self.finished:
            found.append("the run did not finish in time")
        if self.kernel_trouble:
            found.append(f"the kernel died during the run (statuses seen: {', '.join(self.kernel_trouble)})")
        # 'busy' is fine here: after a run, widgets and the editor still send the kernel requests.
        elif self.kernel_status not in ("idle", "busy"):
            found.append(f"the kernel ended the run {self.kernel_status or 'gone'} (out of memory?)")
        found += [f"error output: {e}" for e in self.errors]
        found += [f"traceback on screen: {t[:300]!r}" for t in self.dom.get("tracebacks", [])]
        if self.unexecuted:
            found.append(f"code cells never executed (index): {self.unexecuted}")
        found += [f"widget failed: {w}" for w in self.dom.get("widgetErrors", [])]
        if self.widget_outputs and self.dom.get("widgetsShown", 0) < self.widget_outputs:
            found.append(f"{self.widget_outputs} widget outputs, {self.dom.get('widgetsShown', 0)} shown on screen")
        if expect_widgets and not self.dom.get("widgetsShown"):
            found.append("the notebook uses ipywidgets but no widget is shown")
        if self.dom.get("topImagesShown", 0) < self.image_outputs:
            found.append(f"{self.image_outputs} image outputs, {self.dom.get('topImagesShown', 0)} shown on screen")
        if expect_figures and not self.dom.get("imagesShown"):
            found.append("the notebook makes matplotlib figures but no image is shown")
        return found

    def summary(self) -> str:
        """One line for logs: time, cells, figures and widgets seen."""
        return (f"{self.path}: {self.seconds:.1f} s, {self.code_cells} code cells, "
                f"{self.dom.get('imagesShown', 0)} images, {self.dom.get('widgetsShown', 0)} widgets, "
                f"{len(self.errors)} errors, {len(self.stderr)} stderr outputs")


class NotebookPage:
    """One notebook open in its own JupyterLab workspace in a Playwright *page*."""

    def __init__(self, page: Page, base_url: str, token: str, path: str, *, timeout_s: float = 120.0) -> None:
        self.page = page
        self.path = path
        self.timeout_ms = timeout_s * 1000
        workspace = "t" + "".join(ch if ch.isalnum() else "-" for ch in path)
        self.url = f"{base_url}lab/workspaces/{workspace}/tree/{path}?token={token}"

    def open(self) -> None:
        """Load JupyterLab on the notebook and wait until its kernel is idle and connected."""
        self.page.goto(self.url, wait_until="domcontentloaded", timeout=self.timeout_ms)
        self.page.wait_for_function(_KERNEL_READY, arg=self.path, timeout=self.timeout_ms, polling=250)

    def run_all(self, *, timeout_s: float) -> RunReport:
        """Run all cells; wait for the run to end (or *timeout_s*); return what it produced."""
        started = time.monotonic()
        self.page.evaluate(_START_RUN_ALL, self.path)
        finished = True
        try:
            self.page.wait_for_function(_RUN_FINISHED, arg=self.path, timeout=timeout_s * 1000, polling=250)
        except PlaywrightTimeout:
            finished = False
        seconds = time.monotonic() - started
        return self._report(seconds, finished)

    def _report(self, seconds: float, finished: bool) -> RunReport:
        model = self.page.evaluate(_MODEL_STATE, self.path)
        report = RunReport(self.path, seconds, finished, code_cells=len(model["cells"]), kernel_status=model["kernel"],
                           kernel_trouble=model["trouble"])
        for cell in model["cells"]:
            if cell["count"] is None:
                report.unexecuted.append(cell["index"])
            for out in cell["outputs"]:
                if out["type"] == "error":
                    report.errors.append(f"cell {cell['index']}: {out['ename']}: {out['evalue']}")
                elif out["type"] == "stream" and out["name"] == "stderr":
                    report.stderr.append(f"cell {cell['index']}: {out['text'].strip()[:200]}")
                report.image_outputs += "image/png" in out["mimes"] or "image/jpeg" in out["mimes"]
                report.widget_outputs += "application/vnd.jupyter.widget-view+json" in out["mimes"]
        if finished and report.widget_outputs:
            # Widget views render asynchronously after their output arrives.
            try:
                self.page.wait_for_function(
                    f"(path) => {{ const d = ({_DOM_STATE})(path); return d.widgetsShown + d.widgetErrors.length"
                    f" >= {report.widget_outputs} && d.loading === 0; }}",
                    arg=self.path, timeout=30_000, polling=250)
            except PlaywrightTimeout:
                pass  # reported below as widgets not shown
        if finished and report.image_outputs:
            try:
                self.page.wait_for_function(
                    f"(path) => ({_DOM_STATE})(path).topImagesShown >= {report.image_outputs}",
                    arg=self.path, timeout=15_000, polling=250)
            except PlaywrightTimeout:
                pass  # reported below as images not shown
        report.dom = self.page.evaluate(_DOM_STATE, self.path)
        return report

    def type_into_cell(self, index: int, text: str) -> str:
        """Replace cell *index*'s text by typing *text* on the keyboard; return the cell's new source.

        The editor indents new lines by itself, as it does for a person; so each line is typed
        after selecting whatever indentation the editor inserted (Shift+Home), which the typed
        line, carrying its own indentation, then replaces.
        """
        focused = self.page.evaluate(_FOCUS_CELL_EDITOR, [self.path, index])
        if not focused:
            raise RuntimeError(f"could not focus the editor of cell {index} in {self.path}")
        keyboard = self.page.keyboard
        keyboard.press("ControlOrMeta+a")
        keyboard.press("Delete")
        for number, line in enumerate(text.split("\n")):
            if number:
                keyboard.press("Enter")
                keyboard.press("Shift+Home")
                if not line.strip():
                    # A blank line: drop the editor's indentation; Backspace with nothing selected
                    # would join lines, so only when something is selected.
                    if self.page.evaluate(_HAS_SELECTION, [self.path, index]):
                        keyboard.press("Backspace")
                    continue
            keyboard.type(line)
        keyboard.press("Escape")  # leave edit mode, as a person does before running
        return self.page.evaluate(_CELL_SOURCE, [self.path, index])

    def restart_kernel(self) -> None:
        """Restart the notebook's kernel (no dialog) and wait until it is idle again."""
        self.page.evaluate(_RESTART_KERNEL, self.path)
        self.page.wait_for_function(_KERNEL_READY, arg=self.path, timeout=self.timeout_ms, polling=250)

    def screenshot(self, path: Path, *, focus: tuple[str, ...] = (), cell: int | None = None) -> Path:
        """Save a screenshot, scrolled to cell index *cell* or else to the first match of *focus*."""
        if cell is not None:
            self.page.evaluate(_SCROLL_TO_CELL, [self.path, cell])
        elif focus:
            self.page.evaluate(_SCROLL_TO_FIRST, [self.path, list(focus)])
        self.page.wait_for_timeout(300)  # let the scroll and any lazy rendering settle
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path))
        return path

    def close(self) -> None:
        """Shut the notebook's kernel down and close the page (kernels must not pile up)."""
        try:
            self.page.evaluate(_SHUTDOWN_KERNEL, self.path)
        except Exception:  # noqa: BLE001 - the page may already be gone; the server fixture cleans up
            pass
        self.page.close()


def describe(report: RunReport) -> str:
    """Return the report as indented JSON, for failure messages."""
    return json.dumps(report.__dict__, indent=2, default=str)
