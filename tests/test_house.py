"""The project's shape, as its next maintainer should find it (issue 49): layers that import only
the layers below them, no import circle anywhere, and no module, page or function grown past the
sizes a reader can hold.

``python tests/test_house.py`` prints every module, page and function over its size and every
circle, whatever the tests say.
"""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The project's layers, bottom first: each may import its own layer and those before it (the
#: library's own rooms are kept in order by ``tests/core/test_layout.py``).
LAYERS = ("core", "experiments", "pages.ui", "pages", "app", "benchmarks", "tests")
#: Sizes a reader can hold: lines of a module of the library, lines of a page, and lines of a
#: function's code (its docstring aside).
MODULE_LINES, PAGE_LINES, FUNCTION_LINES = 800, 400, 80


def project_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in ("core", "pages", "experiments", "benchmarks", "tests"):
        files += sorted(path for path in (ROOT / folder).rglob("*.py") if "artefacts" not in path.parts)
    return files


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str:
    if module.startswith("pages.ui"):
        return "pages.ui"
    return module.split(".")[0]


def import_targets(path: Path, modules: set | None = None):
    """Every module name ``path`` imports, at its top or inside a function, made absolute. ``from x
    import y`` gives ``x.y`` where ``modules`` holds it (y is a module), else ``x``; without
    ``modules``, both."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                inner = f"{target}.{alias.name}"
                if modules is None:
                    yield from (target, inner)
                else:
                    yield inner if inner in modules else target


def imports_of(path: Path, modules: set) -> set:
    """The project modules ``path`` imports (a name inside a module counts as that module)."""
    found = set()
    for target in import_targets(path, modules):
        while target and target not in modules:  # "core.plots.figure_table" is core.plots'
            target = target.rpartition(".")[0]
        if target:
            found.add(target)
    return found


def import_graph() -> dict:
    files = project_files()
    modules = {module_name(path) for path in files}
    return {module_name(path): imports_of(path, modules) - {module_name(path)} for path in files}


def circles(graph: dict) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward_imports(graph: dict) -> list[str]:
    rank = {layer: level for level, layer in enumerate(LAYERS)}
    wrong = []
    for importer, targets in graph.items():
        for target in targets:
            if rank[layer_of(target)] > rank[layer_of(importer)]:
                wrong.append(f"{importer} ({layer_of(importer)}) imports {target} ({layer_of(target)})")
            elif layer_of(importer) == layer_of(target) == "pages":  # pages are scripts, not modules
                wrong.append(f"{importer} imports the page {target}")
    return sorted(wrong)


def function_code_lines(lines: list[str], node) -> int:
    """Lines of a function apart from its docstring."""
    body, docstring = node.body, set()
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        docstring = set(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for line in range(node.lineno, node.end_lineno + 1) if line not in docstring)


def oversized() -> list[str]:
    found = []
    for path in project_files():
        text = path.read_text()
        name, n_lines = str(path.relative_to(ROOT)), text.count("\n") + 1
        if name.startswith("core/") and n_lines > MODULE_LINES:
            found.append(f"module {name}: {n_lines} lines (at most {MODULE_LINES})")
        if name.startswith("pages/") and not name.startswith("pages/ui/") and n_lines > PAGE_LINES:
            found.append(f"page {name}: {n_lines} lines (at most {PAGE_LINES})")
        if name.startswith("tests/"):
            continue  # a test reads top to bottom as one story; its length is the story's
        lines = text.split("\n")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = function_code_lines(lines, node)
                if size > FUNCTION_LINES:
                    found.append(f"function {name}:{node.lineno} {node.name}: {size} lines (at most {FUNCTION_LINES})")
    return found


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_every_module_is_in_a_layer(graph):
    assert {layer_of(module) for module in graph} <= set(LAYERS)


def test_nothing_imports_a_layer_above_it(graph):
    assert upward_imports(graph) == []


def test_no_import_circle_anywhere(graph):
    assert circles(graph) == []


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_page_or_function_over_its_size():
    assert oversized() == []


def test_the_size_rule_counts_code_not_docstrings():
    source = 'def f():\n    """Doc\n    string."""\n    x = 1\n\n    return x\n'
    node = ast.parse(source).body[0]
    assert function_code_lines(source.split("\n"), node) == 4


def path_edits(files=None, root=ROOT) -> list[str]:
    """Modules that change ``sys.path`` (each layer is imported as a package from the project's
    folder: ``python -m benchmarks.NAME``, ``pytest`` from the root; issue 49 removed the edits)."""
    found = []
    for path in files or project_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
                    and node.value.id == "sys"):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_module_edits_sys_path():
    assert path_edits() == []


def test_the_path_edit_finder_finds_them(tmp_path):
    edited = tmp_path / "edited.py"
    edited.write_text("import sys\nsys.path.insert(0, 'x')\n")
    clean = tmp_path / "clean.py"
    clean.write_text("import sys\nprint(sys.argv)\n")
    assert path_edits([edited, clean], root=tmp_path) == ["edited.py:2"]


#: Library calls that set BLAS threads themselves (core.matrix.threads): each must run inside
#: ``one_blas_thread``, so that its limit nests in ours whatever thread opens it.
SELF_LIMITING_CALLS = ("KMeans", "MiniBatchKMeans", "threadpool_limits")
#: Where such a call may stand alone: the limiter itself, and the server's one-time setting.
LIMIT_SETTERS = ("core/matrix/threads.py", "pages/ui/session.py")


def unnested_blas_limits(files=None, root=ROOT) -> list[str]:
    """Calls of :data:`SELF_LIMITING_CALLS` in the library, the pages and the reproductions
    that no ``with one_blas_thread()`` encloses (tests and benchmarks run in their own processes)."""
    found = []
    for path in files or [p for p in project_files() if p.relative_to(ROOT).parts[0] in ("core", "pages", "experiments")]:
        if str(path.relative_to(root)) in LIMIT_SETTERS:
            continue

        def visit(node, inside):
            if isinstance(node, ast.With):
                inside = inside or any(isinstance(item.context_expr, ast.Call)
                                       and getattr(item.context_expr.func, "id", getattr(item.context_expr.func, "attr", ""))
                                       == "one_blas_thread" for item in node.items)
            if isinstance(node, ast.Call) and not inside:
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                if name in SELF_LIMITING_CALLS:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
            for child in ast.iter_child_nodes(node):
                visit(child, inside)

        visit(ast.parse(path.read_text()), False)
    return found


def test_every_self_limiting_library_call_runs_inside_the_blas_limiter():
    assert unnested_blas_limits() == []


def test_the_unnested_limit_finder_finds_them(tmp_path):
    bare = tmp_path / "bare.py"
    bare.write_text("from sklearn.cluster import KMeans\nlabels = KMeans(2).fit_predict(X)\n")
    held = tmp_path / "held.py"
    held.write_text("with one_blas_thread():\n    labels = KMeans(2).fit_predict(X)\n")
    assert unnested_blas_limits([bare, held], root=tmp_path) == ["bare.py:2"]


if __name__ == "__main__":
    project = import_graph()
    for line in oversized() + upward_imports(project) + [" <-> ".join(c) for c in circles(project)]:
        print(line)
