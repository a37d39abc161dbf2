"""Runs inside the grading kernel: puts IPython's execution machinery back before each check.

Student code runs in the same process as the checks, so an answer cell can change how later cells
run: an input transformer that drops their code, an AST transformer that wraps them in
``try/except``, a ``post_run_cell`` hook that clears ``error_in_exec``, a wrapped ``do_execute``
that replies "ok", a custom exception handler, a replaced ``showtraceback``... The grader defeats
these without trusting anything the student could have touched:

1. ``install(shell)`` runs silently before any student cell and snapshots that machinery (the
   transformer lists, the event callbacks, the custom exception handler, every method on the
   execute path of the shell, the kernel and its session, the kernel's handler table, the ``sys``
   hooks and streams, and the builtins).
2. ``restore(ack)`` runs before each check, from the ``user_expressions`` of an empty request
   (evaluated by ``eval``, so no transformer sees it), puts all of it back and returns ``ack``.
3. ``witness(token)``, appended as the last line of the code sent for a check, reports the check's
   random token on IOPub as a comm message that only the grader reads. It runs only if every line
   of the check before it ran without an exception, and stays silent if anything differs from the
   snapshot at that moment (a thread may have put a transformer back) or a trace function, which
   can jump over an ``assert``, was set on the check's frame.

The grader counts a check as passed only when the restore was acknowledged, the reply says ``ok``,
the cell shows no error output and the token arrived (``guarded_checks``). What stays possible
in-process is written down in ``guarded_checks``.

This module only imports the standard library: the grader sends its source to the kernel, which
runs it in a module of its own, registered as ``sys.modules[MODULE_NAME]``.
"""

from __future__ import annotations

import builtins
import sys
from types import MethodType
from typing import Any

__all__ = ["MODULE_NAME", "COMM_ID", "WITNESS_KEY", "install", "restore", "witness", "Snapshot"]

MODULE_NAME = "_edumatcher_kernel_guard"
COMM_ID = "edumatcher-grader-witness"
WITNESS_KEY = "edumatcher_check_token"

# Methods on the path from an execute request to its reply and its error output. Each is put back
# on the instance (an attribute shadowing the class's) and on every class of the object's MRO.
SHELL_METHODS = (
    "run_cell", "run_cell_async", "_run_cell", "should_run_async", "transform_cell", "transform_ast",
    "run_ast_nodes", "run_code", "showtraceback", "_showtraceback", "showsyntaxerror",
    "showindentationerror", "set_custom_exc", "CustomTB", "user_expressions", "_get_exc_info",
    "get_exception_only", "excepthook", "init_user_ns", "ex", "ev",
)
KERNEL_METHODS = (
    "do_execute", "execute_request", "dispatch_shell", "process_one", "dispatch_queue",
    "send_response", "finish_metadata", "init_metadata", "_publish_execute_input", "_publish_status",
    "get_parent", "_abort_queues",
)
SESSION_METHODS = ("send", "serialize", "sign", "msg", "msg_header", "pack")
# Shell attributes put back by identity (the object itself, not its contents).
SHELL_OBJECTS = ("events", "input_transformer_manager", "display_pub", "displayhook", "display_trap",
                 "compile", "custom_exceptions", "kernel", "payload_manager", "history_manager", "user_module",
                 "user_ns")
KERNEL_OBJECTS = ("session", "shell", "iopub_socket", "shell_handlers")
SYS_NAMES = ("excepthook", "displayhook", "stdout", "stderr", "settrace", "setprofile")
# IPython's BuiltinTrap adds and removes the first three around every cell, and ipykernel swaps
# ``input`` per request (stdin allowed or not): they are left to them.
BUILTINS_LEFT_TO_IPYTHON = frozenset({"exit", "quit", "get_ipython", "input", "raw_input"})

_MISSING = object()


def _same(current: Any, saved: Any) -> bool:
    """Identity, except that a bound method is a new object at each access (``shell.excepthook``)."""
    if current is saved:
        return True
    return (isinstance(current, MethodType) and isinstance(saved, MethodType)
            and current.__func__ is saved.__func__ and current.__self__ is saved.__self__)


