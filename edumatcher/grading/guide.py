"""``python -m edumatcher guide``: the instructor's guide, generated from the course so it cannot drift.

``site/instructors/guide.md`` is written from what the repository holds:

* each chapter's title and learning outcomes (its "After this chapter you will be able to" list),
  its estimated reading time (words of its Markdown cells at ``WORDS_PER_MINUTE``: computed, an
  estimate for careful technical reading) and its measured time to run;
* each exercise (``solutions/NN_*.ipynb``): its points (checks and written answers), how many checks
  and how many of them hold hidden tests, what it asks (its opening paragraph) and its measured
  time to run the model solution (the grader's time per submission, roughly);
* each chapter's "Check yourself" questions, with notes for discussing them;
* a sample term plan: one chapter a week, its exercises due a week later.

Times to run are measured, never typed: ``guide --measure`` executes every chapter and solution
once in a fresh kernel (nbclient) and records the seconds, the Python version, the CPU count and
the date in ``site/instructors/run_times.json``; the guide prints them with that provenance.
``guide --check`` writes nothing and exits 1 when the guide differs from what would be written
(``tests/test_guide.py`` runs it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

from edumatcher import CliError

__all__ = ["WORDS_PER_MINUTE", "GUIDE", "RUN_TIMES", "chapter_info", "exercise_info", "render_guide",
           "measure_run_times", "add_guide_parser"]

WORDS_PER_MINUTE = 150  # careful reading of technical prose with code beside it
GUIDE = Path("site") / "instructors" / "guide.md"
RUN_TIMES = Path("site") / "instructors" / "run_times.json"
_OUTCOMES = re.compile(r"\*\*After this chapter you will be able to\*\*\s*\n(?P<list>(?:\s*\d+\..*\n?(?:\s{3,}.*\n?)*)+)")


def _cells(path: Path) -> list[Any]:
    import nbformat

    return list(nbformat.read(str(path), as_version=4).cells)


def _title(cells: list[Any], fallback: str) -> str:
    for cell in cells:
        if cell.cell_type == "markdown":
            found = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if found:
                return found.group(1).strip()
    return fallback


def chapter_info(path: Path) -> dict[str, Any]:
    """A chapter's title, outcomes, Markdown word count, reading minutes and Check-yourself questions."""
    cells = _cells(path)
    markdown = [c.source for c in cells if c.cell_type == "markdown"]
    words = sum(len(re.findall(r"\w+", text)) for text in markdown)
    outcomes: list[str] = []
    questions: list[str] = []
    for text in markdown:
        found = _OUTCOMES.search(text + "\n")
        if found and not outcomes:
            outcomes = [" ".join(item.split()) for item in re.split(r"\n\s*\d+\.\s+", "\n" + found.group("list"))
                        if item.strip()]
        if re.match(r"#+\s*Check yourself", text.strip(), re.I):
            body = text.split("<details>", 1)[0]
            questions = [" ".join(item.split()) for item in re.split(r"\n\s*\d+\.\s+", body.split("\n", 1)[-1])
                         if item.strip()]
    return {"name": path.stem, "title": _title(cells, path.stem), "outcomes": outcomes, "words": words,
            "reading_minutes": max(1, round(words / WORDS_PER_MINUTE)), "questions": questions,
            "code_cells": sum(1 for c in cells if c.cell_type == "code")}


