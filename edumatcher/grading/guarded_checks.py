"""Grader side of the kernel guard: a check passes only when four independent signs agree.

For each check cell, ``run_cells`` asks a ``CheckGuard`` to:

1. reset the kernel (``kernel_guard.restore``, evaluated from the ``user_expressions`` of an empty
   silent request, so no input or AST transformer sees it) and wait for its acknowledgement;
2. send the check's source with one line appended that reports a fresh random token on the
   grader's own channel (a comm message on IOPub that nbclient never stores); the stored notebook
   keeps the original source;
3. then count the check as passed only if the reset was acknowledged, the execute reply says
   ``ok``, the executed cell holds no ``error`` output, and the token arrived.

What this defeats: anything that changes *how cells run* without knowing about the grader, such as
transformers that drop code or swallow exceptions, event hooks that clear ``error_in_exec``,
wrapped ``do_execute``/``run_cell``/``session.send`` that fake an ``ok`` reply, custom exception
handlers, replaced ``showtraceback``/``sys.excepthook``/builtins, trace functions that skip lines.
All are put back before each check; a check whose code stopped early never sends its token, and
the witness sends nothing if the machinery differs from the snapshot when it runs.

What stays possible in-process (the checks run in the student's interpreter; a sandbox does not
change that), all of it code aimed at the checks or at the grader itself. Each of these is caught
by the check's decoy twin (``decoys``), which runs exactly as the check does and which no honest
answer passes, whenever it makes the twin pass too, that is, unless the code can tell the twin from
the check (the twin's module docstring says when it can):

* patching what the checks import or call (``math.isclose = lambda *a, **k: True``, the engine's
  classes, ``sys.modules`` entries): the check then passes for real, in its own eyes;
* student functions that a check calls run inside the check, after the reset: they can read the
  running request (``get_ipython().kernel.get_parent()``) and so its token, send the confirmation
  themselves, and rewrite the reply and drop the error output (``session.send``) on the way out;
* replacing ``sys.modules['_edumatcher_kernel_guard']`` or the snapshot's saved originals (they are
  reachable through ``gc``, ``ctypes`` or the module itself);
* a thread left running that changes the machinery after the reset and puts it back before the
  check's last line (one that merely re-adds a transformer is caught: the witness compares).

Costs to honest work: hooks and transformers an answer installs are removed at the first check
(``%autoreload`` and matplotlib's inline ``post_execute`` flush stop acting after it); a check whose
last statement is a bare expression no longer displays it. Text on stderr is never read: honest
code writes warnings there.
"""

from __future__ import annotations

import inspect
import secrets
from dataclasses import dataclass
from pathlib import Path
from queue import Empty
from time import monotonic
from typing import Any

from nbformat import NotebookNode

from . import kernel_guard
from .check_messages import describe_error

__all__ = ["CheckGuard", "Failure", "GuardUnavailable", "witness_line"]

_SOURCE = Path(kernel_guard.__file__).read_text(encoding="utf-8")
_MODULE = f"__import__('sys').modules[{kernel_guard.MODULE_NAME!r}]"
# Runs in a throwaway namespace: the student's namespace gains no names from it.
_INSTALL = (
    "exec(compile("
    + repr(
        "import sys, types\n"
        f"module = types.ModuleType({kernel_guard.MODULE_NAME!r})\n"
        "exec(compile(SOURCE, '<edumatcher kernel guard>', 'exec'), module.__dict__)\n"
        f"sys.modules[{kernel_guard.MODULE_NAME!r}] = module\n"
        "module.install(get_ipython())\n"
    )
    + ", '<edumatcher grader>', 'exec'), {'SOURCE': " + repr(_SOURCE) + "})"
)


@dataclass(frozen=True)
class Failure:
    """Why a check failed although its reply said ``ok``: the grader's words (no ``ename``), or the error
    the cell shows (its class name and traceback, which the student's code shaped)."""

    message: str
    traceback: tuple[str, ...] = ()
    ename: str = ""


class GuardUnavailable(RuntimeError):
    """The guard could not be installed in a fresh kernel: the grader cannot vouch for any check."""


def witness_line(token: str) -> str:
    """The line appended to a check's source: report ``token`` if every line above it ran."""
    return f"{_MODULE}.witness({token!r})"