def _method_state(obj: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """Per name: the instance's own attribute (or _MISSING) and each MRO class's own attribute."""
    state: dict[str, Any] = {}
    for name in names:
        own = vars(obj).get(name, _MISSING) if hasattr(obj, "__dict__") else _MISSING
        per_class = [(cls, vars(cls)[name]) for cls in type(obj).__mro__ if name in vars(cls)]
        state[name] = (own, per_class)
    return state


def _put_methods_back(obj: Any, state: dict[str, Any], apply: bool) -> list[str]:
    """Names that differ from ``state``; put back too when ``apply``."""
    changed: list[str] = []
    for name, (own, per_class) in state.items():
        current = vars(obj).get(name, _MISSING) if hasattr(obj, "__dict__") else _MISSING
        if not _same(current, own):
            changed.append(name)
            if apply and own is _MISSING:
                del vars(obj)[name]
            elif apply:
                vars(obj)[name] = own
        for cls, value in per_class:
            if not _same(vars(cls).get(name, _MISSING), value):
                changed.append(f"{cls.__name__}.{name}")
                if apply:
                    setattr(cls, name, value)
        # A class attribute added since the snapshot (on any class of the MRO) would shadow the original.
        known = {cls for cls, _ in per_class}
        for cls in type(obj).__mro__:
            if cls not in known and name in vars(cls) and cls is not object:
                changed.append(f"{cls.__name__}.{name}")
                if apply:
                    delattr(cls, name)
    return changed


class Snapshot:
    """What the execution machinery looked like when the kernel started, and how to put it back."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.kernel = getattr(shell, "kernel", None)
        self.session = getattr(self.kernel, "session", None)
        self.shell_methods = _method_state(shell, SHELL_METHODS)
        self.shell_objects = {name: getattr(shell, name, _MISSING) for name in SHELL_OBJECTS}
        manager = shell.input_transformer_manager
        self.transformer_lists = {name: list(getattr(manager, name, ())) for name in
                                  ("cleanup_transforms", "line_transforms", "token_transformers")}
        self.input_transformers_post = list(shell.input_transformers_post)
        self.ast_transformers = list(shell.ast_transformers)
        self.callbacks = {event: list(funcs) for event, funcs in shell.events.callbacks.items()}
        self.kernel_methods = _method_state(self.kernel, KERNEL_METHODS) if self.kernel is not None else {}
        self.kernel_objects = {name: getattr(self.kernel, name, _MISSING) for name in KERNEL_OBJECTS}
        handlers = self.kernel_objects.get("shell_handlers")
        self.shell_handlers = dict(handlers) if isinstance(handlers, dict) else None
        self.session_methods = _method_state(self.session, SESSION_METHODS) if self.session is not None else {}
        self.sys_values = {name: getattr(sys, name) for name in SYS_NAMES}
        # A trace function can skip lines (frame.f_lineno = ...), so skip an assert.
        self.trace, self.profile = sys.gettrace(), sys.getprofile()
        self.builtins = {name: value for name, value in vars(builtins).items()
                         if name not in BUILTINS_LEFT_TO_IPYTHON}
        # Names in a cell resolve builtins through its namespace's "__builtins__", not the module: a private
        # dict there gives a cell its own AssertionError, isinstance... whatever the builtins module holds.
        self.user_builtins = shell.user_ns.get("__builtins__", _MISSING)
        # Bound now: witness() must not go through anything the student may have replaced since.
        self.send = getattr(self.session, "send", None)
        self.iopub = getattr(self.kernel, "iopub_socket", None)
        self.get_parent = getattr(self.kernel, "get_parent", None)

    def restore(self, apply: bool = True, *, execution_only: bool = False) -> list[str]:
        """Put everything back as it was at the snapshot; return what had changed.

        With ``apply=False`` nothing is touched: the list says what differs now. With
        ``execution_only``, only what decides whether a cell's lines run and how its errors are
        reported is looked at (transformers, the execute path, trace and profile functions), not
        event callbacks, ``sys`` streams and hooks or builtins: honest code changes those while a
        check runs (matplotlib registers a ``post_execute`` callback on first use, ``%%capture``
        swaps ``sys.stdout``), and none of them can make a line run that raised.
        """
        changed: list[str] = []
        shell = self.shell
        for name, value in self.shell_objects.items():
            if value is not _MISSING and not _same(getattr(shell, name, _MISSING), value):
                changed.append(f"shell.{name}")
                if apply:
                    setattr(shell, name, value)
        changed += [f"shell.{n}" for n in _put_methods_back(shell, self.shell_methods, apply)]
        manager = shell.input_transformer_manager
        for name, saved in self.transformer_lists.items():
            if hasattr(manager, name) and getattr(manager, name) != saved:
                changed.append(f"transformers.{name}")
                if apply:
                    setattr(manager, name, list(saved))
        if list(shell.input_transformers_post) != self.input_transformers_post:
            changed.append("shell.input_transformers_post")
            if apply:
                shell.input_transformers_post = list(self.input_transformers_post)
        if list(shell.ast_transformers) != self.ast_transformers:
            changed.append("shell.ast_transformers")
            if apply:
                shell.ast_transformers = list(self.ast_transformers)
        callbacks = {} if execution_only else shell.events.callbacks
        for event in list(callbacks):
            saved = self.callbacks.get(event, [])
            if callbacks[event] != saved:
                changed.append(f"events.{event}")
                if apply:
                    callbacks[event][:] = saved  # in place: IPython keeps references to these lists
        if self.kernel is not None:
            for name, value in self.kernel_objects.items():
                if value is not _MISSING and not _same(getattr(self.kernel, name, _MISSING), value):
                    changed.append(f"kernel.{name}")
                    if apply:
                        setattr(self.kernel, name, value)
            if self.shell_handlers is not None and self.kernel.shell_handlers != self.shell_handlers:
                changed.append("kernel.shell_handlers")
                if apply:
                    self.kernel.shell_handlers.clear()
                    self.kernel.shell_handlers.update(self.shell_handlers)
            changed += [f"kernel.{n}" for n in _put_methods_back(self.kernel, self.kernel_methods, apply)]
        if self.session is not None:
            changed += [f"session.{n}" for n in _put_methods_back(self.session, self.session_methods, apply)]
        for name, value in ({} if execution_only else self.sys_values).items():
            if not _same(getattr(sys, name), value):
                changed.append(f"sys.{name}")
                if apply:
                    setattr(sys, name, value)
        namespace = shell.user_ns
        if self.user_builtins is not _MISSING and namespace.get("__builtins__", _MISSING) is not self.user_builtins:
            changed.append("user_ns.__builtins__")
            if apply:
                namespace["__builtins__"] = self.user_builtins
        if not _same(sys.gettrace(), self.trace):
            changed.append("sys.gettrace()")
            if apply:
                sys.settrace(self.trace)
        if not _same(sys.getprofile(), self.profile):
            changed.append("sys.getprofile()")
            if apply:
                sys.setprofile(self.profile)
        table = vars(builtins)
        for name, value in ({} if execution_only else self.builtins).items():
            if not _same(table.get(name, _MISSING), value):
                changed.append(f"builtins.{name}")
                if apply:
                    table[name] = value
        return changed

    def witness(self, token: str, frame: Any) -> None:
        """Send ``token`` to the grader as a comm message on IOPub, child of the running request.

        Nothing is sent when the execution machinery differs from the snapshot now (something changed
        it while the check ran, e.g. a thread re-adding a transformer after the reset: see
        ``restore(execution_only=True)`` for what counts), or when a trace function
        was set on ``frame``, the check's own: it can jump over lines, so an ``assert`` may not have run.
        """
        if self.trace is None and frame.f_trace is not None:
            return
        if self.restore(apply=False, execution_only=True):  # e.g. a thread put a transformer back
            return
        if self.send is None or self.iopub is None:
            raise RuntimeError("the grading kernel has no IOPub channel to report on")
        parent = self.get_parent("shell") if self.get_parent is not None else self.kernel._parent_header
        self.send(self.iopub, "comm_msg", {"comm_id": COMM_ID, "data": {WITNESS_KEY: token}}, parent=parent)


_snapshot: Snapshot | None = None


def install(shell: Any) -> str:
    """Snapshot ``shell`` (the kernel's InteractiveShell) once; later calls keep the first snapshot."""
    global _snapshot
    if _snapshot is None:
        _snapshot = Snapshot(shell)
    return "installed"


def restore(ack: str) -> str:
    """Put the snapshot back; return ``ack`` so the grader knows this ran (KeyError-free on purpose)."""
    if _snapshot is None:
        raise RuntimeError("the kernel guard was never installed")
    _snapshot.restore()
    return ack


def witness(token: str) -> None:
    """Report that the code before this call ran to its end (see the module docstring)."""
    if _snapshot is None:
        raise RuntimeError("the kernel guard was never installed")
    _snapshot.witness(token, sys._getframe(1))
