"""Participant reports as HTML pages: one per run, and an index linking them.

Each page stands alone: inline CSS, the per-topic chart drawn as inline SVG, no script, no
font or style fetched (a Content-Security-Policy forbids it), so a participant reads it
offline, in a browser or as the PDF printed from the same HTML (`pooling.leaderboard.pdf`).
The per-topic chart is the TREC appendix view: for each topic a grey line from the worst to
the best score of all runs, a tick at their median, and the run's own score as a bar.
"""

from __future__ import annotations

import html
import math
import re
from datetime import UTC, datetime
from urllib.parse import quote

from pooling.leaderboard.participant_report import (
    ParticipantReports,
    RunReport,
    Standing,
    TopicScore,
)
from pooling.leaderboard.render import fmt

# Print-friendly: A4 pages for the PDF, the system's own sans-serif font, no sticky headers.
_CSS = """
@page { size: A4; margin: 14mm 12mm; }
body { font: 13px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
       margin: 1.5em auto; max-width: 1100px; color: #1b1b1b; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; overflow-wrap: anywhere; }
h2 { margin-top: 1.6em; font-size: 1.15em; }
p.caption, .note { color: #555; }
p.estimate { background: #fff4e0; border-left: 4px solid #e0a030; padding: .4em .7em; }
/* No tabular-nums: the OpenType feature triples the PDF's layout time, and the fonts used
   here have tabular digits already. */
table { border-collapse: collapse; margin: .5em 0; }
th, td { padding: .2em .45em; border-bottom: 1px solid #ddd; text-align: right; }
th { background: #f3f3f3; }
td.run, th.run, td.team, th.team, td.verdict, th.verdict { text-align: left;
                                                  overflow-wrap: anywhere; }
tr.self td { background: #e6effa; font-weight: 600; }
figure { margin: .8em 0; } svg { width: 100%; height: auto; }
svg text { font: 10px sans-serif; fill: #333; }
.legend span { display: inline-block; margin-right: 1.2em; }
.swatch { display: inline-block; width: .9em; height: .9em; vertical-align: -.1em;
          margin-right: .3em; }
#per-topic-values { font-size: .9em; table-layout: fixed; } /* fixed: fast to print */
#per-topic-values td { overflow-wrap: anywhere; }
@media print { body { margin: 0; max-width: none; } section { break-inside: auto; } }
"""
_BAR = "#1f5fa8"
_RANGE = "#b8b8b8"


