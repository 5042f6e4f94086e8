"""The HTML report: one self-contained file (inline CSS and SVG, nothing fetched at view time).

Sections: the leaderboard table, a confidence-interval plot, per-topic score distributions,
the significance matrix, the pool-bias chart (leave-one-run-out on a depth-k re-pool),
rank correlations between the measures and, when given, the agreement between two label sets
(`agreement_section`, also a page of its own with `agreement_html`). Charts are drawn with
matplotlib straight to SVG.
"""

from __future__ import annotations

import html
import io
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from pooling.agreement.statistics import label, statistic_values
from pooling.leaderboard.board import Leaderboard
from pooling.leaderboard.pool_bias import PoolBias
from pooling.leaderboard.render import RANK_NOTE, caption, fmt

if TYPE_CHECKING:
    from pooling.label_sets.agreement import LabelAgreement

# The leaderboard table fits 1,280 px with 40 runs and 8 measures: each measure is one column
# (mean over its two intervals), headers may break after "_" or "@", and when a table still
# overflows, rank and run stay put (sticky) while the rest scrolls.
_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1240px; color: #1b1b1b; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { margin-top: 2em; font-size: 1.25em; }
p.caption { color: #555; margin-top: 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: .5em 0; }
th, td { padding: .25em .45em; border-bottom: 1px solid #ddd; text-align: right; }
th { background: #f3f3f3; position: sticky; top: 0; z-index: 1; }
td.run, th.run, td.team, th.team, td.group, td.flag { text-align: left; }
td.run { white-space: nowrap; } td.flag { min-width: 5em; }
span.ci { display: block; color: #666; font-size: .75em; white-space: nowrap; }
div.wide { overflow-x: auto; }
#leaderboard .rank { position: sticky; left: 0; width: 3.4em; min-width: 3.4em;
                     max-width: 3.4em; box-sizing: border-box; background: #fff; }
#leaderboard .run { position: sticky; left: 3.4em; background: #fff; box-shadow: 1px 0 0 #ddd; }
#leaderboard th.rank, #leaderboard th.run { background: #f3f3f3; z-index: 2; }
tr.flagged td, #leaderboard tr.flagged td.rank, #leaderboard tr.flagged td.run
  { background: #fff4e0; }
.note { color: #555; font-size: .9em; }
p.warning { background: #fff4e0; border-left: 4px solid #e0a030; padding: .4em .7em; }
figure { margin: 1em 0; } svg { max-width: 100%; height: auto; }
#fig-significance { overflow-x: auto; } #fig-significance svg { max-width: none; }
"""


def html_report(
    lb: Leaderboard,
    *,
    pool: PoolBias | None = None,
    correlations: pa.Table | None = None,
    agreement: LabelAgreement | None = None,
    title: str = "Leaderboard",
) -> str:
    """The whole report as one HTML string; `agreement` adds the section comparing two label
    sets (see `agreement_section`)."""
    parts = [
        *_head(title),
        f'<p class="caption">{_e(caption(lb))}. Generated '
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.</p>",
        "<h2>Leaderboard</h2>",
        _leaderboard_table(lb),
        f'<p class="note">{_e(RANK_NOTE.capitalize())}. Under each mean: its t (first) and '
        f"bootstrap (second) {int(lb.confidence * 100)}% interval. Highlighted rows have "
        f"{_e(lb.judged_column)} below {lb.options['min_judged']:g}.</p>",
        f"<h2>Confidence intervals ({_e(lb.primary)})</h2>",
        _figure(_ci_plot(lb), "ci-plot"),
        f"<h2>Per-topic scores ({_e(lb.primary)})</h2>",
        _figure(_topic_distribution(lb), "topic-distribution"),
        "<h2>Significance matrix</h2>",
        _figure(significance_heatmap(lb), "significance"),
        f'<p class="note" id="significance-note">{_e(_significance_note(lb))}</p>',
    ]
    if pool is not None:
        depth = f"depth-{pool.depth} re-pool" if pool.depth else "the qrels as they are"
        parts += [
            f"<h2>Pool bias (leave one {pool.leave_out} out, {_e(depth)})</h2>",
            _figure(_pool_bias_chart(pool), "pool-bias"),
            _pool_summary(pool),
        ]
    if correlations is not None and correlations.num_rows:
        parts += ["<h2>Rank correlation between measures</h2>",
                  _figure(_tau_heatmap(correlations), "tau-matrix"),
                  _correlation_table(correlations)]
    if agreement is not None:
        parts.append(agreement_section(agreement))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def agreement_html(agreement: LabelAgreement, *, title: str | None = None) -> str:
    """A page of its own for the agreement between two label sets (same style as the report)."""
    title = title or "Agreement between two label sets"
    parts = [*_head(title), f'<p class="caption">Generated '
             f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.</p>",
             agreement_section(agreement), "</body></html>"]
    return "\n".join(parts) + "\n"


def _head(title: str) -> list[str]:
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title>",
        # Nothing may be fetched: no external images, fonts, scripts or styles.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]


# -- agreement between two label sets -----------------------------------------------------


def agreement_section(agreement: LabelAgreement) -> str:
    """The agreement of label set B with reference A: pair counts, the confusion matrix drawn
    with its counts, kappa and alpha, B as a classifier of A's relevance, and the leaderboard
    correlation with the runs whose rank moves most."""
    c = agreement.labels
    parts = [
        f'<section id="agreement"><h2>Agreement: {_e(agreement.b)} against {_e(agreement.a)}</h2>',
        f'<p class="note">A: {_e(agreement.a)} (the reference); B: {_e(agreement.b)}. '
        f"{c.n_shared:,} pairs graded by both, {c.only_a:,} by A only, {c.only_b:,} by B only; "
        f"{c.n_compared:,} compared. Confusion matrix rows: A's grade; columns: B's.</p>",
    ]
    note = c.note()
    if note:
        parts.append(f'<p class="warning" id="agreement-pairs-note">{_e(note)}.</p>')
    if c.n_compared:
        parts.append(_figure(confusion_heatmap(agreement), "confusion"))
    s = c.scores
    parts.append('<table id="agreement-statistics">' + "".join(
        f'<tr><td class="run">{_e(label(stat, c))}</td><td>{fmt(value, stat.digits)}</td></tr>'
        for stat, value in statistic_values(c)) + "</table>")
    parts.append(f'<p class="note">Relevant: grade ≥ {c.threshold} on both sides; '
                 f"TP {s.tp:,}, FP {s.fp:,}, FN {s.fn:,}, TN {s.tn:,}. Undefined values are "
                 "left blank.</p>")
    parts += _agreement_leaderboard(agreement)
    parts.append("</section>")
    return "\n".join(parts)


def _agreement_leaderboard(agreement: LabelAgreement) -> list[str]:
    sys_ = agreement.systems
    head = f"<h3>Leaderboard correlation ({_e(agreement.measure)})</h3>"
    if sys_ is None:
        why = ("The store has no run to rank." if agreement.labels.n_compared else
               "No pair is graded by both label sets, so no run was scored.")
        return [head, f'<p class="note">{why}</p>']
    table = ('<table id="agreement-correlation"><tr><th>runs</th><th>Kendall τ</th>'
             f"<th>τ<sub>ap</sub> ({_e(agreement.a)} reference)</th>"
             f"<th>τ<sub>ap</sub> ({_e(agreement.b)} reference)</th><th>τ<sub>ap</sub> "
             "symmetric</th><th>Spearman ρ</th></tr>"
             f"<tr><td>{sys_.n_runs}</td><td>{fmt(sys_.kendall_tau, 3)}</td>"
             f"<td>{fmt(sys_.tau_ap_a, 3)}</td><td>{fmt(sys_.tau_ap_b, 3)}</td>"
             f"<td>{fmt(sys_.tau_ap_symmetric, 3)}</td><td>{fmt(sys_.spearman_rho, 3)}</td>"
             "</tr></table>")
    changes = "".join(
        f'<tr><td class="run">{_e(ch.run_id)}</td><td>{ch.rank_a}</td><td>{ch.rank_b}</td>'
        f"<td>{ch.change:+d}</td><td>{fmt(ch.score_a)}</td><td>{fmt(ch.score_b)}</td></tr>"
        for ch in sys_.changes)
    moved = ('<table id="agreement-changes"><tr><th class="run">run</th><th>rank A</th>'
             "<th>rank B</th><th>change</th><th>score A</th><th>score B</th></tr>"
             f"{changes}</table>" if changes else
             '<p class="note">No run changes rank.</p>')
    return [head, f'<p class="note">{_e(agreement.scored_on.capitalize())}.</p>', table,
            _figure(_agreement_scatter(agreement), "agreement-scores"),
            "<h3>Largest rank changes</h3>", moved]


def confusion_heatmap(agreement: LabelAgreement):
    """The confusion matrix with its counts; colour is the share of the row (A's grade), so
    a rare grade's agreement shows as clearly as a common one's."""
    c = agreement.labels
    counts = c.confusion
    k = len(c.grades)
    rows = counts.sum(axis=1, keepdims=True)
    share = np.divide(counts, rows, out=np.zeros(counts.shape), where=rows > 0)
    fig = _new_figure(1.0 * k + 2.6, 0.9 * k + 1.4)
    ax = fig.add_subplot()
    image = ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
    for i in range(k):
        for j in range(k):
            ax.text(j, i, f"{counts[i, j]:,}", ha="center", va="center", fontsize=10,
                    color="white" if share[i, j] > 0.6 else "black")
    ax.set_xticks(range(k), [str(g) for g in c.grades])
    ax.set_yticks(range(k), [str(g) for g in c.grades])
    ax.set_xlabel(f"{agreement.b} grade")
    ax.set_ylabel(f"{agreement.a} grade")
    fig.colorbar(image, ax=ax, shrink=0.8, label="share of the row")
    return fig


def _agreement_scatter(agreement: LabelAgreement):
    names = sorted(agreement.scores_a)
    x = np.array([agreement.scores_a[n] for n in names])
    y = np.array([agreement.scores_b[n] for n in names])
    fig = _new_figure(5.5, 5)
    ax = fig.add_subplot()
    low, high = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
    ax.plot([low, high], [low, high], color="#999999", lw=0.8)
    ax.scatter(x, y, s=18, color="#1f5fa8")
    for ch in agreement.systems.changes if agreement.systems else ():
        ax.annotate(ch.run_id, (ch.score_a, ch.score_b), fontsize=7, xytext=(3, 3),
                    textcoords="offset points")
    ax.set_xlabel(f"{agreement.measure} under {agreement.a}")
    ax.set_ylabel(f"{agreement.measure} under {agreement.b}")
    ax.grid(alpha=0.3)
    return fig


def write_html_report(html_text: str, out: str | Path) -> Path:
    """Write atomically (temp file, then rename); returns the path."""
    from pooling.formats.source import write_lines

    path = Path(out)
    write_lines([html_text], path)
    return path


# -- tables -----------------------------------------------------------------------------------


def _leaderboard_table(lb: Leaderboard) -> str:
    cols = lb.table.to_pydict()
    head = ['<th class="rank">rank</th>', '<th class="run">run</th>', '<th class="team">team</th>',
            "<th>group</th>"]
    head += [f"<th>{_breakable(m)}</th>" for m in lb.measures]
    head += [f"<th>{_breakable(lb.judged_column)}</th>", "<th>topics</th>", "<th>pooled</th>",
             '<th class="flag">flag</th>']
    body = []
    for k, run_id in enumerate(cols["run_id"]):
        cells = [f'<td class="rank">{cols["rank"][k]}</td>',
                 f'<td class="run">{_e(run_id)}</td>',
                 f'<td class="team">{_e(cols["team"][k] or "")}</td>',
                 f'<td class="group">{_e(cols["group"][k])}</td>']
        for m in lb.measures:
            value = cols[m][k]
            t = f"{fmt(cols[f'{m}_t_low'][k], 3)}–{fmt(cols[f'{m}_t_high'][k], 3)}"
            b = f"{fmt(cols[f'{m}_boot_low'][k], 3)}–{fmt(cols[f'{m}_boot_high'][k], 3)}"
            cells.append(f'<td data-measure="{_e(m)}" data-value="{value!r}">'
                         f'<span class="value">{fmt(value)}</span>'
                         f'<span class="ci" title="t interval">{t}</span>'
                         f'<span class="ci" title="bootstrap interval">{b}</span></td>')
        pooled = cols["pooled"][k]
        cells += [f'<td data-measure="{_e(lb.judged_column)}">{fmt(cols[lb.judged_column][k], 3)}</td>',
                  f"<td>{cols['n_topics'][k]}</td>",
                  f"<td>{'' if pooled is None else ('yes' if pooled else 'no')}</td>",
                  f'<td class="flag">{_e(cols["flag"][k])}</td>']
        css = ' class="flagged"' if cols["flag"][k] else ""
        body.append(f'<tr data-run="{_e(run_id)}"{css}>' + "".join(cells) + "</tr>")
    return ('<div class="wide"><table id="leaderboard"><thead><tr>' + "".join(head)
            + "</tr></thead><tbody>" + "\n".join(body) + "</tbody></table></div>")


def _breakable(name: str) -> str:
    """A measure name that may wrap after "_" or "@" (ndcg_cut_10 over two lines)."""
    return re.sub(r"([_@])", r"\1<wbr>", _e(name))


def _significance_note(lb: Leaderboard) -> str:
    from pooling.leaderboard.render import permutation_note

    kind = "p-values" if lb.correction == "none" else f"{lb.correction}-adjusted p-values"
    text = (f"Cells: {kind} of the {lb.pairs.num_rows:,} pairs; the colours diverge at alpha = "
            f"{lb.alpha:g} (blue below, significant and marked •; red above).")
    if lb.plan is not None:
        text += f" {lb.test.capitalize()} test: {permutation_note(lb)}."
    return text


def _pool_summary(pool: PoolBias) -> str:
    s = pool.summary()
    rows = pool.table.to_pylist()
    head = ("<tr><th class=\"run\">run</th><th>pooled</th><th>judged@"
            f"{pool.judged_depth}</th><th>unique judged</th><th>unique relevant</th>"
            f"<th>{_e(pool.measure)}</th><th>without</th><th>change</th><th>rank</th>"
            "<th>rank without</th></tr>")
    body = "".join(
        f'<tr><td class="run">{_e(r["run_id"])}</td><td>{"yes" if r["pooled"] else "no"}</td>'
        f"<td>{fmt(r['judged_at_k'], 3)}</td><td>{r['unique_docs']}</td>"
        f"<td>{r['unique_relevant']}</td><td>{fmt(r['score'])}</td>"
        f"<td>{fmt(r['score_without'])}</td><td>{_pct(r['relative_change'])}</td>"
        f"<td>{r['rank']}</td><td>{r['rank_without']}</td></tr>"
        for r in rows
    )
    text = ""
    if s.get("runs"):
        text = (f'<p class="note">Pooled runs: mean {_e(pool.measure)} change '
                f"{_pct(s['mean_relative_change'])}, worst {_pct(s['worst_relative_change'])} "
                f"({_e(s['worst_run'])}); pool of {pool.pool_size:,} documents, "
                f"{pool.judged_in_pool:,} judged, {len(pool.query_ids)} topics.</p>")
    return text + f'<table id="pool-bias">{head}{body}</table>'


def _correlation_table(table: pa.Table) -> str:
    head = ("<tr><th class=\"run\">a</th><th class=\"run\">b</th><th>Kendall τ</th>"
            "<th>τ<sub>ap</sub></th><th>Spearman ρ</th><th>swaps</th></tr>")
    body = "".join(
        f'<tr><td class="run">{_e(r["a"])}</td><td class="run">{_e(r["b"])}</td>'
        f"<td>{fmt(r['kendall_tau'], 3)}</td><td>{fmt(r['tau_ap'], 3)}</td>"
        f"<td>{fmt(r['spearman_rho'], 3)}</td><td>{r['swaps']}</td></tr>"
        for r in table.to_pylist()
    )
    return f'<table id="correlations">{head}{body}</table>'


# -- charts -----------------------------------------------------------------------------------


def _new_figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _ci_plot(lb: Leaderboard):
    cols = lb.table.to_pydict()
    m = lb.primary
    n = len(cols["run_id"])
    fig = _new_figure(8, 0.32 * n + 1.2)
    ax = fig.add_subplot()
    y = np.arange(n)[::-1]
    means = np.array(cols[m])
    for offset, kind, colour in ((0.15, "t", "#1f5fa8"), (-0.15, "boot", "#d0701a")):
        low, high = np.array(cols[f"{m}_{kind}_low"]), np.array(cols[f"{m}_{kind}_high"])
        ax.errorbar(means, y + offset, xerr=[means - low, high - means], fmt="o", ms=4,
                    color=colour, capsize=2, label="t interval" if kind == "t" else "bootstrap")
    ax.set_yticks(y, cols["run_id"])
    ax.set_xlabel(f"mean {m}")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return fig


def _topic_distribution(lb: Leaderboard):
    scores = lb.scores[lb.primary]
    n = len(lb.run_ids)
    fig = _new_figure(8, 0.32 * n + 1.2)
    ax = fig.add_subplot()
    positions = np.arange(n)[::-1]
    ax.boxplot([scores[:, k] for k in range(n)], positions=positions, orientation="horizontal",
               widths=0.6, showfliers=False, medianprops={"color": "#1f5fa8"})
    rng = np.random.default_rng(0)
    for k in range(n):
        jitter = rng.uniform(-0.2, 0.2, size=scores.shape[0])
        ax.scatter(scores[:, k], positions[k] + jitter, s=4, alpha=0.35, color="#444")
    ax.scatter(scores.mean(axis=0), positions, marker="D", s=18, color="#d0701a", zorder=3,
               label="mean")
    ax.set_yticks(positions, lb.run_ids)
    ax.set_xlabel(f"{lb.primary} per topic ({scores.shape[0]} topics)")
    ax.legend(loc="lower right", fontsize="small")
    return fig


def significance_heatmap(lb: Leaderboard):
    """Adjusted p per pair, coloured on a scale that diverges at alpha, with legible labels.

    The figure grows with the run count (a fixed cell pitch) instead of shrinking its labels;
    the page shows it at its natural size, scrolling sideways when it is wider than the page.
    """
    p = lb.p_matrix()
    n = len(lb.run_ids)
    pitch, fontsize = heatmap_geometry(n)
    label = max((len(r) for r in lb.run_ids), default=1) * 0.62 * fontsize / 72  # inches
    width = n * pitch + label + 1.9  # the colour bar and its label
    height = n * pitch + label + 0.5
    fig = _new_figure(max(width, 4.5), max(height, 3.5))
    ax = fig.add_subplot()
    finite = p[np.isfinite(p)]
    vmin = float(np.clip(finite.min() if finite.size else lb.alpha, 1e-6, lb.alpha / 10))
    norm = p_value_norm(lb.alpha, vmin)
    la = np.log10(lb.alpha)
    image = ax.imshow(np.where(np.isnan(p), np.nan, np.clip(p, vmin, 1)), cmap="RdBu_r",
                      norm=norm)
    for a in range(n):
        for b in range(n):
            if a != b and lb.significant[a, b]:
                dark = norm(p[a, b]) < 0.25
                ax.text(b, a, "•", ha="center", va="center", fontsize=fontsize,
                        color="white" if dark else "black")
    ax.set_xticks(range(n), lb.run_ids, rotation=90, fontsize=fontsize)
    ax.set_yticks(range(n), lb.run_ids, fontsize=fontsize)
    kind = "p-value" if lb.correction == "none" else f"{lb.correction}-adjusted p-value"
    ticks = sorted({vmin, lb.alpha, 1.0, *(10.0 ** k for k in range(-6, 0) if vmin * 1.5
                                           < 10.0 ** k < 1 / 1.5 and abs(k - la) > 0.2)})
    bar = fig.colorbar(image, ax=ax, shrink=0.8, ticks=ticks)
    bar.ax.set_yticklabels([f"{t:.2g}" for t in ticks])
    bar.set_label(f"{kind} (• significant at {lb.alpha:g})")
    return fig


def heatmap_geometry(n_runs: int) -> tuple[float, float]:
    """(cell pitch in inches, label font size in points) of the significance heatmap.

    Cells shrink with the run count down to 0.16 in and the labels with them down to 8.9 pt,
    11.8 px in an SVG drawn at 96 px per inch; past that (about 40 runs) the figure grows.
    """
    pitch = float(np.clip(6.0 / max(n_runs, 1), 0.16, 0.4))
    return pitch, min(pitch * 72 / 1.3, 10.0)


def p_value_norm(alpha: float, vmin: float):
    """A colour norm for p-values: log scale, vmin -> 0, alpha -> 0.5, 1 -> 1."""
    from matplotlib.colors import FuncNorm

    la, lo = np.log10(alpha), np.log10(vmin)

    def forward(p):
        x = np.log10(np.clip(np.asarray(p, dtype=np.float64), vmin, 1.0))
        return np.where(x <= la, (x - la) / (la - lo), (x - la) / -la)

    def inverse(y):
        y = np.asarray(y, dtype=np.float64)
        return 10.0 ** np.where(y <= 0, la + y * (la - lo), la - y * la)

    return FuncNorm((forward, inverse), vmin=vmin, vmax=1.0)


def _pool_bias_chart(pool: PoolBias):
    rows = pool.table.to_pylist()
    n = len(rows)
    fig = _new_figure(8, 0.32 * n + 1.2)
    ax = fig.add_subplot()
    y = np.arange(n)[::-1]
    change = np.array([r["relative_change"] * 100 for r in rows])
    pooled = np.array([bool(r["pooled"]) for r in rows])
    ax.barh(y[pooled], change[pooled], color="#1f5fa8")
    for k in np.flatnonzero(~pooled):
        # Unpooled runs contributed nothing, so nothing is taken away: label them instead.
        ax.text(0, y[k], "not pooled ", ha="right", va="center", color="#777777", fontsize=8)
    ax.set_yticks(y, [r["run_id"] for r in rows])
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel(f"{pool.measure} change without the {pool.leave_out}'s unique judgments (%)")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _tau_heatmap(table: pa.Table):
    """Kendall τ (below the diagonal) and τ_ap (above; row = reference) between measures."""
    rows = table.to_pylist()
    names = list(dict.fromkeys([r["a"] for r in rows] + [r["b"] for r in rows]))
    n = len(names)
    matrix = np.eye(n)
    pos = {name: k for k, name in enumerate(names)}
    for r in rows:
        a, b = pos[r["a"]], pos[r["b"]]
        matrix[max(a, b), min(a, b)] = r["kendall_tau"]
        matrix[min(a, b), max(a, b)] = r["tau_ap"]
    fig = _new_figure(1.1 * n + 2.5, 1.1 * n + 1.2)
    ax = fig.add_subplot()
    image = ax.imshow(matrix, cmap="RdBu", vmin=-1, vmax=1)
    for a in range(n):
        for b in range(n):
            ax.text(b, a, f"{matrix[a, b]:.2f}", ha="center", va="center", fontsize=9,
                    color="white" if abs(matrix[a, b]) > 0.6 else "black")
    ax.set_xticks(range(n), names, rotation=45, ha="right")
    ax.set_yticks(range(n), names)
    fig.colorbar(image, ax=ax, label="Kendall τ below the diagonal, τ_ap above", shrink=0.8)
    return fig


def _figure(fig, name: str) -> str:
    return f'<figure id="fig-{name}">{_svg(fig, name)}</figure>'


def _svg(fig, name: str) -> str:
    """The figure as inline SVG: no XML prolog or DOCTYPE, stable ids, text as paths."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": name, "svg.fonttype": "path"}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    text = re.sub(r"^<\?xml[^>]*\?>\s*", "", text)
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    return re.sub(r"<!DOCTYPE[^>]*>\s*", "", text)


def _pct(value: float | None) -> str:
    if value is None or np.isnan(value):
        return ""
    return f"{fmt(value * 100, 1, signed=True)}%"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def store_report(
    store,
    *,
    pool_depth: int | None = 10,
    title: str | None = None,
    **options,
) -> str:
    """Build the leaderboard (options as for `leaderboard`), its pool bias and the rank
    correlations between its measures, and render them as one HTML page.

    pool_depth: depth of the re-pool for the pool-bias chart (None: the qrels as they are).
    """
    from pooling.leaderboard.board import leaderboard
    from pooling.leaderboard.compare import correlation_table
    from pooling.leaderboard.pool_bias import pool_bias

    lb = leaderboard(store, **options)
    pool = pool_bias(
        store, qrels=lb.qrels_version, measure=lb.primary, depth=pool_depth,
        topics=lb.options["topics"], missing_topics=lb.options["missing_topics"],
        relevance_level=lb.options["relevance_level"], max_docs=lb.options["max_docs"],
    )
    correlations = None
    if len(lb.measures) > 1:
        correlations = correlation_table({m: lb.means(m) for m in lb.measures})
    name = title or f"Leaderboard — {Path(store.path).stem}"
    return html_report(lb, pool=pool, correlations=correlations, title=name)
