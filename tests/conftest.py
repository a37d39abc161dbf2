"""Suite-wide hooks: a run summary that .ci/run can check, and artifact paths in the summary.

Kept small on purpose; fixtures for one area live in that area's own conftest.

- ``artifacts/test-run.txt`` is rewritten at the end of every session with pytest's exit
  status and, for each marker in ``TRACKED_MARKERS``, how many such tests were selected,
  passed, failed and were skipped (``key=value`` lines, easy to read from bash). ``.ci/run``
  reads it to fail a CI run whose browser or Binder tests were skipped or deselected: a green
  run that never opened a browser proves nothing about the browser.
- Tests register lines for the terminal summary (where their screenshots and reports went)
  through the ``terminal_summary`` fixture, so the paths show even without ``-s``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
RUN_SUMMARY = ARTIFACTS / "test-run.txt"
TRACKED_MARKERS = ("browser", "binder")


class _RunRecorder:
    """Plugin that counts outcomes for every test in the session and writes the run summary.

    Registered as a plugin rather than written as conftest hooks: hooks in this conftest
    would only see reports of tests under ``tests/``, not the notebooks nbval runs.
    """

    name = "edumatcher-run-recorder"

    def __init__(self) -> None:
        self.markers_by_test: dict[str, set[str]] = {}
        self.outcomes: dict[str, str] = {}
        self.summary_lines: list[str] = []

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # A summary left by an earlier run must never be mistaken for this run's.
        RUN_SUMMARY.unlink(missing_ok=True)

    @pytest.hookimpl(trylast=True)  # after ``-m``/``-k`` deselection, so only tests that will run count
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            self.markers_by_test[item.nodeid] = {m for m in TRACKED_MARKERS if item.get_closest_marker(m)}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold each phase's report into one outcome per test: failed > skipped > passed."""
        previous = self.outcomes.get(report.nodeid)
        if report.failed:
            self.outcomes[report.nodeid] = "failed"
        elif report.skipped and previous != "failed":
            self.outcomes[report.nodeid] = "skipped"
        elif report.when == "call" and report.passed and previous is None:
            self.outcomes[report.nodeid] = "passed"

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        outcomes = self.outcomes
        lines = [f"exitstatus={int(exitstatus)}", f"tests_passed={sum(o == 'passed' for o in outcomes.values())}"]
        for marker in TRACKED_MARKERS:
            selected = [nodeid for nodeid, names in self.markers_by_test.items() if marker in names]
            lines.append(f"{marker}_selected={len(selected)}")
            for outcome in ("passed", "failed", "skipped"):
                count = sum(outcomes.get(nodeid) == outcome for nodeid in selected)
                lines.append(f"{marker}_{outcome}={count}")
        ARTIFACTS.mkdir(exist_ok=True)
        RUN_SUMMARY.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.summary_lines:
            terminalreporter.section("artifacts")
            for line in self.summary_lines:
                terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(_RunRecorder.name):
        config.pluginmanager.register(_RunRecorder(), _RunRecorder.name)


@pytest.fixture(scope="session")
def terminal_summary(pytestconfig: pytest.Config) -> Callable[[str], None]:
    """Return ``add(line)``: *line* is printed in the terminal summary at the end of the run."""
    lines = pytestconfig.pluginmanager.get_plugin(_RunRecorder.name).summary_lines

    def add(line: str) -> None:
        if line not in lines:
            lines.append(line)

    return add