def report_html(report: RunReport, description: str, *, title: str | None = None) -> str:
    """One run's report as a self-contained HTML page."""
    title = title or f"Run {report.run_id}"
    parts = [
        *_head(title),
        f'<p class="caption">{_team(report)}qrels {_e(report.qrels_version)}; {report.n_runs} runs; '
        f"generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.</p>",
    ]
    # What the reader must know before any number: estimates from a sample, or a run whose
    # top documents are too rarely judged.
    note_id = "sample-note" if report.sampled else "flag-note"
    parts += [f'<p class="estimate" id="{note_id}">{_e(note)}</p>' for note in report.notes[:1]]
    parts += [f'<p class="estimate">{_e(note)}</p>' for note in report.notes[1:]]
    parts += [_summary(report), _standing(report), _judged(report), _per_topic(report)]
    parts.append(f'<p class="note" id="method">{_e(description)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _team(report: RunReport) -> str:
    """The run's team, as the caption's first words (nothing when the run has none)."""
    return f'team <span class="team">{_e(report.team)}</span>; ' if report.team else ""


def index_html(reports: ParticipantReports, files: dict[str, tuple[str, str | None]], *,
               title: str = "Participant reports") -> str:
    """The index page: every run in leaderboard order, linking its HTML and PDF report.
    files: run_id -> (HTML file name, PDF file name or None), relative to the index."""
    head = ('<tr><th>rank</th><th class="run">run</th><th class="team">team</th>'
            f"<th>{_e(reports.primary)}</th><th>interval</th><th>report</th></tr>")
    rows = []
    for r in reports.reports:
        primary = next(s for s in r.summary if s.measure == r.primary)
        page, pdf = files[r.run_id]
        links = f'<a href="{quote(page)}">HTML</a>'
        if pdf:
            links += f' · <a href="{quote(pdf)}">PDF</a>'
        rows.append(f'<tr data-run="{_e(r.run_id)}"><td>{r.rank}</td>'
                    f'<td class="run">{_e(r.run_id)}</td>'
                    f'<td class="team">{_e(r.team or "")}</td><td>{fmt(primary.value)}</td>'
                    f"<td>{fmt(primary.low, 3)}–{fmt(primary.high, 3)}</td>"
                    f"<td>{links}</td></tr>")
    parts = [*_head(title), f'<p class="caption">{_e(reports.description)}</p>',
             f'<table id="runs">{head}{"".join(rows)}</table>', "</body></html>"]
    return "\n".join(parts) + "\n"


def _head(title: str) -> list[str]:
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        # Nothing may be fetched: no external images, fonts, scripts or styles.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]


def _summary(report: RunReport) -> str:
    if report.sampled:
        head = "<tr><th class=\"run\">measure</th><th>estimate</th><th>95% interval</th></tr>"
        body = "".join(
            f'<tr><td class="run">{_e(s.measure)}</td><td data-measure="{_e(s.measure)}" '
            f'data-value="{s.value!r}">{fmt(s.value)}</td>'
            f"<td>{fmt(s.low, 3)}–{fmt(s.high, 3)}</td></tr>" for s in report.summary)
        what = "Estimated from a sample of judgments, with each estimator's interval."
    else:
        head = ("<tr><th class=\"run\">measure</th><th>mean</th><th>t interval</th>"
                "<th>bootstrap interval</th></tr>")
        body = "".join(
            f'<tr><td class="run">{_e(s.measure)}</td><td data-measure="{_e(s.measure)}" '
            f'data-value="{s.value!r}">{fmt(s.value)}</td>'
            f"<td>{fmt(s.low, 3)}–{fmt(s.high, 3)}</td>"
            f"<td>{fmt(s.boot_low, 3)}–{fmt(s.boot_high, 3)}</td></tr>" for s in report.summary)
        what = "Means over topics with their 95% t and bootstrap intervals."
    return (f'<section id="summary"><h2>Summary</h2><p class="note">{what}</p>'
            f'<table id="summary-measures">{head}{body}</table></section>')


def _standing(report: RunReport) -> str:
    if report.sampled:
        line = (f"Position {report.rank} of {report.n_runs} by the {_e(report.primary)} "
                "estimate. No pairwise test is made on a sample: compare the intervals.")
    else:
        line = (f"Rank {report.rank} of {report.n_runs} on {_e(report.primary)} (group "
                f"{_e(report.group)}): {report.better} run(s) significantly better, "
                f"{report.worse} significantly worse, the others not significantly different.")
    head = ("<tr><th>rank</th><th class=\"run\">run</th>"
            f"<th>{_e(report.primary)}</th><th>this run − it</th>")
    head += "</tr>" if report.sampled else "<th>adjusted p</th><th class=\"verdict\">test</th></tr>"
    rows = []
    for s in report.standings:
        own = s.run_id == report.run_id
        cells = (f"<td>{s.rank}</td><td class=\"run\">{_e(s.run_id)}</td><td>{fmt(s.value)}</td>"
                 f"<td>{'' if own else fmt(s.diff, signed=True)}</td>")
        if not report.sampled:
            cells += (f"<td>{'' if own else _p(s.p_adjusted)}</td>"
                      f'<td class="verdict">{_verdict(s, own)}</td>')
        css = ' class="self"' if own else ""
        rows.append(f'<tr data-run="{_e(s.run_id)}"{css}>{cells}</tr>')
    return (f'<section id="standing"><h2>Leaderboard</h2><p>{line}</p>'
            f'<table id="standings">{head}{"".join(rows)}</table></section>')


def _p(value: float | None) -> str:
    """A p-value to four decimals; one too small to show so is `< 0.0001`, not 0."""
    if value is None or math.isnan(value):
        return ""
    return "< 0.0001" if value < 0.00005 else f"{value:.4f}"


def _verdict(s: Standing, own: bool) -> str:
    if own:
        return "this run"
    if not s.significant:
        return "not significantly different"
    return "this run significantly better" if s.diff > 0 else "significantly better than this run"


def _judged(report: RunReport) -> str:
    if not report.judged:
        return ""
    cells = "".join(f'<tr><td class="run">Judged@{k}</td><td data-measure="Judged@{k}" '
                    f'data-value="{v!r}">{fmt(v, 3)}</td><td>{_judged_words(k, v)}</td></tr>'
                    for k, v in sorted(report.judged.items()))
    whose = "the sample's judged pairs" if report.sampled else f"qrels {_e(report.qrels_version)}"
    return (f'<section id="judged"><h2>Judged documents</h2><p class="note">The share of the '
            f"run's top k documents per topic that are judged in {whose}, averaged over "
            "topics; unjudged documents count as non-relevant.</p>"
            f'<table id="judged-at-k">{cells}</table></section>')


def _judged_words(k: int, share: float) -> str:
    return "" if share is None or math.isnan(share) else f"about {share * k:.1f} of {k} per topic"


def _per_topic(report: RunReport) -> str:
    """The appendix chart of the primary measure, then one table: per topic, the run's value
    of every measure, and for the primary one the best, median and worst of all runs."""
    primary = report.topics.get(report.primary, [])
    if not primary:
        return ""
    kind = "estimate" if report.sampled else "score"
    others = [m for m in report.topics if m != report.primary]
    by_measure = {m: {t.query_id: t for t in report.topics[m]} for m in others}
    head = (f'<tr><th class="run">topic</th><th>{_e(report.primary)}</th><th>best</th>'
            "<th>median</th><th>worst</th>"
            + "".join(f"<th>{_breakable(m)}</th>" for m in others) + "</tr>")
    rows = []
    for t in primary:
        cells = [f'<td class="run">{_e(t.query_id)}</td>',
                 f'<td data-measure="{_e(report.primary)}" data-value="{t.value!r}">'
                 f"{fmt(t.value)}</td><td>{fmt(t.best)}</td><td>{fmt(t.median)}</td>"
                 f"<td>{fmt(t.worst)}</td>"]
        for m in others:
            other = by_measure[m].get(t.query_id)
            cells.append("<td></td>" if other is None else
                         f'<td data-measure="{_e(m)}" data-value="{other.value!r}">'
                         f"{fmt(other.value)}</td>")
        rows.append(f'<tr data-topic="{_e(t.query_id)}">{"".join(cells)}</tr>')
    legend = (f'<p class="legend"><span><i class="swatch" style="background:{_BAR}"></i>'
              f'this run</span><span><i class="swatch" style="background:{_RANGE}"></i>'
              "worst to best of all runs</span><span><i class=\"swatch\" "
              "style=\"background:#000;height:.2em\"></i>median of all runs</span></p>")
    return (f'<section id="per-topic"><h2>Per-topic {_e(report.primary)}</h2>'
            f"<p class=\"note\">The run's {kind} on each of {len(primary)} topics beside the "
            f"best, median and worst of all {report.n_runs} runs.</p>"
            f"{topic_chart(primary, report.primary)}{legend}"
            f'<table id="per-topic-values" style="width: {7 + 5.5 * (4 + len(others)):g}em">'
            f'{head}{"".join(rows)}</table></section>')


def topic_chart(scores: list[TopicScore], measure: str) -> str:
    """The appendix chart as inline SVG: per topic (a `g.topic`), the worst-to-best range, the
    median tick and the run's bar (`rect.bar`), on a shared y axis from 0."""
    n = len(scores)
    step = 14.0
    left, top, bottom = 42.0, 10.0, 46.0
    width = left + n * step + 10
    height = max(220.0, width * 0.22)  # wide charts (many topics) keep a readable height
    highest = max([0.0, *(t.best for t in scores), *(t.value for t in scores)])
    top_value = 1.0 if highest <= 1 else _nice(highest)  # measures in [0, 1] keep that axis

    def y(value: float) -> float:
        return top + height * (1 - max(value, 0.0) / top_value)

    parts = [f'<figure class="topic-chart" data-measure="{_e(measure)}">'
             f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} '
             f'{top + height + bottom:.0f}" role="img" aria-label="per-topic {_e(measure)}">']
    for k in range(5):
        value = top_value * k / 4
        parts.append(f'<line x1="{left - 4}" x2="{width - 6:.1f}" y1="{y(value):.1f}" '
                     f'y2="{y(value):.1f}" stroke="#e4e4e4"/><text x="{left - 6}" '
                     f'y="{y(value) + 3:.1f}" text-anchor="end">{value:.2f}</text>')
    every = max(1, math.ceil(n / 60))
    for i, t in enumerate(scores):
        x = left + i * step
        mid = x + step / 2
        parts.append(
            f'<g class="topic" data-topic="{_e(t.query_id)}" data-value="{t.value!r}">'
            f"<title>topic {_e(t.query_id)}: {fmt(t.value)} (best {fmt(t.best)}, median "
            f"{fmt(t.median)}, worst {fmt(t.worst)})</title>"
            f'<line class="range" x1="{mid:.1f}" x2="{mid:.1f}" y1="{y(t.worst):.1f}" '
            f'y2="{y(t.best):.1f}" stroke="{_RANGE}" stroke-width="{step * 0.6:.1f}"/>'
            f'<rect class="bar" x="{x + step * 0.3:.1f}" y="{y(t.value):.1f}" '
            f'width="{step * 0.4:.1f}" height="{y(0) - y(t.value):.1f}" fill="{_BAR}"/>'
            f'<line class="median" x1="{x + 1:.1f}" x2="{x + step - 1:.1f}" '
            f'y1="{y(t.median):.1f}" y2="{y(t.median):.1f}" stroke="#000" stroke-width="1.5"/>')
        if i % every == 0:
            parts.append(f'<text x="{mid:.1f}" y="{top + height + 6:.1f}" text-anchor="end" '
                         f'transform="rotate(-90 {mid:.1f} {top + height + 6:.1f})">'
                         f"{_e(t.query_id)}</text>")
        parts.append("</g>")
    parts.append(f'<line x1="{left}" x2="{width - 6:.1f}" y1="{y(0):.1f}" y2="{y(0):.1f}" '
                 'stroke="#333"/></svg></figure>')
    return "".join(parts)


def _nice(value: float) -> float:
    """The next of 1, 2, 2.5, 5 × a power of ten at or above value."""
    power = 10.0 ** math.floor(math.log10(value))
    return next(power * m for m in (1, 2, 2.5, 5, 10) if power * m >= value)


def _breakable(name: str) -> str:
    """A measure name that may wrap after "_" or "@" (ndcg_cut_10 over two lines)."""
    return re.sub(r"([_@])", r"\1<wbr>", _e(name))


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
