"""The package is built in floors: no module imports one that imports it back, no floor
imports a floor above it, and no module reaches for another module's private names.

Every module of `pooling` is read as source (its AST), and every import counts: at top level
and inside functions alike. Imports under `if TYPE_CHECKING:` are annotations only (they
never run) and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pooling

PACKAGE = Path(pooling.__file__).parent

# The floors, bottom to top. A module sits on the floor of the longest entry its dotted name
# (below `pooling.`) starts with, and may import only from its own floor or the ones below.
FLOORS: list[list[str]] = [
    ["errors", "terminal", "output_files"],  # the error tree; printing to a terminal; atomic files
    ["runner"],  # where work runs: this process or a Ray cluster; knows no domain
    ["formats"],  # file formats in, canonical Arrow tables out
    ["agreement"],  # statistics of agreement between label sets and between system rankings
    ["strategies"],  # pooling strategies, and their replays against existing qrels
    ["measures"],  # measure definitions, and estimators over a strategy's sample
    ["evaluation"],  # trec_eval-exact evaluation of runs against qrels
    ["store"],  # the DuckDB test collection
    ["judging"],  # item types, rounds, assessors, judgments, queues, rules: the judging core
    ["nuggets"],  # generated answers judged by nuggets: the item type, rounds, assignments
    ["crowds"],  # crowd rounds: the queue policy, gold, workers' quality and decisions
    # Model judges (their backends: pairs with texts in, verdicts out, no store), juries,
    # usage and reports, built on the core and the crowds' aggregation rules.
    ["judges"],
    # Label sets read from a store (stored judges, people, qrels) and agreement between them.
    ["label_sets"],
    ["leaderboard"],  # systems ranked, compared and tested for significance
    ["release"],  # a collection published: the bundle, its datasheet, and the rebuild from it
    ["web"],  # the judging server
    ["cli", "__main__"],  # the command line
]

def module_names() -> dict[str, Path]:
    """Dotted name -> source file, for every module and package of pooling."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


