"""Stop a grading run cleanly on Ctrl-C, SIGTERM or SIGHUP: the signal becomes an exception, once.

While grading, the first signal raises ``GradingStopped`` in the main thread; ``grade_submissions``
then starts no new worker and kills the running ones with their kernels, and the caller exports
what the gradebook already holds. Later signals (and any signal once ``raising`` is off, e.g. during
the export) are only remembered, so the export finishes and the exit code still says what happened.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

__all__ = ["STOP_SIGNALS", "GradingStopped", "StopOnSignals"]

# SIGHUP does not exist on Windows; only the signals this platform has are handled.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class GradingStopped(BaseException):
    """Raised by a stop signal; a ``BaseException`` so no ``except Exception`` in grading swallows it."""

    def __init__(self, signum: int) -> None:
        """Remember which signal stopped the run."""
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopOnSignals:
    """Context manager: install the stop handlers, restore the previous ones on exit.

    ``signum`` is the first stop signal received (None if none); ``exit_code`` is ``128 + signum``.
    Outside the main thread (where Python allows no handlers) it does nothing.
    """

    def __init__(self) -> None:
        """Start with no signal seen and raising on."""
        self.signum: int | None = None
        self.raising = True
        self._previous: dict[int, Any] = {}

    @property
    def exit_code(self) -> int:
        """The conventional exit status for death by the received signal (0 when none came)."""
        return 128 + self.signum if self.signum is not None else 0

    @property
    def name(self) -> str:
        """The received signal's name, e.g. ``SIGINT`` ("" when none came)."""
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
        if first and self.raising:
            self.raising = False
            raise GradingStopped(signum)

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()
