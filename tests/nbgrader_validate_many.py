"""Run nbgrader's own validator on several notebooks in one process and print the results as JSON.

Runs under the nbgrader tool environment (``.venv-nbgrader/bin/python``, made by ``make``), never
under the course's ``.venv``: ``tests/test_nbgrader_compat.py`` starts it. Usage::

    python tests/nbgrader_validate_many.py [--invert|--normal] NOTEBOOK... [--invert|--normal] NOTEBOOK...

It calls ``nbgrader.validator.Validator.validate`` - what ``nbgrader validate`` runs for each file -
and prints ``{path: {"verdict": "pass"|"fail", "results": {...}, "error": str, "log": [str]}}`` (``log``:
what nbgrader logged at warning level or above, e.g. the reason it refused a cell's metadata). The verdict
follows ``Validator.validate_and_print``: a cell whose type or locked text changed fails either
way; otherwise a normal run passes when no graded cell failed, an inverted one (the notebooks after
``--invert``, until a ``--normal``) when none passed. One process for many notebooks pays nbgrader's
start-up once.
"""

from __future__ import annotations

import json
import logging
import sys
import traceback


class _Collect(logging.Handler):
    """Keeps the messages nbgrader logs while one notebook is validated."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def main(argv: list[str]) -> int:
    """Validate each notebook in ``argv`` (``--invert``/``--normal`` switch the mode); print JSON; exit 0."""
    from nbgrader.validator import Validator

    validators = {False: Validator(invert=False), True: Validator(invert=True)}
    collect = _Collect()
    for validator in validators.values():
        validator.log.addHandler(collect)
    invert = False
    report = {}
    for path in argv:
        if path in ("--invert", "--normal"):
            invert = path == "--invert"
            continue
        validator = validators[invert]
        collect.messages = []
        try:
            results = validator.validate(path)
        except Exception as exc:  # nbgrader's own refusal (bad metadata) is a result, not a crash
            report[path] = {"verdict": "fail", "results": {}, "error": f"{type(exc).__name__}: {exc}",
                            "traceback": traceback.format_exc(), "log": collect.messages}
            continue
        bad = ["type_changed", "changed", "passed" if invert else "failed"]
        verdict = "fail" if any(results.get(key) for key in bad) else "pass"
        report[path] = {"verdict": verdict, "results": results, "error": "", "log": collect.messages}
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