MODULES = module_names()
# Compiled modules (the C kernel) are modules too: importing one is no private-name import.
EXTENSIONS = {".".join([*p.relative_to(PACKAGE.parent).parts[:-1], p.name.split(".")[0]])
              for p in PACKAGE.rglob("*.so")}


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under `if TYPE_CHECKING:`."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _absolute(module: str | None, level: int, importer: str, is_package: bool) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports_of(name: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The pooling modules `name` imports, and (module, private name) pairs it takes from
    other modules: `from m import _x` and `m._x` where m is a module it imported."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    skipped = _type_checking_only(tree)
    modules: set[str] = set()
    private: set[tuple[str, str]] = set()
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node.module, node.level, name, path.name == "__init__.py")
            if source.split(".")[0] != "pooling":
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in MODULES or full in EXTENSIONS:
                    modules.add(full)
                    aliases[alias.asname or alias.name] = full
                else:
                    modules.add(source)
                    if alias.name.startswith("_") and source != name:
                        private.add((source, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "pooling":
                    modules.add(alias.name)
                    if alias.asname:
                        aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            dotted = ast.unparse(node.value)
            head, _, rest = dotted.partition(".")
            target = aliases.get(head, head) + (f".{rest}" if rest else "")
            if target in MODULES and target != name:
                private.add((target, node.attr))
    return {m for m in modules if m in MODULES and m != name}, private


GRAPH = {name: imports_of(name) for name in MODULES}


def floor_of(name: str) -> int:
    """The index in FLOORS of the module's floor (the longest matching entry)."""
    inner = name.removeprefix("pooling").removeprefix(".")
    best, level = -1, None
    for index, entries in enumerate(FLOORS):
        for entry in entries:
            if (inner == entry or inner.startswith(entry + ".")) and len(entry) > best:
                best, level = len(entry), index
    assert level is not None, f"{name} is on no floor; add its package to FLOORS"
    return level


def cycles_in(graph: dict[str, set[str]]) -> list[str]:
    """Every import cycle a depth-first walk of `graph` (name -> names it imports) meets, as
    "a -> b -> a"."""
    state: dict[str, str] = {}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == "done":
            return
        if state.get(node) == "open":
            cycles.append(" -> ".join([*path[path.index(node):], node]))
            return
        state[node] = "open"
        for other in sorted(graph[node]):
            visit(other, [*path, node])
        state[node] = "done"

    for node in sorted(graph):
        visit(node, [])
    return cycles


def test_no_module_imports_one_that_imports_it():
    assert cycles_in({name: imported for name, (imported, _) in GRAPH.items()}) == []


def test_every_module_sits_on_a_floor_and_imports_only_its_own_floor_or_below():
    upward = [f"{name} (floor {floor_of(name)}) imports {other} (floor {floor_of(other)})"
              for name, (imported, _) in sorted(GRAPH.items()) for other in sorted(imported)
              if other != "pooling" and name != "pooling" and floor_of(other) > floor_of(name)]
    assert upward == []


def test_the_package_itself_reaches_only_for_its_entry_points():
    """`import pooling` offers evaluate and Store; nothing below imports the package root."""
    importers = [name for name, (imported, _) in GRAPH.items() if "pooling" in imported]
    assert importers == []


def test_no_module_imports_another_modules_private_names():
    found = {(name, source, private) for name, (_, taken) in GRAPH.items()
             for source, private in taken}
    assert found == set()


def test_the_floor_list_names_only_packages_and_modules_that_exist():
    for entries in FLOORS:
        for entry in entries:
            assert f"pooling.{entry}" in MODULES, f"FLOORS names {entry}, which is not a module"


# -- packages as the units ------------------------------------------------------------------

LARGEST_SHARE = 0.12  # of pooling's lines, the most one top-level package may hold


def package_of(name: str) -> str:
    """The top-level package (or module) of pooling a module belongs to: `judging` for
    `pooling.judging.rounds`, `errors` for `pooling.errors`."""
    return name.removeprefix("pooling").removeprefix(".").split(".")[0]


def package_graph() -> dict[str, set[str]]:
    """Top-level package -> the other top-level packages its modules import."""
    graph: dict[str, set[str]] = {}
    for name, (imported, _) in GRAPH.items():
        if name == "pooling":
            continue
        graph.setdefault(package_of(name), set()).update(
            package_of(other) for other in imported if other != "pooling")
    return {package: others - {package} for package, others in graph.items()}


def test_every_package_sits_on_one_floor_whole():
    """A floor names whole top-level packages: no part of a package sits on another floor
    than the rest of it, so the floors hold for packages as they do for modules."""
    inner = [entry for entries in FLOORS for entry in entries if "." in entry]
    assert inner == []
    split = {package: sorted({floor_of(name) for name in MODULES
                              if package_of(name) == package})
             for package in package_graph()}
    assert {package: floors for package, floors in split.items() if len(floors) > 1} == {}


def test_no_package_imports_one_that_imports_it():
    assert cycles_in(package_graph()) == []


def test_the_cycle_walk_finds_a_cycle_of_packages():
    """The walk the two checks above share does report a cycle when there is one."""
    assert cycles_in({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a -> b -> c -> a"]


def test_no_package_imports_a_package_on_a_floor_above_it():
    upward = [f"{package} (floor {floor_of('pooling.' + package)}) imports {other} "
              f"(floor {floor_of('pooling.' + other)})"
              for package, others in sorted(package_graph().items()) for other in sorted(others)
              if floor_of("pooling." + other) > floor_of("pooling." + package)]
    assert upward == []


def package_lines() -> dict[str, int]:
    """Top-level package -> the lines of its Python source."""
    lines: dict[str, int] = {}
    for name, path in MODULES.items():
        if name != "pooling":
            lines[package_of(name)] = (lines.get(package_of(name), 0)
                                       + len(path.read_text().splitlines()))
    return lines


def test_no_package_holds_more_than_twelve_percent_of_the_lines():
    lines = package_lines()
    total = sum(lines.values()) + len(MODULES["pooling"].read_text().splitlines())
    over = {package: f"{n / total:.1%}" for package, n in lines.items()
            if n > LARGEST_SHARE * total}
    assert over == {}


def test_the_package_checks_see_the_packages_and_their_imports():
    """The checks above read a graph that holds what the package is made of: the judging
    core imports the store, the web pages the core, and the core no crowd module."""
    graph = package_graph()
    assert {"judging", "crowds", "judges", "label_sets", "web", "cli"} <= set(graph)
    assert "store" in graph["judging"] and "judging" in graph["web"]
    assert "judging" in graph["crowds"] and "crowds" not in graph["judging"]
