"""The judging package imports in one direction only: no module imports one that imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import pooling.judging

PACKAGE = Path(pooling.judging.__file__).parent


def imports_of(path: Path) -> set[str]:
    """The judging modules a module imports, at top level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pooling.judging."):
            found.add(node.module.rsplit(".", 1)[1])
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
    assert graph["history"] == set()  # the bottom layer imports no other judging module
