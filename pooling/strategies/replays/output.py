"""A replay's table printed, written as CSV, or plotted."""

from __future__ import annotations

import pyarrow as pa

from pooling.strategies.replays.data import SimulationError


def render_table(table: pa.Table) -> str:
    """A fixed-width text table: shares and correlations with three decimals."""
    cols = table.column_names
    cells = [[f"{v:.3f}" if isinstance(v, float) else str(v) for v in table[c].to_pylist()] for c in cols]
    widths = [max([len(c)] + [len(x) for x in col]) for c, col in zip(cols, cells, strict=True)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True))]
    for i in range(table.num_rows):
        lines.append("  ".join(col[i].rjust(w) for col, w in zip(cells, widths, strict=True)))
    return "\n".join(lines) + "\n"


def plot_found(table: pa.Table, path: str) -> None:
    """Found share against budget, one line per strategy (PNG or SVG by the file's suffix)."""
    if not str(path).lower().endswith((".png", ".svg")):
        raise SimulationError(f"--plot {path}: the file must end in .png or .svg")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise SimulationError("--plot needs matplotlib; install it with `pip install matplotlib`") from exc
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    rows = table.to_pylist()
    for label in dict.fromkeys(r["strategy"] for r in rows):
        pts = sorted((r["budget"], r["found_share"]) for r in rows if r["strategy"] == label)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xlabel("judgments per topic")
    ax.set_ylabel("share of the pool's relevant documents found")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    from pooling.output_files import write_atomically

    try:
        write_atomically(path, fig.savefig)
    finally:
        plt.close(fig)


def to_csv(table: pa.Table) -> str:
    """CSV with a header row, unquoted where possible (Python's csv module, minimal quoting)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.column_names)
    columns = [table[c].to_pylist() for c in table.column_names]
    for i in range(table.num_rows):
        writer.writerow([col[i] for col in columns])
    return buf.getvalue()