def exercise_info(path: Path) -> dict[str, Any]:
    """An exercise's title, points, checks, hidden checks and opening paragraph."""
    from .exercise import load_exercise
    from .feedback import hidden_checks

    exercise = load_exercise(path)
    cells = exercise.notebook.cells
    intro = ""
    for cell in cells:
        if cell.cell_type == "markdown":
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell.source)  # links as their text
            paragraphs = [" ".join(p.split()) for p in text.split("\n\n") if p.strip() and not p.lstrip().startswith("#")]
            sentences = [s for p in paragraphs for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`])", p)]
            # What the student does: the sentence saying so, else the opening one.
            asks = [s for s in sentences if re.match(r"(In this exercise|Here|You )", s)]
            chosen = list(dict.fromkeys([*sentences[:1], *asks[:1]]))
            intro = " ".join(chosen)
            break
    return {"name": exercise.name, "title": _title(cells, exercise.name), "points": exercise.max_points,
            "manual_points": float(sum(s.points for s in exercise.manual)), "checks": len(exercise.checks),
            "hidden": len(hidden_checks(exercise)), "manual": len(exercise.manual), "intro": intro,
            "check_ids": [spec.grade_id for spec in exercise.checks]}


def _seconds(value: float | None) -> str:
    if value is None:
        return "not measured"
    # A no-break space: in the guide's narrow "run" column "11 s" must not wrap between number and unit.
    return f"{value:.0f}\u00a0s" if value < 120 else f"{value / 60:.1f}\u00a0min"


def render_guide(root: str | Path = ".") -> str:
    """The guide's Markdown (MyST) text, from the chapters, the exercises and ``run_times.json``."""
    root = Path(root)
    chapters = [chapter_info(p) for p in sorted((root / "course").glob("[0-9][0-9]_*.ipynb"))]
    exercises = [exercise_info(p) for p in sorted((root / "solutions").glob("[0-9][0-9]_*.ipynb"))]
    times_path = root / RUN_TIMES
    measured = json.loads(times_path.read_text(encoding="utf-8")) if times_path.is_file() else {}
    seconds = measured.get("seconds", {})
    by_chapter: dict[str, list[dict[str, Any]]] = {}
    for exercise in exercises:
        by_chapter.setdefault(exercise["name"][:2], []).append(exercise)
    total_words = sum(c["words"] for c in chapters)
    lines = [
        "# Instructor's guide",
        "",
        "% Generated by `python -m edumatcher guide` from course/, solutions/ and run_times.json: edit those",
        "% (or edumatcher/grading/guide.py), not this file. `python -m edumatcher guide --check` compares.",
        "",
        "How to run this course as a class: what students need, what each chapter teaches and costs in "
        "time, which exercises to set, how to use the *Check yourself* questions, and a sample term. "
        "The commands for releasing, grading, reviewing and returning grades are in the README's "
        "*For instructors* section.",
        "",
        "## Prerequisites",
        "",
        "- **Students** know Python: functions, classes, dicts, lists, comprehensions and exceptions, "
        "and can run a Jupyter notebook. No prior profiling or performance work is assumed; "
        "big-O notation helps from chapter 07 on.",
        "- **Machines**: Python 3.10 or newer with `make` and `git` (`make lab`), or nothing but a browser "
        "(Binder: about one CPU and 1-2 GB of memory, sessions forgotten when idle).",
        "- **The instructor** grades on Linux with bubblewrap installed (`apt-get install bubblewrap`), from "
        "a private copy of this repository: `solutions/` holds the answers and the hidden checks.",
        "",
        "## Chapters",
        "",
        f"Reading time is estimated from each chapter's Markdown, {total_words:,} words in all, at "
        f"{WORDS_PER_MINUTE} words a minute (careful reading of technical text; code and outputs not "
        "counted). "
        + (f"Time to run is measured: every chapter executed once, top to bottom, in a fresh kernel by "
           f"`python -m edumatcher guide --measure` on {measured.get('date', '?')} (Python "
           f"{measured.get('python', '?')}, {measured.get('cpus', '?')} CPU(s), {measured.get('machine', '?')}"
           f"{'; ' + measured['note'] if measured.get('note') else ''}). Other machines differ: the same "
           "command measures yours."
           if measured else "Time to run has not been measured yet: run `python -m edumatcher guide --measure`."),
        "",
        "| chapter | reading | run | exercises |",
        "| --- | --- | --- | --- |",
    ]
    for chapter in chapters:
        names = ", ".join(f"`{e['name']}`" for e in by_chapter.get(chapter["name"][:2], [])) or "-"
        lines.append(f"| {chapter['title']} | {chapter['reading_minutes']}\u00a0min | "
                     f"{_seconds(seconds.get('course/' + chapter['name']))} | {names} |")
    lines.append("")
    for chapter in chapters:
        lines += [f"### {chapter['title']}", ""]
        if chapter["outcomes"]:
            lines += ["After this chapter students can:", ""]
            lines += [f"{number}. {item}" for number, item in enumerate(chapter["outcomes"], 1)]
            lines.append("")
        if chapter["questions"]:
            lines += [f"*Check yourself* ({len(chapter['questions'])} questions; the chapter folds its answers "
                      "away under *Answers*):", ""]
            lines += [f"{number}. {item}" for number, item in enumerate(chapter["questions"], 1)]
            lines.append("")
    lines += [
        "## Discussing *Check yourself*",
        "",
        "Every chapter ends with a few questions and their answers, folded away. They work best in class "
        "as follows:",
        "",
        "- Ask students to write an answer before opening *Answers*; collect one answer per table, then "
        "open the chapter's own.",
        "- Questions that ask *on this interpreter* have no fixed answer: have two students with different "
        "machines or Python versions read out their verdict lines, and discuss why they differ. A verdict "
        "comes from an interval, never from one number, so \"no measurable difference\" is a correct "
        "answer.",
        "- Questions that ask *what has been lost* or *why* are about a mechanism: ask for the one line "
        "of code that shows it.",
        "",
        "## Exercises to assign",
        "",
        "Each exercise is graded by `grade`: its checks score automatically (visible ones the student can "
        "run; hidden ones only the grader runs), written answers are scored with `review`. "
        + ("Time to run is the model solution's, measured with the chapters (what grading one "
           "submission costs, roughly; not the time a student needs to write it)." if measured else ""),
        "",
        "| exercise | points | checks (hidden) | written answers | run | what it asks | what the checks test |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for exercise in exercises:
        manual = f"{exercise['manual']} ({exercise['manual_points']:g} pt)" if exercise["manual"] else "-"
        lines.append(f"| `{exercise['name']}` | {exercise['points'] + exercise['manual_points']:g} | "
                     f"{exercise['checks']} ({exercise['hidden']}) | {manual} | "
                     f"{_seconds(seconds.get('solutions/' + exercise['name']))} | "
                     f"{exercise['intro'].replace('|', '/')} | "
                     + ", ".join(f"`{gid}`" for gid in exercise["check_ids"]) + " |")
    lines += ["", "## A sample term", "",
              "{weeks} weeks of one chapter each (the first two chapters share week 1), each week's exercises "
              "due a week later (declare them in `assignments.toml`: one `[[assignment]]` per week), then a "
              "final week for catching up and a written review.", "",
              "| week | read and run | assignment (due a week later) |", "| --- | --- | --- |"]
    weeks: list[list[dict[str, Any]]] = []
    for chapter in chapters:
        if weeks and chapter["name"].startswith("00"):
            weeks[-1].append(chapter)
        elif weeks and len(weeks[-1]) == 1 and weeks[-1][0]["name"].startswith("00"):
            weeks[-1].append(chapter)
        else:
            weeks.append([chapter])
    for number, week in enumerate(weeks, 1):
        set_now = [e["name"] for c in week for e in by_chapter.get(c["name"][:2], [])]
        reading = sum(c["reading_minutes"] for c in week)
        lines.append(f"| {number} | {' and '.join(c['title'] for c in week)} (about {reading} min of reading) | "
                     + (", ".join(f"`{name}`" for name in set_now) or "-") + " |")
    lines.append(f"| {len(weeks) + 1} | catch-up, late work, review of the written answers | - |")
    lines = [line.replace("{weeks}", str(len(weeks) + 1)) if line.startswith("{weeks}") else line for line in lines]
    lines.append("")
    return "\n".join(lines)


def measure_run_times(root: str | Path = ".", note: str = "") -> Path:
    """Execute every chapter and model solution once (a fresh kernel each) and write ``run_times.json``."""
    import nbclient
    import nbformat

    root = Path(root).resolve()
    seconds: dict[str, float] = {}
    for folder in ("course", "solutions"):
        for path in sorted((root / folder).glob("[0-9][0-9]_*.ipynb")):
            nb = nbformat.read(str(path), as_version=4)
            start = time.perf_counter()
            nbclient.NotebookClient(nb, timeout=1800, kernel_name="python3",
                                    resources={"metadata": {"path": str(path.parent)}}).execute()
            seconds[f"{folder}/{path.stem}"] = round(time.perf_counter() - start, 1)
            print(f"{folder}/{path.stem}: {seconds[f'{folder}/{path.stem}']} s", file=sys.stderr, flush=True)
    record = {"date": datetime.date.today().isoformat(), "python": platform.python_version(),
              "cpus": os.cpu_count(), "machine": f"{platform.system()} {platform.machine()}", "note": note,
              "seconds": seconds}
    path = root / RUN_TIMES
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return path


def add_guide_parser(sub: Any) -> None:
    """Register ``guide [--check] [--measure]``."""
    parser = sub.add_parser("guide", help="write the instructor's guide (site/instructors/guide.md) from the course",
                            description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=".", help="the course repository (default: here)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the guide is out of date")
    parser.add_argument("--measure", action="store_true",
                        help="first execute every chapter and solution and record their times in run_times.json")
    parser.add_argument("--note", default="", help="with --measure: a note on the machine (e.g. 'shared, busy')")
    parser.set_defaults(func=_guide)


def _guide(args: argparse.Namespace) -> int:
    root = Path(args.root)
    if not (root / "course").is_dir():
        raise CliError(f"{root} is not the course repository (no course/ folder)")
    if args.measure:
        print(f"wrote {measure_run_times(root, args.note)}")
    text = render_guide(root)
    path = root / GUIDE
    if args.check:
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current != text:
            print(f"{path} is out of date; run: python -m edumatcher guide", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
