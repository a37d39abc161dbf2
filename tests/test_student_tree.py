"""``release --student-tree``: the class repository holds the course and no answer.

One tree is written from this repository (module fixture, under a second) and read by most tests;
the refusal and ``--force`` cases write small trees of their own. The proofs: no solution or
hidden-test marker or line anywhere, no ``solutions/`` or ``tests/`` referenced by ``make`` or
Binder, the package imports from the tree, chapters' links resolve, and an exercise solved in the
tree passes its visible checks under nbval with the tree's package.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from edumatcher.cli import main
from edumatcher.grading.notebook_cells import (
    BEGIN_HIDDEN_TESTS,
    BEGIN_SOLUTION,
    END_HIDDEN_TESTS,
    END_SOLUTION,
    find_regions,
    grade_id,
    is_answer,
    source_text,
)
from edumatcher.grading.release import released_texts
from edumatcher.grading.student_tree import MARKER_NAME, student_makefile, student_readme

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
# The grader's own source names the markers it looks for; that is vocabulary, not a leak.
MARKER_VOCABULARY = Path("edumatcher", "grading")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("class") / "student"
    assert main(["release", str(SOLUTIONS), "--student-tree", str(out), "--binder-repo", "uni-x/perf-2027"]) == 0
    return out


def text_files(folder: Path) -> dict[Path, str]:
    texts = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            texts[path.relative_to(folder)] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return texts


REGIONS = {"solution": (BEGIN_SOLUTION, END_SOLUTION), "hidden": (BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)}


def region_lines(source_dir: Path, kinds: tuple[str, ...] = ("solution", "hidden")) -> set[str]:
    """Every stripped line inside a solution and/or hidden-test region of any source notebook."""
    lines: set[str] = set()
    for path in sorted(source_dir.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            text = source_text(cell)
            split = text.split("\n")
            for kind in kinds:
                for first, last in find_regions(text, *REGIONS[kind]):
                    lines.update(line.strip() for line in split[first + 1:last])
    return lines


def secret_lines(kinds: tuple[str, ...] = ("solution", "hidden"),
                 public_folders: tuple[str, ...] = ("course", "edumatcher", "binder"),
                 ) -> set[str]:
    """Region lines that the course does not already show students in ``public_folders`` or the exercises.

    Some answers reuse the engine's own lines (exercise 01 edits ``engine.py``; the masked ring is
    ``metrics.py``'s), and short lines (``else:``) are everywhere: those are not secrets. What is
    left appears only in ``solutions/`` (and the test fixtures that copy it).
    """
    public: set[str] = set()
    for folder in public_folders:
        for text in text_files(ROOT / folder).values():
            public.update(line.strip() for line in text.split("\n"))
    for text in released_texts(SOLUTIONS).values():
        for cell in nbformat.reads(text, as_version=4).cells:
            public.update(line.strip() for line in source_text(cell).split("\n"))
    return {line for line in region_lines(SOLUTIONS, kinds) - public if len(line) >= 12}


def leaks(texts: dict[Path, str], secrets: set[str]) -> list[str]:
    found = []
    for path, text in texts.items():
        lines = {line.strip() for line in text.replace("\\n", "\n").split("\n")}  # JSON-escaped notebook lines too
        found.extend(f"{path}: {line}" for line in sorted(lines & secrets))
    return found


def test_tree_holds_the_course_and_nothing_of_the_instructor(tree: Path) -> None:
    top = {p.name for p in tree.iterdir()}
    assert {"course", "exercises", "edumatcher", "binder", "pyproject.toml", "Makefile", "README.md",
            MARKER_NAME} <= top
    assert not {"solutions", "tests", ".ci", "artifacts", ".venv", "gradebook"} & top
    assert not [p for p in tree.rglob("*") if p.name in ("__pycache__", ".ipynb_checkpoints") or p.suffix == ".pyc"]
    written = {p.name: p.read_text(encoding="utf-8") for p in (tree / "exercises").glob("*.ipynb")}
    assert written == released_texts(SOLUTIONS)  # regenerated from the sources, so never stale
    assert sorted(p.name for p in (tree / "course").glob("*.ipynb")) == sorted(
        p.name for p in (ROOT / "course").glob("*.ipynb"))


def test_no_solution_or_hidden_test_anywhere_in_the_tree(tree: Path) -> None:
    texts = text_files(tree)
    markers = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS, "BEGIN SOLUTION", "BEGIN HIDDEN TESTS")
    with_markers = [str(p) for p, t in texts.items() if any(m in t for m in markers)]
    assert all(Path(p).is_relative_to(MARKER_VOCABULARY) for p in with_markers), with_markers
    secrets = secret_lines()
    assert len(secrets) > 200, "too few secret lines to prove anything"
    assert leaks(texts, secrets) == []
    # Hidden tests are not the package's own code either: scan the package for them too (imports aside).
    hidden = {line for line in secret_lines(("hidden",), public_folders=("course", "binder"))
              if not line.startswith(("import ", "from "))}
    assert len(hidden) > 100 and leaks(texts, hidden) == []


def test_the_leak_scan_finds_a_planted_solution(tree: Path) -> None:
    # Without this, an empty result above could mean a scan that sees nothing.
    planted = {Path("course/extra.ipynb"): (SOLUTIONS / "08_masked_ring.ipynb").read_text(encoding="utf-8"),
               Path("tests/fixtures/x.py"): "\n".join(sorted(region_lines(SOLUTIONS))[:50])}
    assert leaks(planted, secret_lines())


def test_make_and_binder_need_no_instructor_files(tree: Path) -> None:
    for path in [tree / "Makefile", *sorted((tree / "binder").iterdir())]:
        for line in path.read_text(encoding="utf-8").splitlines():
            # Commands and settings name no instructor folder; comments name no instructor path.
            pattern = r"solutions|\btests/|\.ci/" if line.lstrip().startswith("#") else r"\bsolutions\b|\btests\b|\.ci/"
            assert not re.search(pattern, line), f"{path.name}: {line}"
    # postBuild installs the tree and copies files that the tree has.
    post_build = (tree / "binder" / "postBuild").read_text(encoding="utf-8")
    for name in re.findall(r"\bbinder/[\w./-]+", post_build):
        assert (tree / name).is_file(), name
    assert "pip install --no-deps -e ." in post_build and (tree / "pyproject.toml").is_file()
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    dry = subprocess.run(["make", "-n", "lab"], cwd=tree, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    assert "jupyter lab" in dry.stdout and "course/00_start_here.ipynb" in dry.stdout
    missing = subprocess.run(["make", "-n", "test"], cwd=tree, capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "No rule to make target" in missing.stderr


def test_the_student_makefile_drops_what_needs_tests_and_refuses_what_depends_on_it() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    student = student_makefile(makefile)
    assert "\nlab:" in student and "\nclean:" in student and "\ninstall:" in student
    extra = ".PHONY: coverage\n\n# Coverage of the tests.\nCOVER_DIR := tests/cov\n\ncoverage: $(STAMP)\n" \
            "\t$(BIN)/python -m pytest tests --cov-dir $(COVER_DIR)\n\nclean2:\n\trm -rf $(COVER_DIR) x\n"
    with_extra = student_makefile(makefile + "\n\n" + extra)
    assert "coverage" not in with_extra.replace(".PHONY:", "") and "COVER_DIR" not in with_extra
    assert "clean2:\n\trm -rf x" in with_extra
    with pytest.raises(Exception, match="needs coverage"):
        student_makefile(makefile + "\n\n" + extra + "\nreport: coverage\n\techo done\n")


def test_the_package_and_its_cli_import_from_the_tree(tree: Path) -> None:
    code = "import edumatcher, edumatcher.cli, edumatcher.grading.cli; print(edumatcher.__file__)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()).resolve().is_relative_to(tree.resolve())


def test_every_relative_link_in_a_chapter_resolves_in_the_tree(tree: Path) -> None:
    checked = 0
    for chapter in sorted((tree / "course").glob("*.ipynb")):
        for cell in nbformat.read(chapter, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for target in re.findall(r"\]\(([^)\s]+)\)", cell.source):
                if re.match(r"[a-z]+:|#", target):
                    continue
                path = (chapter.parent / target.split("#")[0]).resolve()
                assert path.exists(), f"{chapter.name} links {target}, missing in the student tree"
                checked += 1
    assert checked > 10
    assert (tree / "exercises" / "01_next_one_percent.ipynb").is_file()


def test_student_readme_has_no_instructor_material(tree: Path) -> None:
    readme = (tree / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"solutions|hidden test|\btests/|make test`?\s*$|## For instructors|nbgrader|gradebook",
                         readme, re.IGNORECASE | re.MULTILINE)
    assert "There is no `make test` in this copy" in readme
    assert "mybinder.org/v2/gh/uni-x/perf-2027/main?urlpath=lab/tree/course/00_start_here.ipynb" in readme
    assert "01_next_one_percent" in readme  # the chapter table is kept
    with pytest.raises(Exception, match="binder-repo"):
        student_readme("# x\n", binder_repo="not a repo")


def test_out_must_be_empty_and_force_replaces_only_an_earlier_tree(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    for extra in ([], ["--force"]):
        assert main(["release", str(SOLUTIONS), "--student-tree", str(mine), *extra]) == 1
    assert [p.name for p in mine.iterdir()] == ["keep.txt"]
    err = capsys.readouterr().err
    assert err.count("Error: ") == 2 and "not written by --student-tree" in err

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["release", str(SOLUTIONS), "--student-tree", str(empty)]) == 0
    (empty / "course" / "scribble.txt").write_text("old")
    assert main(["release", str(SOLUTIONS), "--student-tree", str(empty)]) == 1
    assert "pass --force" in capsys.readouterr().err
    assert main(["release", str(SOLUTIONS), "--student-tree", str(empty), "--force"]) == 0
    assert not (empty / "course" / "scribble.txt").exists() and (empty / MARKER_NAME).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "notes"]  # no partial folders left


def _solved_from_tree(tree: Path, name: str) -> nbformat.NotebookNode:
    """The tree's student copy with each answer cell replaced by the solution's (hidden tests stay absent)."""
    student = nbformat.read(tree / "exercises" / f"{name}.ipynb", as_version=4)
    answers = {grade_id(c): c.source for c in nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4).cells
               if is_answer(c)}
    for cell in student.cells:
        if is_answer(cell) and cell.cell_type == "code":
            cell.source = answers[grade_id(cell)]
    student.cells.insert(0, nbformat.v4.new_code_cell(
        "import os, edumatcher\n"
        "assert edumatcher.__file__.startswith(os.environ['STUDENT_TREE']), edumatcher.__file__"))
    return student


@pytest.mark.slow
def test_an_exercise_solved_in_the_tree_passes_under_nbval_with_the_trees_package(tree: Path, tmp_path: Path) -> None:
    notebook = tmp_path / "04_exact_ticks.ipynb"
    nbformat.write(_solved_from_tree(tree, "04_exact_ticks"), notebook)
    env = {**os.environ, "PYTHONPATH": str(tree), "STUDENT_TREE": str(tree.resolve())}
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval-lax",
                          "--rootdir", str(tmp_path), "-o", "addopts=", str(notebook)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", run.stdout)
