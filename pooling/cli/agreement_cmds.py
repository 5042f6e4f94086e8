"""`pooling agreement`: agreement among a round's assessors, or between two label sets (two
qrels versions, or an automatic judge against people or a qrels version) pair by pair and on
the leaderboard."""

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.leaderboard_options import PrimaryOpt, analysed_measure
from pooling.cli.store_cmds import StoreArg
from pooling.errors import StoreError
from pooling.terminal.console import Console

out = Console()
err = Console(stderr=True)


@app.command()
def agreement(
    store: StoreArg,
    round: Annotated[str | None, typer.Option(
        "--round", help="The judging round: alone, agreement among its assessors; with --judge, "
        "only that round's judgments.")] = None,
    qrels: Annotated[list[str], typer.Option(
        "--qrels", help="A qrels version; give two to compare B (the second) against A.")] = [],  # noqa: B006
    judge: Annotated[str | None, typer.Option(
        help="An automatic judge (B) to compare against --against (A).")] = None,
    against: Annotated[str, typer.Option(
        help="With --judge: 'people' (their grade per pair; the majority, ties lower, where "
             "several judged it) or a qrels version (qrels:NAME if it is called people).")] = "people",
    threshold: Annotated[int, typer.Option(
        help="Lowest grade counted relevant (overlap; precision, recall and the rest; the "
             "leaderboard's relevance level).")] = 1,
    measure: Annotated[list[str], typer.Option(
        "-m", "--measure", help="The measure runs are ranked by for the leaderboard correlation "
        "(repeatable: the primary one is used; default map).")] = [],  # noqa: B006
    primary: PrimaryOpt = None,
    top: Annotated[int, typer.Option(help="How many of the largest rank changes to show.")] = 5,
    unjudged: Annotated[int | None, typer.Option(
        help="With --qrels or --judge: the grade a pair graded on one side only counts as on "
             "the other (0: not relevant, as trec_eval counts unjudged documents; for qrels "
             "that list mostly relevant pairs). Default: such pairs are left out.",
        show_default=False)] = None,
    topics: Annotated[str | None, typer.Option(
        help="Topics to compare on: ids and ranges (601-650,303) or a stored subset's name. "
             "Both sides' runs are always scored on the same topics.")] = None,
    format: Annotated[str, typer.Option(
        help="table, csv, json or html (with --qrels or --judge).")] = "table",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File (default: stdout).")] = None,
) -> None:
    """Agreement between assessors, or between two label sets.

    --round R alone: agreement on the round's overlap items (Fleiss' kappa, Krippendorff's
    alpha, each assessor against the others; Cohen's kappa per pair up to 10 assessors). --qrels A --qrels B, or --judge NAME [--round R] [--against
    people|QRELS]: B against A pair by pair (confusion matrix, kappa over the grades and
    binary at --threshold, alpha, precision, recall, F1, accuracy, fallout; ROC-AUC, PR-AUC
    and log loss from the judge's probabilities) and on the leaderboard (every stored run
    ranked by --measure under each: Kendall tau, tau_ap with A and with B as reference and
    their mean, Spearman, the largest rank changes). Pairs graded by one side only are left
    out and counted, unless --unjudged gives the grade they count as.
    """
    from pooling.store import Store

    if judge is None and not qrels:
        if round is None:
            raise StoreError("name what to compare: --round R (a round's assessors), --qrels A "
                             "--qrels B (two qrels versions) or --judge NAME (a judge)")
        if unjudged is not None:
            raise StoreError("--unjudged goes with --qrels or --judge; --round alone compares "
                             "only the pairs two assessors judged")
        _round_agreement(store, round, threshold, format, topics)
        return
    if judge is not None and qrels:
        raise StoreError("--judge and --qrels compare different things; to set a judge against "
                         "a qrels version use --judge NAME --against VERSION")
    if qrels and len(qrels) != 2:
        raise StoreError(f"--qrels compares two qrels versions; give it twice (got {len(qrels)})")
    if qrels and round is not None:
        raise StoreError("--round goes with --judge or alone; qrels versions span rounds")
    if format not in ("table", "csv", "json", "html"):
        raise StoreError(f"--format must be table, csv, json or html, not {format!r}")
    if format == "table" and output is not None:
        raise StoreError("--format table prints to the terminal; use csv, json or html with -o")
    from pooling.label_sets.agreement import judge_agreement, qrels_agreement

    ranked_by = analysed_measure(measure, primary)
    # Writable: scoring runs on a qrels version fills the store's evaluation cache.
    with Store(store) as s:
        if qrels:
            result = qrels_agreement(s, qrels[0], qrels[1], threshold=threshold,
                                     measure=ranked_by, top=top, unjudged=unjudged, topics=topics)
        else:
            result = judge_agreement(s, judge, round_id=round, against=against,
                                     threshold=threshold, measure=ranked_by, top=top,
                                     unjudged=unjudged, topics=topics)
    if format == "table":
        _print_label_agreement(result)
        return
    if format == "html":
        from pooling.leaderboard.report import agreement_html

        text = agreement_html(result)
    else:
        text = result.to_csv() if format == "csv" else result.to_json()
    if output is None:
        sys.stdout.write(text)
        return
    from pooling.formats.source import write_lines

    write_lines([text], output)
    err.print(f"wrote {output}", highlight=False)


