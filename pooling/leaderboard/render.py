"""Text exports of leaderboards and report tables: CSV, Markdown and LaTeX (booktabs).

CSV keeps every value at full precision in separate columns; Markdown and LaTeX show each
measure as `mean ± half-width` of its t interval, the way a paper's table would.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import pyarrow as pa

from pooling.formats.csv_cells import safe_cell
from pooling.leaderboard.board import Leaderboard
from pooling.leaderboard.errors import LeaderboardError

TEXT_FORMATS = ("table", "md", "csv", "latex")

# Under every human-readable leaderboard: its ranks are counts, not row positions.
RANK_NOTE = ("rank = 1 + the number of runs significantly better, so ranks repeat and skip "
             "by the tests (e.g. 1, 1, 2, 6, 6, 9), not by row order; runs sharing a group "
             "letter are not significantly different")


def leaderboard_csv(lb: Leaderboard) -> str:
    """One row per run: run_id, the measures, their intervals, Judged@k, then the rest."""
    return table_csv(lb.table)


def display_rows(lb: Leaderboard, intervals: bool = True) -> tuple[list[str], list[list[str]]]:
    """Headers and cells for a human-readable leaderboard (rank, group, run, measures, ...);
    intervals=False leaves out each mean's interval (for a narrow terminal)."""
    headers = ["rank", "group", "run_id", *lb.measures, lb.judged_column, "topics", "flag"]
    cols = lb.table.to_pydict()
    rows = []
    for k, run_id in enumerate(cols["run_id"]):
        cells = [str(cols["rank"][k]), cols["group"][k], run_id]
        for m in lb.measures:
            # The t interval is symmetric about the mean: show its half-width.
            half = (cols[f"{m}_t_high"][k] - cols[f"{m}_t_low"][k]) / 2
            cells.append(f"{fmt(cols[m][k])} ± {fmt(half, 3)}" if intervals else fmt(cols[m][k]))
        cells += [fmt(cols[lb.judged_column][k], 3), str(cols["n_topics"][k]), cols["flag"][k]]
        rows.append(cells)
    return headers, rows


def caption(lb: Leaderboard) -> str:
    """One line saying how the table was made."""
    correction = "" if lb.correction == "none" else f", {lb.correction}-corrected"
    tests = {"t": "paired t-test", "randomization": "randomization test",
             "tukey": "randomised Tukey HSD"}
    perms = "" if lb.plan is None else f" ({permutation_note(lb)})"
    return (
        f"{lb.basis} {lb.qrels_version}; {len(lb.query_ids)} topics; ranked by {lb.primary}; "
        f"{int(lb.confidence * 100)}% t intervals; groups: {tests[lb.test]}{correction}, "
        f"alpha {lb.alpha:g}{perms}"
    )


def permutation_note(lb: Leaderboard) -> str:
    """The permutation count, how it was chosen, and the smallest corrected p it allows."""
    plan = lb.plan
    if plan is None:
        return ""
    pairs = lb.pairs.num_rows
    if not plan.chosen:
        how = "set by hand"
    elif plan.factor > 1:
        how = f"chosen for {pairs:,} pairs at alpha {plan.alpha:g}"
    else:
        how = f"chosen for alpha {plan.alpha:g}"
    kind = "p" if plan.factor == 1 else f"{plan.correction}-corrected p"
    drawn = lb.pairs["draws"].to_numpy(zero_copy_only=False)
    share = float(drawn.sum()) / (plan.count * max(len(drawn), 1))
    stopped = "" if share >= 1 else (
        f"; {share:.0%} of them drawn, stopping where the decision was already certain")
    return (f"{plan.count:,} permutations, {how}; smallest attainable {kind} "
            f"{plan.floor:.2g}{stopped}")


def leaderboard_markdown(lb: Leaderboard) -> str:
    headers, rows = display_rows(lb)
    return markdown(headers, rows) + f"\n{caption(lb)}\n\n{RANK_NOTE.capitalize()}.\n"


def leaderboard_latex(lb: Leaderboard) -> str:
    headers, rows = display_rows(lb)
    return latex(headers, rows, caption(lb))


def render_leaderboard(lb: Leaderboard, format: str) -> str:
    """The leaderboard as md, csv or latex text."""
    if format == "md":
        return leaderboard_markdown(lb)
    if format == "csv":
        return leaderboard_csv(lb)
    if format == "latex":
        return leaderboard_latex(lb)
    raise LeaderboardError(f"unknown format {format!r}; choose md, csv or latex")


def render_table(table: pa.Table, format: str, title: str = "") -> str:
    """Any report table (one row per record) as md, csv or latex text."""
    if format == "csv":
        return table_csv(table)
    headers = table.column_names
    rows = [[fmt(v) for v in row.values()] for row in table.to_pylist()]
    if format == "md":
        return markdown(headers, rows) + (f"\n{title}\n" if title else "")
    if format == "latex":
        return latex(headers, rows, title)
    raise LeaderboardError(f"unknown format {format!r}; choose md, csv or latex")


# -- generic writers ------------------------------------------------------------------------


def table_csv(table: pa.Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in zip(*(table[c].to_pylist() for c in table.column_names), strict=True):
        writer.writerow(["" if v is None else _csv_value(v) for v in row])
    return buf.getvalue()


def markdown(headers: list[str], rows: list[list[str]]) -> str:
    def esc(text: str) -> str:
        return str(text).replace("|", "\\|")

    lines = ["| " + " | ".join(esc(h) for h in headers) + " |",
             "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def latex(headers: list[str], rows: list[list[str]], title: str = "") -> str:
    spec = "l" * 3 + "r" * (len(headers) - 3)
    out = ["\\begin{table}", "\\centering"]
    if title:
        out.append(f"\\caption{{{latex_escape(title)}}}")
    out += [f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
            " & ".join(latex_escape(h) for h in headers) + " \\\\", "\\midrule"]
    out += [" & ".join(latex_escape(c) for c in row) + " \\\\" for row in rows]
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"


def latex_escape(text: str) -> str:
    table = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#",
             "_": "\\_", "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}",
             "^": "\\textasciicircum{}", "–": "--", "±": "$\\pm$"}
    return "".join(table.get(ch, ch) for ch in str(text))


def fmt(value: Any, digits: int = 4, *, signed: bool = False) -> str:
    """Numbers to fixed decimals (integers as such), None/NaN to an empty cell. signed puts
    + before a positive number (a difference). A value that rounds to zero prints as 0.0000,
    never -0.0000 or +0.0000: a tiny negative difference is no difference at that precision."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        text = f"{value:{'+' if signed else ''}.{digits}f}"
        return f"{0.0:.{digits}f}" if float(text) == 0 else text
    return str(value)


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and math.isnan(value):
        return ""
    if isinstance(value, str):  # run ids, teams, descriptions: never run as a formula
        return safe_cell(value)
    return value
