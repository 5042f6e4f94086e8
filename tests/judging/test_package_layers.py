"""The judging package imports in one direction only: no module imports one that imports it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pooling.judging

PACKAGE = Path(pooling.judging.__file__).parent


def imports_of(path: Path) -> set[str]:
    """The judging modules a module imports, at top level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pooling.judging."):
            found.add(node.module.split(".")[2])  # pooling.judges.backends.base: backends
    return found


def test_the_judging_modules_form_no_import_cycle():
    graph = {p.stem: imports_of(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert {"history", "rounds", "judgments", "assessors", "rules"} <= set(graph)
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", "import cycle: " + " -> ".join([*path, module])
        state[module] = "open"
        for other in graph.get(module, ()):
            visit(other, [*path, module])
        state[module] = "done"

    for module in graph:
        visit(module, [])
    # The bottom layer imports no other judging module: the registries, then the item types
    # on them, then the history of judgments of those items.
    assert graph["plugins"] == set()
    assert graph["item_types"] == {"plugins"}
    assert graph["history"] == {"item_types"}


def pooling_imports_of(path: Path) -> set[str]:
    """Every pooling module a module imports, at top level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m == "pooling" or m.startswith("pooling.")}


def test_the_judge_backends_never_touch_the_store():
    """Backends import nothing else from pooling.judges, nor pooling.judging or
    pooling.store, so any judge may use them and they can run without a store."""
    backends = PACKAGE.parent / "judges" / "backends"
    modules = sorted(backends.glob("*.py"))
    assert {p.stem for p in modules} >= {"base", "prompt", "openai_chat", "command", "learned",
                                         "registry"}
    for path in modules:
        for module in pooling_imports_of(path):
            inside = module.startswith("pooling.judges.backends")
            assert inside or not module.startswith(
                ("pooling.judges", "pooling.judging", "pooling.store")), (
                f"backends/{path.name} imports {module}")
            assert module != "pooling", f"backends/{path.name} imports the whole package"


# -- one judging core: every rule of a judgment in pooling.judging, asked by pooling.web ---

POOLING = PACKAGE.parent
WEB = POOLING / "web"
INSERT_INTO_JUDGMENTS = re.compile(r"\bINSERT\s+(?:OR\s+\w+\s+)?INTO\s+judgments\b", re.I)
ASSIGNMENT_SQL = re.compile(r"\b(?:FROM|JOIN)\s+assignments\b", re.I)
GRADE_ON_SCALE = re.compile(r"\bgrade\w*\s+(?:not\s+)?in\s+[\w.]*grades\b")


def sources(root: Path) -> dict[str, str]:
    """Every module under root, by its path relative to the pooling package."""
    return {str(p.relative_to(POOLING)): p.read_text() for p in sorted(root.rglob("*.py"))}


def test_judging_and_the_judges_never_import_web():
    for path in sorted([*PACKAGE.rglob("*.py"), *(PACKAGE.parent / "judges").rglob("*.py")]):
        web = [m for m in pooling_imports_of(path) if m == "pooling.web" or m.startswith("pooling.web.")]
        assert not web, f"{path.relative_to(PACKAGE.parent)} imports {', '.join(web)}"


def test_exactly_one_module_holds_sql_that_inserts_into_judgments():
    holders = [name for name, text in sources(POOLING).items() if INSERT_INTO_JUDGMENTS.search(text)]
    assert holders == ["judging/judgments.py"]


def test_the_web_package_checks_no_grade_reads_no_assignments_and_inserts_no_judgment():
    """Pages, routing, sessions, caching and group commit only: the rules are judging's."""
    for name, text in sources(WEB).items():
        assert not GRADE_ON_SCALE.search(text), f"{name} checks a grade against a scale"
        assert not ASSIGNMENT_SQL.search(text), f"{name} reads the assignments table"
        assert not INSERT_INTO_JUDGMENTS.search(text), f"{name} inserts into judgments"


def private_imports(path: Path) -> list[str]:
    """The private names a module takes from another pooling module: `from m import _x` (or
    `x as _x`, a public name hidden under a private one), or `m._x` on a pooling module it
    imported."""
    tree = ast.parse(path.read_text())
    modules: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.startswith("pooling"):
            for alias in node.names:
                if alias.name.startswith("_") or (alias.asname or "").startswith("_"):
                    found.append(f"{node.module}.{alias.name}")
                else:  # perhaps a module (from pooling.web import campaign)
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name.startswith("pooling"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_private_name_is_imported_across_modules_in_judging_or_web():
    for root in (PACKAGE, WEB):
        for path in sorted(root.rglob("*.py")):
            assert private_imports(path) == [], f"{path.relative_to(POOLING)} takes private names"


def test_the_private_name_check_sees_both_forms(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from pooling.judging.history import _x\nfrom pooling.web import campaign\n"
                      "from pooling.judging.judgments import may_judge as _may_judge\n"
                      "campaign._seconds(1)\n")
    assert private_imports(module) == ["pooling.judging.history._x",
                                       "pooling.judging.judgments.may_judge", "campaign._seconds"]
