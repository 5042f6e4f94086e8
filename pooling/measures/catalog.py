"""The registry as a table, for `pooling measures` and docs/evaluation.md (generated, never typed)."""

from __future__ import annotations

from pooling.measures.registry import SPECS
from pooling.measures.spec import Params


def measure_rows() -> list[tuple[str, str, str, str]]:
    """(name, ir_measures spelling, parameters, description) for every measure."""
    rows = []
    for spec in SPECS:
        if spec.params is Params.NONE:
            params = ""
        else:
            params = f"{spec.params.value}" + (f" (default {spec.default})" if spec.default else "")
        ir = spec.ir_name or ""
        name = spec.name if spec.trec else "-"
        rows.append((name, ir, params, spec.description))
    return rows


def measure_table() -> str:
    """Plain-text table of `measure_rows`, columns aligned."""
    header = ("trec_eval name", "ir_measures", "parameters", "description")
    rows = [header, *measure_rows()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for r in rows:
        lines.append("  ".join(r[i].ljust(widths[i]) for i in range(3)) + "  " + r[3])
    return "\n".join(line.rstrip() for line in lines)


def measure_markdown() -> str:
    """Markdown table of `measure_rows` (docs/evaluation.md's measure table is exactly this)."""
    lines = ["| trec_eval name | ir_measures | parameters | description |", "|---|---|---|---|"]
    for name, ir, params, description in measure_rows():
        cells = [name, f"`{ir}`" if ir else "", params, description]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