def _round_agreement(store: Path, round: str, threshold: int, format: str,
                     topics: str | None) -> None:
    from pooling.agreement.report import (
        ASSESSOR_STATISTICS,
        PAIR_STATISTICS,
        PAIRWISE_MAX_ASSESSORS,
    )
    from pooling.judging.rounds import get_round
    from pooling.judging.rules import round_agreement, subtopic_agreement
    from pooling.store import Store

    if format != "table":
        raise StoreError("--round alone prints a table; --format goes with --qrels or --judge")
    with Store(store, read_only=True) as s:
        report = round_agreement(s, round, threshold=threshold, topics=topics)
    out.print(f"round {round}: {report.n_shared} pair(s) judged by two or more assessors, "
              f"{report.n_single} by one", highlight=False)
    if report.pairwise:
        table = Table("assessors", "pairs", *(term for _, term, _ in PAIR_STATISTICS))
        for p in report.pairs:
            table.add_row(f"{p.assessor_a} / {p.assessor_b}", str(p.n),
                          *(f"{getattr(p, field):.3f}" for field, _, _ in PAIR_STATISTICS))
    else:
        out.print(f"{len(report.assessors):,} assessors: each against the others (Cohen's kappa "
                  f"per pair is shown up to {PAIRWISE_MAX_ASSESSORS})", highlight=False)
        table = Table("assessor", "pairs", "others' answers",
                      *(term for _, term, _ in ASSESSOR_STATISTICS))
        for a in report.per_assessor:
            table.add_row(a.assessor, str(a.n), str(a.answers),
                          *(f"{getattr(a, field):.3f}" for field, _, _ in ASSESSOR_STATISTICS))
    out.print(table)
    out.print(f"Fleiss' kappa {report.fleiss_kappa:.3f} · Krippendorff's alpha nominal "
              f"{report.alpha_nominal:.3f}, ordinal {report.alpha_ordinal:.3f} · overlap "
              f"{report.overlap:.3f}", highlight=False)
    with Store(store, read_only=True) as s:
        if not get_round(s, round).item.has_parts:
            return
        per_subtopic = subtopic_agreement(s, round, threshold=threshold, topics=topics)
    out.print(f"round {round} per subtopic (the table above is on documents, each graded by "
              "its maximum over its subtopics):", highlight=False)
    table = Table("topic", "subtopic", "pairs", "Fleiss' kappa", "alpha nominal", "overlap",
                  "note")
    for a in per_subtopic:
        r = a.report
        cells = ([str(r.n_shared), f"{r.fleiss_kappa:.3f}", f"{r.alpha_nominal:.3f}",
                  f"{r.overlap:.3f}", ""] if r is not None else ["0", "-", "-", "-", a.problem or ""])
        table.add_row(a.query_id, a.subtopic, *cells)
    out.print(table)


def _print_label_agreement(result) -> None:
    """The table form of a `LabelAgreement`: pairs, confusion matrix, statistics, leaderboard."""
    from pooling.agreement.statistics import statistic_values, term
    from pooling.leaderboard.render import fmt

    def num(value: float, digits: int = 3) -> str:
        return "n/a" if value != value else f"{value:.{digits}f}"  # nan: undefined

    c, a, b = result.labels, result.a, result.b
    out.print(f"B = {b} against A = {a}: {c.n_shared:,} pair(s) graded by both, {c.only_a:,} "
              f"only by A, {c.only_b:,} only by B; {c.n_compared:,} compared", highlight=False)
    note = c.note()
    if note:
        out.print(f"note: {note}", style="bold", highlight=False)
    if c.n_compared:
        matrix = Table(title="confusion matrix (rows: A's grade, columns: B's)")
        matrix.add_column("A \\ B")
        for g in c.grades:
            matrix.add_column(str(g), justify="right")
        for g, row in zip(c.grades, c.confusion.tolist(), strict=True):
            matrix.add_row(str(g), *(f"{n:,}" for n in row))
        out.print(matrix)
    values = statistic_values(c)

    def terms(section: str) -> str:
        return ", ".join(f"{term(stat, c)} {num(value, stat.digits)}"
                         for stat, value in values if stat.section == section)

    s, p = c.scores, c.probability
    out.print(f"{terms('kappa')} · {terms('alpha')}", highlight=False)
    out.print(f"relevant at grade >= {c.threshold}: {terms('classification')} (TP {s.tp:,}, "
              f"FP {s.fp:,}, FN {s.fn:,}, TN {s.tn:,})", highlight=False)
    if p is not None:
        out.print(f"B's probabilities on {p.n:,} pair(s): {terms('probability')}",
                  highlight=False)
    sys_ = result.systems
    if sys_ is None:
        why = "no stored run to rank" if c.n_compared else "no pair graded by both to score runs on"
        out.print(f"leaderboard ({result.measure}): {why}", highlight=False)
    else:
        out.print(f"leaderboard ({result.measure}, {sys_.n_runs} runs; {result.scored_on}): "
                  f"Kendall tau {num(sys_.kendall_tau)}, tau_ap {num(sys_.tau_ap_a)} "
                  f"(A as reference) / {num(sys_.tau_ap_b)} (B as reference) / "
                  f"{num(sys_.tau_ap_symmetric)} (symmetric), Spearman "
                  f"{num(sys_.spearman_rho)}", highlight=False)
        if sys_.changes:
            moved = Table("run", "rank A", "rank B", "change", f"{result.measure} A",
                          f"{result.measure} B", title="largest rank changes")
            for ch in sys_.changes:
                moved.add_row(ch.run_id, str(ch.rank_a), str(ch.rank_b), f"{ch.change:+d}",
                              fmt(ch.score_a), fmt(ch.score_b))
            out.print(moved)
        else:
            out.print("no run changes rank", highlight=False)
    shown = [value for _, value in values]
    shown += [sys_.kendall_tau, sys_.tau_ap_a, sys_.spearman_rho] if sys_ is not None else []
    if any(v != v for v in shown):  # nan
        out.print("(n/a: undefined here: no pair in common, or only one grade or one class "
                  "used)", highlight=False)