class CheckGuard:
    """Resets the kernel before each check and cross-checks its outcome (see the module docstring).

    ``client`` is the running ``NotebookClient``; the guard listens to its comm messages.
    """

    def __init__(self, client: Any, *, within: float) -> None:
        self._client = client
        self._within = within
        self._expected: str | None = None  # the token of the check now running
        self._confirmed = False
        original = client.handle_comm_msg

        def handle_comm_msg(outs: list[NotebookNode], msg: dict[str, Any], cell_index: int) -> None:
            content = msg.get("content")
            content = content if isinstance(content, dict) else {}
            if msg.get("msg_type") == "comm_msg" and content.get("comm_id") == kernel_guard.COMM_ID:
                data = content.get("data")
                token = data.get(kernel_guard.WITNESS_KEY) if isinstance(data, dict) else None
                if self._expected is not None and token == self._expected:
                    self._confirmed = True  # only the awaited token counts: a flood of others costs nothing
                return None  # the grader's own message: nothing for nbclient to keep
            return original(outs, msg, cell_index)

        client.handle_comm_msg = handle_comm_msg

    async def install(self) -> None:
        """Snapshot the fresh kernel's machinery; GuardUnavailable if it does not acknowledge."""
        if not await self._request(_INSTALL, timeout=max(self._within, 30.0)):
            raise GuardUnavailable("the grader could not install its kernel guard")

    async def reset(self) -> bool:
        """Put the kernel's machinery back as installed; True once the kernel acknowledged it."""
        return await self._request("", timeout=self._within)

    def prepare(self, source: str) -> tuple[str, str]:
        """The source to send for a check, and the token that proves it ran to its end."""
        token = secrets.token_hex(16)
        self._expected, self._confirmed = token, False
        return f"{source.rstrip()}\n{witness_line(token)}\n", token

    def failure(self, cell: NotebookNode, token: str, reset: bool) -> Failure | None:
        """Why a check whose reply said ``ok`` does not pass, or None when every sign agrees."""
        errors = [out for out in cell.get("outputs", []) if out.get("output_type") == "error"]
        if errors:

            last = errors[-1]
            traceback = last.get("traceback")
            traceback = tuple(str(line) for line in traceback[:200]) if isinstance(traceback, list) else ()
            ename = str(last.get("ename", "Error"))
            return Failure(describe_error(ename, str(last.get("evalue", "")), list(traceback)), traceback, ename)
        if not reset:
            return Failure("the grader could not reset the kernel before this check (code above changes how "
                           "cells run), so it cannot vouch for it")
        if token != self._expected or not self._confirmed:
            return Failure("the check did not run to its end: code above changes how cells run "
                           "(the grader did not receive its confirmation)")
        return None

    async def _kernel_alive(self) -> bool:
        km = getattr(self._client, "km", None)
        if km is None:
            return True
        alive = km.is_alive()
        return bool(await alive if inspect.isawaitable(alive) else alive)

    async def _request(self, code: str, *, timeout: float) -> bool:
        """Send a silent request that resets the kernel; True if its reply carries a fresh acknowledgement."""
        ack = secrets.token_hex(8)
        expressions = {"ack": f"{_MODULE}.restore({ack!r})"}
        kc = self._client.kc
        msg_id = kc.execute(code, silent=True, store_history=False, user_expressions=expressions)
        deadline = monotonic() + timeout
        while (left := deadline - monotonic()) > 0:
            try:
                reply = await kc.get_shell_msg(timeout=min(left, 0.5))
            except Empty:
                if not await self._kernel_alive():
                    return False  # it died (e.g. os._exit in a cell above): no need to wait the full timeout
                continue
            if _field(reply, "parent_header").get("msg_id") != msg_id:
                continue
            content = _field(reply, "content")  # the kernel's reply: shaped by whatever ran in it
            result = _field(_field(content, "user_expressions"), "ack")
            text = _field(result, "data").get("text/plain", "")
            return content.get("status") == "ok" and result.get("status") == "ok" and ack in str(text)
        return False


def _field(message: Any, name: str) -> dict[str, Any]:
    """``message[name]`` when both are dicts, else an empty dict."""
    value = message.get(name) if isinstance(message, dict) else None
    return value if isinstance(value, dict) else {}
