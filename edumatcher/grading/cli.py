"""The ``release`` and ``grade`` subcommands (registered by ``edumatcher.cli`` through ``add_parsers``).

Heavy imports (nbformat, nbclient) happen when a command runs, so ``--help`` works everywhere.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from edumatcher import CliError

__all__ = ["add_parsers"]

_GRADE_WARNING = (
    "Each kernel runs in a bubblewrap sandbox: no network, no view of the sources, the gradebook or other "
    "submissions, capped memory, processes, files and output; where bubblewrap cannot run, grade refuses "
    "unless given --sandbox none (student code then runs with your user's permissions). Each check also "
    "runs beside a decoy twin that no honest answer passes: a submission whose decoy passes is marked "
    "tampered, with 0 points, for you to review. One run at a time per --out (a lock)."
)
_UNSANDBOXED_WARNING = (
    "WARNING: student code runs UNSANDBOXED (--sandbox none), with your user's permissions: it can read and "
    "write your files and use the network; only the timeouts, the memory cap and a temporary working "
    "directory protect you. Install bubblewrap (Debian: apt-get install bubblewrap), or grade in a container."
)


def add_parsers(sub: Any) -> None:
    """Register ``release`` and ``grade`` on the top-level subparsers."""
    release = sub.add_parser(
        "release",
        help="write the student copies of the exercises (exercises/ from solutions/)",
        description=(
            "Write student copies of the source notebooks: answer regions become '# YOUR CODE HERE' + "
            "'raise NotImplementedError()', hidden tests are removed, outputs cleared, check cells locked "
            "and checksummed. With --check, write nothing and exit 1 listing each differing *.ipynb."
        ),
        epilog=("Example: python -m edumatcher release solutions/ exercises/ --check; the class repository: "
                "python -m edumatcher release --student-tree ../class-repo --binder-repo OWNER/REPO"),
    )
    release.add_argument("source", nargs="?", default="solutions", help="folder of source notebooks (default solutions)")
    release.add_argument("out", nargs="?", default="exercises", help="folder of student copies (default exercises)")
    release.add_argument("--check", action="store_true",
                         help="write nothing; exit 1 if OUT differs from what release would write")
    release.add_argument("--student-tree", metavar="TREE", default=None,
                         help="instead, write the course for students into TREE (absent or empty): course/, "
                              "exercises/ released from SOURCE, edumatcher/, binder/, pyproject.toml, a student "
                              "Makefile and README; no solutions/, no tests/, no hidden tests")
    release.add_argument("--force", action="store_true",
                         help="with --student-tree: replace TREE if an earlier --student-tree wrote it")
    release.add_argument("--binder-repo", metavar="OWNER/REPO[/BRANCH]", default=None,
                         help="with --student-tree: point the README's Binder badge at the class repository")
    release.add_argument("--assignments", metavar="FILE", default=None,
                         help="with --student-tree: the course's assignments file (default: assignments.toml "
                              "beside SOURCE, if there is one) for the README's course, instructor and due dates")
    release.set_defaults(func=_release)

    grade = sub.add_parser(
        "grade",
        help="grade submitted notebooks: restore the checks, run, score, write a gradebook",
        description=(
            "Grade submitted notebooks (files, or folders laid out as SUBMITTED/<student>/<exercise>.ipynb). "
            "Each is matched to SOURCE/<exercise>.ipynb by file name, its check cells are restored from the "
            "source (hidden tests included), and it runs in a fresh python3 kernel in a temporary directory. "
            "Each result is committed to OUT/gradebook.sqlite as it finishes; rerunning the same command "
            "grades only what is missing or changed. Ctrl-C, SIGTERM or SIGHUP stop cleanly (finished rows "
            "kept). Every run exports the whole gradebook: OUT/grades.csv, OUT/<exercise>.csv, OUT/totals.csv, "
            "OUT/points.csv, OUT/feedback/<student>/<exercise>.md and <assignment>.html (what the student reads), "
            "OUT/bundles/<student>.zip, OUT/class_report.html and OUT/autograded/<student>/<exercise>.ipynb; with "
            "--assignment also late days and penalties, OUT/canvas_import.csv, OUT/moodle_import.csv and "
            "OUT/assignment_totals.csv. " + _GRADE_WARNING
        ),
        epilog="Examples: python -m edumatcher grade submitted/ --source solutions/ --jobs 2 --roster roster.csv; "
               "then, after a late hand-in: python -m edumatcher grade submitted/ --regrade ann/04_exact_ticks",
    )
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="submitted notebook or folder of them")
    grade.add_argument("--source", default="solutions", help="folder of source notebooks (default solutions)")
    grade.add_argument("--out", default=None,
                       help="where to write the gradebook (default gradebook, or gradebook/NAME with --assignment)")
    grade.add_argument("--assignment", metavar="NAME", default=None,
                       help="grade one assignment of the assignments file: its exercises only, its due date, late "
                            "policy and extensions; the exports add late days, penalties and LMS import CSVs")
    grade.add_argument("--assignments", metavar="FILE", default="assignments.toml",
                       help="the course's assignments (default assignments.toml)")
    grade.add_argument("--jobs", type=_positive_int, default=1, help="notebooks graded at once (default 1)")
    grade.add_argument("--cell-timeout", type=_positive_int, default=60, metavar="S",
                       help="seconds one cell may run before it is interrupted (default 60)")
    grade.add_argument("--timeout", type=_positive_float, default=300.0, metavar="S",
                       help="seconds one whole notebook may take, kernel start included, before it is "
                            "killed (default 300)")
    grade.add_argument("--sandbox", choices=("auto", "bwrap", "none"), default="auto",
                       help="run each kernel in bubblewrap: auto (default) and bwrap refuse to grade where it "
                            "cannot run; none runs student code with your permissions")
    grade.add_argument("--memory-mb", type=_positive_int, default=2048, metavar="MB",
                       help="memory one kernel process may allocate (RLIMIT_DATA; default 2048); where a memory "
                            "cgroup can be made, the kernel and its children together, shared memory included")
    grade.add_argument("--max-notebook-mb", type=_positive_float, default=20.0, metavar="MB",
                       help="largest notebook graded, counted after its saved outputs are dropped (default 20); "
                            "a file over 4 times this is refused unread")
    grade.add_argument("--regrade", action="append", default=[], metavar="STUDENT[/EXERCISE]",
                       help="grade only these again (repeatable), replacing their rows; every other row is kept")
    grade.add_argument("--roster", metavar="CSV", default=None,
                       help="class list (a 'student' column, or the first column): every student gets a row for "
                            "every exercise, 'not-submitted' when missing; kept in the gradebook for later runs")
    grade.add_argument("--roster-id", metavar="COLUMN", default=None,
                       help="with a Canvas or Moodle gradebook export as --roster: the column that identifies "
                            "students (default: Canvas SIS Login ID, else ID; Moodle Username, else Email address)")
    grade.set_defaults(func=_grade)

    from .review_cli import add_review_parser  # written answers graded by people (review.py, review_server.py)
    add_review_parser(sub)
    from .feedback import add_feedback_parser
    add_feedback_parser(sub)
    from .term_export import add_totals_parser
    add_totals_parser(sub)
    from .status import add_status_parser
    add_status_parser(sub)
    from .guide import add_guide_parser
    add_guide_parser(sub)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _release(args: argparse.Namespace) -> int:
    from .startup import avoid_slow_imports

    avoid_slow_imports()
    from .release import check_release, release_tree

    if args.student_tree is not None:
        return _release_student_tree(args)
    if args.force or args.binder_repo is not None:
        raise CliError("--force and --binder-repo only apply with --student-tree TREE")
    if args.check:
        differences = check_release(args.source, args.out)
        for line in differences:
            print(line)
        if differences:
            print(f"{len(differences)} file(s) differ; run: python -m edumatcher release {args.source} {args.out}",
                  file=sys.stderr)
            return 1
        print(f"{args.out} is up to date with {args.source}")
        return 0
    report = release_tree(args.source, args.out)
    for name in report.written:
        print(f"wrote {args.out}/{name}")
    for name in report.removed:
        print(f"removed {args.out}/{name} (no source)")
    print(f"{len(report.written)} written, {len(report.unchanged)} unchanged, {len(report.removed)} removed")
    return 0


def _release_student_tree(args: argparse.Namespace) -> int:
    from .student_tree import write_student_tree

    if args.check:
        raise CliError("--check compares exercises/ only; it does not combine with --student-tree")
    from pathlib import Path

    from .student_tree import REMAINING_STEPS
    from .term import ASSIGNMENTS_FILE, load_course

    # The course's name, instructor, hand-in rule and due dates, when the repository declares them.
    declared = Path(args.assignments) if args.assignments else Path(args.source).resolve().parent / ASSIGNMENTS_FILE
    course = load_course(declared) if declared.is_file() or args.assignments else None
    report = write_student_tree(args.student_tree, source_dir=args.source, force=args.force,
                                binder_repo=args.binder_repo, course=course)
    print(f"wrote the student tree {report.out}: {report.files} files "
          f"({', '.join(report.copied)}; {len(report.exercises)} exercise notebook(s))")
    for note in report.notes:
        print(f"note: {note}")
    if report.binder and args.binder_repo is None:
        print(f"note: the README's Binder badge names {report.binder}; pass --binder-repo OWNER/REPO[/BRANCH] "
              "or edit it to name the class repository", file=sys.stderr)
    if course is None:
        print(f"note: no {ASSIGNMENTS_FILE} beside {args.source}: the README names no instructor, hand-in rule "
              "or due dates (pass --assignments FILE)", file=sys.stderr)
    print(REMAINING_STEPS.format(tree=report.out))
    return 0


def _grade(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .startup import avoid_slow_imports

    avoid_slow_imports()

    from .exercise import find_exercises
    from .identities import unify_students, unique_roster
    from .run_lock import RunLock
    from .run_plan import parse_regrade
    from .sandbox import resolve_sandbox
    from .submissions import discover_submissions

    exercises = find_exercises(args.source)
    args.assignment_spec = None
    if args.assignment is not None:
        from .term import load_course

        course = load_course(args.assignments)
        spec = course.assignments.get(args.assignment)
        if spec is None:
            raise CliError(f"{args.assignments} declares no assignment {args.assignment!r} (it has: "
                           f"{', '.join(course.assignments) or 'none'})")
        unknown = [name for name in spec.exercises if name not in exercises]
        if unknown:
            raise CliError(f"assignment {spec.name}: no exercise {', '.join(unknown)} in {args.source}")
        exercises = {name: exercises[name] for name in spec.exercises}
        args.assignment_spec = spec
        if args.out is None:
            args.out = str(Path("gradebook") / spec.name)
    if args.out is None:
        args.out = "gradebook"
    sandbox = resolve_sandbox(args.sandbox)  # before anything runs: no sandbox, no grading (unless none)
    regrade = parse_regrade(args.regrade)
    roster = None
    args.roster_entries = []
    if args.roster:
        from .term import read_lms_roster

        args.roster_entries, kind = read_lms_roster(args.roster, args.roster_id)
        roster, duplicates = unique_roster([entry.student for entry in args.roster_entries])
        for line in duplicates:
            print(line, file=sys.stderr)
        if kind != "plain":
            print(f"roster: a {kind.capitalize()} gradebook export", file=sys.stderr)
    # Matched against the known exercise names: copy suffixes, case and LMS prefixes are recognised.
    submissions, skipped = discover_submissions(args.submissions, exercises=set(exercises))
    if args.assignment_spec is not None:
        others = [s for s in submissions if s.exercise not in exercises]
        submissions = [s for s in submissions if s.exercise in exercises]
        if others:
            print(f"assignment {args.assignment_spec.name}: {len(others)} file(s) of other exercises left out, e.g. "
                  f"{others[0].path}", file=sys.stderr)
    if args.roster_entries:
        from .term import apply_aliases

        submissions, lines = apply_aliases(submissions, args.roster_entries)
        for line in lines:
            print(line, file=sys.stderr)
    if not submissions:
        raise CliError("no submissions found (expected *.ipynb files or folders of them)")
    if skipped:
        print(f"skipping {len(skipped)} file(s) that are not notebooks (*.ipynb, *.ipynb.txt, *.ipynb.json), e.g. {skipped[0]}", file=sys.stderr)
    out = Path(args.out)
    with RunLock(out):
        return _grade_locked(args, out, exercises, sandbox, regrade, roster, submissions, unify_students)


def _grade_locked(args: argparse.Namespace, out: Any, exercises: dict[str, Any], sandbox: Any, regrade: Any,
                  roster: list[str] | None, submissions: list[Any], unify_students: Any) -> int:
    """The grade command once it holds the gradebook folder's lock."""
    import sqlite3

    from .gradebook import DATABASE_NAME, Gradebook, printable
    from .report import export_gradebook, summary_table
    from .run_plan import plan_run
    from .stopping import GradingStopped, StopOnSignals
    from .supervise import grade_submissions

    book = Gradebook.open(out)
    try:
        if getattr(args, "assignment_spec", None) is not None:
            from .term import save_assignment

            save_assignment(args.assignment_spec, out)
        if roster is not None:
            entries = {entry.student: (entry.display, entry.lms) for entry in getattr(args, "roster_entries", [])}
            book.set_roster(roster, entries)
            print(f"roster: {len(roster)} student(s) from {args.roster}", file=sys.stderr)
        unified = unify_students(submissions, book.roster(), recorded=book.students())
        for line in unified.warnings:
            print(line, file=sys.stderr)
        recorded_students = set(book.students())
        for old, new in unified.renamed.items():
            if old in recorded_students:
                book.rename_student(old, new)
        submissions = unified.submissions
        # Rows where the grader itself failed are retried: they say nothing about the student's work.
        failed = {(e.result.student, e.result.exercise) for e in book.entries() if e.result.status == "error"}
        sources = {name: exercise.digest for name, exercise in exercises.items()}
        plan = plan_run(submissions, book.digests(), regrade, retry=failed, recorded_sources=book.source_digests(),
                        sources=sources)
        for changed in plan.changed:
            print(f"{changed.student}/{changed.exercise}: the file changed since it was graded; grading it again",
                  file=sys.stderr)
        for stale in plan.stale:
            print(f"{stale.student}/{stale.exercise}: graded against another version of {stale.exercise} (its checks "
                  "changed since); grading it again", file=sys.stderr)
        given = {(printable(s.student), printable(s.exercise)) for s in submissions}
        for (student, exercise), digest in sorted(book.source_digests().items()):
            if exercise in sources and digest != sources[exercise] and (student, exercise) not in given:
                print(f"{student}/{exercise}: graded against another version of {exercise}, and its file is not "
                      "among the paths given: its row is kept as it was; grade its file again", file=sys.stderr)
        if plan.unchanged:
            print(f"resuming: {len(plan.unchanged)} submission(s) already in {out / DATABASE_NAME} are kept "
                  f"(--regrade STUDENT[/EXERCISE] grades one again)", file=sys.stderr)
        print(sandbox.describe(), file=sys.stderr)
        print(sandbox.describe_limits(args.memory_mb), file=sys.stderr)
        if sandbox.kind != "bwrap":
            print(_UNSANDBOXED_WARNING, file=sys.stderr)
        print(f"grading {len(plan.todo)} submission(s) against {len(exercises)} exercise(s), {args.jobs} at a time",
              file=sys.stderr)

        by_key = {(printable(s.student), printable(s.exercise)): s for s in plan.todo}
        failure: list[str] = []

        def progress(done: int, total: int, result: Any) -> None:
            # Runs in this (main) thread as each worker finishes: one committed transaction per result.
            key = (printable(result.student), printable(result.exercise))
            submission = by_key.get(key)
            exercise = exercises.get(result.exercise)
            try:
                book.record(result, submission=submission, digest=plan.digests.get(key, "") if submission else "",
                            source_digest=exercise.digest if exercise is not None else "")
            except sqlite3.Error as exc:
                failure.append(f"{type(exc).__name__}: {exc}")
                raise _GradebookFailed from None
            print(f"[{done}/{total}] {result.student}/{result.exercise}: {result.total:g}/{result.max_points:g} "
                  f"{result.status} ({result.seconds:.1f} s)", file=sys.stderr, flush=True)

        with StopOnSignals() as stop:
            try:
                try:
                    if plan.todo:
                        grade_submissions(plan.todo, exercises, jobs=args.jobs, cell_timeout=args.cell_timeout,
                                          timeout=args.timeout, executed_dir=out / "autograded",
                                          progress=progress, sandbox=sandbox, memory_mb=args.memory_mb,
                                          max_notebook_bytes=int(args.max_notebook_mb * 1_000_000))
                finally:
                    stop.raising = False  # a signal from here on waits for the export to finish
            except (GradingStopped, _GradebookFailed):
                pass  # grade_submissions has killed every worker and kernel; what finished is committed
            stop.raising = False  # again: a signal may have landed inside the finally above
            try:
                results = export_gradebook(book, exercises, out)
            except (OSError, sqlite3.Error) as exc:
                print(f"the exports could not be written: {type(exc).__name__}: {exc}", file=sys.stderr)
                results = None
        if results is not None:
            print(summary_table(results))
            from .term_export import late_lines

            for line in late_lines(out):
                print(line)
            print(f"gradebook: {out / 'grades.csv'} (per exercise: {out}/<exercise>.csv, totals: {out}/totals.csv, "
                  f"feedback: {out}/feedback/, record: {out / DATABASE_NAME})")
        if failure:
            print(f"the gradebook {out / DATABASE_NAME} could not record a result ({failure[0]}); grading stopped, "
                  "every row recorded before is kept. Free some disk space (or fix the file), then resume with "
                  f"the same command: {_same_command(args)}", file=sys.stderr)
            return 1
        if stop.signum is not None:
            recorded = len(book.digests())
            print(f"stopped by {stop.name}: {recorded} row(s) saved in {out / DATABASE_NAME}; to resume, run the "
                  f"same command again: {_same_command(args)}", file=sys.stderr)
            return stop.exit_code
    finally:
        book.close()
    return 0


class _GradebookFailed(BaseException):
    """Recording a result failed (disk full, a broken file): stop grading, keep what is committed."""


def _same_command(args: argparse.Namespace) -> str:
    """The command line of this run, to print as the way to resume it."""
    import shlex

    if sys.argv and sys.argv[0].endswith(("edumatcher/__main__.py", "edumatcher\\__main__.py")):
        return shlex.join(["python", "-m", "edumatcher", *sys.argv[1:]])
    words = ["python", "-m", "edumatcher", "grade", *args.submissions, "--source", args.source, "--out", args.out,
             "--jobs", str(args.jobs), "--cell-timeout", str(args.cell_timeout), "--timeout", f"{args.timeout:g}"]
    words += ["--sandbox", args.sandbox, "--memory-mb", str(args.memory_mb), "--max-notebook-mb",
              f"{args.max_notebook_mb:g}"]
    for selector in args.regrade:
        words += ["--regrade", selector]
    if args.roster:
        words += ["--roster", args.roster]
    if getattr(args, "roster_id", None):
        words += ["--roster-id", args.roster_id]
    if getattr(args, "assignment", None):
        words += ["--assignment", args.assignment, "--assignments", args.assignments]
    return shlex.join(words)
