"""The package's layout shows its design (issue 23): the engine at the top, then the kit, the chapters, the grader.

* no import circles among ``edumatcher``'s modules, found statically: every ``import`` anywhere in a
  module counts, a function-level one included (it runs too, only later);
* the top level of ``edumatcher/`` holds the engine modules a student reads, the command line, and four
  subpackages, and nothing else;
* each chapter's support is named after its topic: ``course/NN_<topic>.ipynb`` has
  ``edumatcher.chapters.<topic>`` (a module or a package) whenever it has support code;
* every ``edumatcher`` import in a course or solution notebook resolves, name by name;
* chapter 00 states the engine's size as a figure it computes from these very files.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "edumatcher"

ENGINE = (
    "ticks", "model", "rules", "book", "bare_book", "reference", "messages", "engine", "sinks", "metrics",
    "gc_policy", "bounded_queue", "workloads", "differential",
)
"""The engine: the modules a student reads, in reading order (chapter 00's map names exactly these)."""

TOP_LEVEL_EXTRA = ("__init__", "__main__", "cli")
SUBPACKAGES = ("benchmarks", "chapters", "grading", "kit")


def module_name(path: Path) -> str:
    """``edumatcher/kit/_runner.py`` -> ``edumatcher.kit._runner``; a package's ``__init__`` -> the package."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The ``edumatcher`` modules that module ``name`` imports, anywhere in its source that can run.

    ``from a.b import c`` names ``a.b`` and, when ``a.b.c`` is a module, that module too.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in walk_run_time(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {m for m in found if m in known and m != name}


def walk_run_time(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of *tree* except those under ``if TYPE_CHECKING:``, which never run."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                yield child
                yield from walk_run_time(child)
            continue
        yield node
        yield from walk_run_time(node)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    mods = modules()
    known = set(mods)
    return {name: imported_modules(name, path, known) for name, path in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    found = cycles(import_graph())
    assert not found, "import circles among edumatcher's modules:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_top_level_is_the_engine_and_the_command_line() -> None:
    files = {p.stem for p in PACKAGE.glob("*.py")}
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert files == set(ENGINE) | set(TOP_LEVEL_EXTRA), (
        f"not engine: {sorted(files - set(ENGINE) - set(TOP_LEVEL_EXTRA))}; "
        f"missing: {sorted(set(ENGINE) | set(TOP_LEVEL_EXTRA) - files)}")
    assert folders == set(SUBPACKAGES)


def test_the_engine_imports_nothing_but_the_engine() -> None:
    graph = import_graph()
    engine = {f"edumatcher.{m}" for m in ENGINE}
    outside = {m: sorted(d - engine - {"edumatcher"}) for m, d in graph.items() if m in engine}
    assert not any(outside.values()), {m: d for m, d in outside.items() if d}


def course_notebooks() -> list[Path]:
    return sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb"))


def notebooks() -> list[Path]:
    return course_notebooks() + sorted((REPO / "solutions").glob("*.ipynb"))


def code_without_magics(path: Path) -> Iterator[str]:
    """Each code cell's source, IPython's magics turned into Python as IPython itself would."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            yield transform(cell.source)


def edumatcher_imports(path: Path) -> set[tuple[str, str | None]]:
    """(module, name) for every ``from edumatcher... import name`` and (module, None) for ``import edumatcher...``."""
    found: set[tuple[str, str | None]] = set()
    for source in code_without_magics(path):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "edumatcher":
                found.update((node.module, alias.name) for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update((a.name, None) for a in node.names if a.name.split(".")[0] == "edumatcher")
    return found


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_imports_resolve(path: Path) -> None:
    missing = []
    for module, name in sorted(edumatcher_imports(path), key=str):
        if importlib.util.find_spec(module) is None:
            missing.append(module)
            continue
        if name is None or name == "*":
            continue
        if not hasattr(importlib.import_module(module), name) and importlib.util.find_spec(f"{module}.{name}") is None:
            missing.append(f"{module}.{name}")
    assert not missing, f"{path.name} imports what does not exist: {missing}"


def topic(path: Path) -> str:
    """``course/09_garbage_collection.ipynb`` -> ``garbage_collection``."""
    return path.stem.split("_", 1)[1]


def test_each_chapter_support_is_named_after_its_topic() -> None:
    chapters = PACKAGE / "chapters"
    supports = {p.stem for p in chapters.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in chapters.iterdir() if (p / "__init__.py").exists()}
    topics = {topic(p) for p in course_notebooks()}
    assert supports <= topics, f"support for no chapter: {sorted(supports - topics)}"
    for path in course_notebooks():
        if topic(path) in supports:
            own = f"edumatcher.chapters.{topic(path)}"
            assert any(m == own or m.startswith(own + ".") for m, _ in edumatcher_imports(path)), (
                f"{path.name} does not import its own support {own}")


def engine_lines() -> int:
    """Lines in the engine's modules, as ``wc -l`` counts them."""
    return sum(len((PACKAGE / f"{m}.py").read_text(encoding="utf-8").splitlines()) for m in ENGINE)


def test_chapter_00_names_the_engine_and_computes_its_size() -> None:
    import edumatcher

    assert tuple(edumatcher.ENGINE_MODULES) == ENGINE
    cells = nbformat.read(REPO / "course" / "00_start_here.ipynb", as_version=4).cells
    map_cell = next(c.source for c in cells if c.cell_type == "markdown" and "A first tour of the engine" in c.source)
    for m in ENGINE:
        assert f"`{m}.py`" in map_cell, f"chapter 00's map does not name {m}.py"
    # the size is computed when the chapter runs, from the same list, never typed in
    assert any("ENGINE_MODULES" in c.source and "splitlines" in c.source for c in cells if c.cell_type == "code")
    assert 1_000 < engine_lines() < 20_000


def chapter_imports(path: Path) -> list[str]:
    """What a chapter imports from the package, as README's chapter table lists it.

    An engine module by name, ``kit`` for the measuring kit (any of its modules), ``chapters.<topic>`` for a
    chapter's support (any of its modules), and ``edumatcher`` for names taken from the package's root.
    """
    names = set()
    for module, _ in edumatcher_imports(path):
        parts = module.split(".")
        if len(parts) == 1:
            names.add("edumatcher")
        elif parts[1] == "chapters":
            names.add(".".join(parts[1:3]))
        else:
            names.add(parts[1])
    order = {m: i for i, m in enumerate(("edumatcher",) + ENGINE + ("kit",))}
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def readme_chapter_rows() -> dict[str, str]:
    """README's chapter table: chapter number -> the cell of its "imports" column."""
    rows = {}
    header = None
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| chapter |"):
            header = [c.strip() for c in line.strip("|").split("|")]
            continue
        if header and line.startswith("|") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0].split()[0]] = cells[header.index("imports")]
        elif header and not line.startswith("|"):
            break
    return rows


def test_readme_lists_each_chapters_imports() -> None:
    rows = readme_chapter_rows()
    for path in course_notebooks():
        listed = [n.strip(" `") for n in rows[path.name[:2]].split(",")]
        assert listed == chapter_imports(path), f"README's chapter table, {path.name}: {listed} != {chapter_imports(path)}"


def test_every_import_in_the_package_names_a_module_that_exists() -> None:
    """A moved module's relative import (``from .profiling import``) must still find its target."""
    known = set(modules())
    missing = []
    for name, path in modules().items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif isinstance(node, ast.ImportFrom):
                target = node.module or ""
            else:
                continue
            if target.startswith("edumatcher") and target not in known:
                missing.append(f"{path.relative_to(REPO)}:{node.lineno}: {target}")
    assert not missing, "imports of modules that do not exist:\n" + "\n".join(missing)
