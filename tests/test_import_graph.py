"""The package's imports form no circle: every `import` and `from ... import` of an `autograder`
module, anywhere in a module (a function's body too: a lazy import is still an edge), relative
imports resolved, read with `ast` without importing anything."""
from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "autograder"


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for __init__)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _package_of(name: str, path: Path) -> str:
    """The package a module's relative imports start from."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports: the module named, or, for `from X import y`,
    X.y where that is a module and X otherwise."""
    def known(dotted: str) -> str | None:
        # `import a.b.c` of something below a module (an attribute path) names the module above it.
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    edges = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, _package_of(name, path))
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if target == "autograder" or target.startswith("autograder."):
                module = known(target)
                if module and module != name:
                    edges.add(module)
    return edges


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return sorted(found)


def test_the_graph_is_read():
    graph = import_graph()
    assert "autograder.course.grading_run" in graph
    assert "autograder.engine.pipeline" in graph["autograder.commands.grading"]


def test_cycles_finds_a_circle_and_nothing_else():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_circles():
    graph = import_graph()
    found = cycles(graph)
    lines = []
    for component in found:
        members = set(component)
        lines.append(" <-> ".join(component))
        for module in component:
            lines.append(f"    {module} imports {', '.join(sorted(graph[module] & members))}")
    assert not found, "import circles in autograder/:\n" + "\n".join(lines)


# ---------------------------------------------------------------- the rooms lean as docs/architecture.md says

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
# Modules any room may import: they lean on nothing of the package (docs/architecture.md says so
# beside the table), so the table does not list them in every row.
FOUNDATION = {"errors"}


def rooms_table(text: str) -> list[tuple[list[str], set[str]]]:
    """The "Rooms" table, top to bottom: each row's rooms (`commands/`, `cli.py` -> commands, cli)
    and the rooms it leans on (the backquoted names in its last column; "everything below" is
    every room below the row; `tvm` is not a room of the package and is left out)."""
    rows = []
    section = text.split("\n## Rooms\n", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 3 or cells[0] in ("room", "---"):
            continue
        names = [_room_name(name) for name in re.findall(r"`([^`]+)`", cells[0])]
        leans = {_room_name(name) for name in re.findall(r"`([^`]+)`", cells[2])} - {"tvm"}
        if cells[2].startswith("everything below"):
            leans = {"*below*"}
        rows.append((names, leans))
    return rows


def _room_name(text: str) -> str:
    return text.strip().removesuffix("/").removesuffix(".py")


def room_of(module: str) -> str:
    """autograder.course.grading_run -> course; autograder.cli -> cli; autograder -> __init__."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def room_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """Each import between two rooms, with the modules that make it (`a imports b`)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module, imported in graph.items():
        for target in imported:
            if room_of(module) != room_of(target):
                edges.setdefault((room_of(module), room_of(target)), []).append(f"{module} imports {target}")
    return edges


def allowed_leans(rows: list[tuple[list[str], set[str]]]) -> dict[str, set[str]]:
    """What each room may import directly: the rooms its row names (a row's rooms share it)."""
    allowed: dict[str, set[str]] = {}
    for index, (names, leans) in enumerate(rows):
        if leans == {"*below*"}:
            leans = {name for below in rows[index + 1:] for name in below[0]}
        for name in names:
            allowed[name] = set(leans) | (set(names) - {name})
    return allowed


def test_the_rooms_table_is_read():
    rows = rooms_table(ARCHITECTURE.read_text(encoding="utf-8"))
    allowed = allowed_leans(rows)
    assert rows[0][0] == ["commands", "cli"]
    assert "engine" in allowed["course"] and "problems" in allowed["engine"]
    assert "course" in allowed["commands"]  # "everything below"


def test_every_room_of_the_package_has_a_row_and_every_row_leans_down_the_table():
    rows = rooms_table(ARCHITECTURE.read_text(encoding="utf-8"))
    tabled = [name for names, _ in rows for name in names]
    rooms = {room_of(module) for module in import_graph()} - FOUNDATION - {"kernel_transport"}
    assert sorted(rooms - set(tabled)) == [], "rooms of autograder/ missing from docs/architecture.md's table"
    assert sorted(set(tabled) - rooms) == [], "rows of docs/architecture.md's table that are no room of autograder/"
    for index, (names, leans) in enumerate(rows):
        below = {name for row in rows[index + 1:] for name in row[0]}
        assert leans == {"*below*"} or leans <= below, f"{names} leans on {sorted(leans - below)}, not below it in the table"


def test_every_import_between_rooms_is_one_the_table_lists():
    # Direct, not transitive: a room imports only the rooms its row names, lazy imports in a
    # function's body included, so the table is the whole list of what a room reaches for.
    allowed = allowed_leans(rooms_table(ARCHITECTURE.read_text(encoding="utf-8")))
    unlisted = []
    for (source, target), where in sorted(room_edges(import_graph()).items()):
        if target in FOUNDATION or target in allowed.get(source, set()):
            continue
        unlisted.append(f"{source} -> {target}: {where[0]}" + (f" (and {len(where) - 1} more)" if len(where) > 1 else ""))
    assert not unlisted, "imports docs/architecture.md's rooms table does not list:\n" + "\n".join(unlisted)


def test_the_foundation_leans_on_nothing():
    graph = import_graph()
    for module in graph:
        if room_of(module) in FOUNDATION | {"kernel_transport"}:
            assert graph[module] == set(), f"{module} imports {sorted(graph[module])}"


def test_an_import_the_table_does_not_list_is_found():
    table = ("# Architecture\n\n## Rooms\n\n| room | what it holds | leans on |\n| --- | --- | --- |\n"
             "| `commands/`, `cli.py` | commands | everything below |\n| `course/` | the class run | `engine` |\n"
             "| `engine/` | one grading | `problems` |\n| `problems/` | problems | `tvm` only |\n\n## Next\n")
    allowed = allowed_leans(rooms_table(table))
    assert allowed["cli"] == {"commands", "course", "engine", "problems"} and allowed["problems"] == set()
    edges = room_edges({"autograder.course.run": {"autograder.engine.pipeline", "autograder.problems.base"},
                        "autograder.engine.pipeline": {"autograder.problems.base"}, "autograder.problems.base": set()})
    unlisted = [edge for edge in edges if edge[1] not in allowed[edge[0]]]
    assert unlisted == [("course", "problems")]  # direct: course reaching problems through engine is not enough
