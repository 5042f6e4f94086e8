"""Evaluation commands: `pooling eval` (a drop-in for trec_eval) and `pooling measures`."""

import sys
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from pooling.cli.app import app, state
from pooling.cli.engine_options import EngineArg, EngineOpt, RayAddress
from pooling.cli.run_options import (
    Dedupe,
    DedupeOpt,
    LabelRunNames,
    Meta,
    RunNamesOpt,
    SplitByTag,
    TopicMapOpt,
    print_notes,
    print_warnings,
    run_reading,
)
from pooling.errors import EvaluationError


class OutputFormat(StrEnum):
    trec = "trec"
    csv = "csv"
    json = "json"
    parquet = "parquet"
    ndeval = "ndeval"


class RelFormat(StrEnum):
    """trec_eval's -R: the format of the relevance file."""

    qrels = "qrels"
    qrels_jg = "qrels_jg"
    prefs = "prefs"
    qrels_prefs = "qrels_prefs"
    sampled = "sampled"
    subtopics = "subtopics"
    nuggets = "nuggets"


# The measures printed without -m, per -R (trec_eval's `official` needs qrels).
_DEFAULT_MEASURES = {"qrels": "official", "qrels_jg": "qrels_jg", "prefs": "all_prefs",
                     "qrels_prefs": "all_prefs", "sampled": "sample_eval", "subtopics": "ndeval",
                     "nuggets": "nuggets"}


@app.command("eval")
def eval_command(
    qrels: Annotated[str, typer.Argument(help="Qrels file (trec_eval format; gzip ok); with -R "
                                         "nuggets, a nuggetizer assignments file.")],
    runs: Annotated[list[str] | None, typer.Argument(
        help="Run file(s); `-` reads stdin. With -R nuggets: more assignments files.")] = None,
    measure: Annotated[
        list[str] | None,
        typer.Option(
            "-m",
            "--measure",
            help="Measure, trec_eval style (P.5,10  ndcg_cut.10  all_trec  official) or "
            "ir_measures style (nDCG@10, P(rel=2)@5); diversity measures by ndeval's or "
            "ir_measures' names (alpha-nDCG@20, ERR_IA@20, ndeval for all of them) read the "
            "qrels as subtopic qrels. Repeatable. Default: official.",
        ),
    ] = None,
    per_query: Annotated[
        bool, typer.Option("-q", "--per-query", help="Print per-topic values before `all`.")
    ] = False,
    complete: Annotated[
        bool,
        typer.Option("-c", "--complete", help="Score qrels topics missing from a run as 0 (trec_eval -c)."),
    ] = False,
    shared_topics: Annotated[
        bool,
        typer.Option("--shared-topics", help="Evaluate only topics the run and qrels share (trec_eval 9)."),
    ] = False,
    level: Annotated[
        int, typer.Option("-l", "--level", help="Lowest grade that counts as relevant (-l).")
    ] = 1,
    max_docs: Annotated[
        int | None, typer.Option("-M", "--max-docs", help="Keep only the top N docs per topic (-M).")
    ] = None,
    judged_only: Annotated[
        bool, typer.Option("-J", "--judged-only", "--Judged_docs_only",
                           help="Rank only judged documents, closing up the ranks (trec_eval -J: "
                           "condensed lists, for studies of incomplete judgments).")
    ] = False,
    collection_size: Annotated[
        int | None, typer.Option("-N", "--collection-size", "--Number_docs_in_coll",
                                 help="Documents in the collection: utility's D, Fallout@k and "
                                 "set_fallout use it (trec_eval -N; utility takes 0 without it).")
    ] = None,
    no_summary: Annotated[
        bool, typer.Option("-n", "--no-summary", "--nosummary",
                           help="Leave out the summary (`all`) lines (trec_eval -n).")
    ] = False,
    zscores: Annotated[
        str | None, typer.Option("-Z", "--zscores", "--Zscore", metavar="FILE",
                                 help="Print z-scores against FILE's lines `query_id measure "
                                 "mean stddev` (trec_eval -Z).")
    ] = None,
    rel_format: Annotated[
        RelFormat, typer.Option("-R", "--rel-format", "--Rel_info_format",
                                help="Format of the relevance file (trec_eval -R): qrels, "
                                "qrels_jg (judgment groups in the 2nd column), prefs (query_id "
                                "jg jsg doc_id level), qrels_prefs (qrels read as prefs), "
                                "sampled (query_id iter doc_id stratum relevance, as "
                                "sample_eval.pl reads; a five-column qrels file is read so "
                                "without -R) or subtopics (ndeval's query_id subtopic doc_id "
                                "relevance; read so when a diversity measure is asked for) or "
                                "nuggets (nuggetizer's assignments JSONL, which holds the "
                                "answers too: every file given is one, scored by nugget recall). "
                                "Without -m: official, qrels_jg, all_prefs, sample_eval, "
                                "ndeval or nuggets.")
    ] = RelFormat.qrels,
    gain: Annotated[
        list[str] | None, typer.Option("-G", "--gain", metavar="GRADE=GAIN",
                                       help="Sampled qrels: read GRADE as GAIN (sample_eval.pl's "
                                       "-G; repeatable, e.g. -G 2=3).")
    ] = None,
    sample_eval_output: Annotated[
        bool, typer.Option("--sample-eval", help="Sampled qrels: print exactly what "
                           "sample_eval.pl prints (one block per run), to diff against it.")
    ] = False,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="trec (trec_eval's text), csv, json, parquet "
                                   "or ndeval (ndeval's CSV: a row per topic, then amean).")
    ] = OutputFormat.trec,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write here instead of stdout.")
    ] = None,
    dedupe: Dedupe = DedupeOpt.error,
    run_names: LabelRunNames = None,
    meta: Meta = None,
    split_by_tag: SplitByTag = False,
    topic_map: TopicMapOpt = None,
    engine: EngineArg = EngineOpt.local,
    ray_address: RayAddress = None,
) -> None:
    """Evaluate runs against qrels exactly as trec_eval 10.0 does.

    With one run and trec_eval measure names the output is byte-identical to trec_eval's.
    Several runs share one parsed qrels and print one block each, opened by a `runid` line
    naming the run; runs are named by their tags, and runs whose tags collide by their file
    names (see --run-names). The run-reading options (--dedupe, --run-names, --meta,
    --split-by-tag, --topic-map) go beyond trec_eval; each one used is printed as a note on
    stderr, as is a warning for each run scored 0 on topics it lacks (-c), and for a run or
    qrels line that starts with a byte-order mark (trec_eval keeps it in the topic id).
    """
    from pooling.cli.pandas_guard import without_pandas
    from pooling.evaluation import evaluate
    from pooling.evaluation.inputs import measure_list, relevance_format
    from pooling.formats.sampled_qrels import looks_sampled

    if rel_format is RelFormat.nuggets:
        _eval_nuggets(qrels, runs or [], measure, complete, shared_topics, output_format,
                      per_query, output, not no_summary)
        return
    if not runs:
        raise EvaluationError("give a run file after the qrels file (`-` reads stdin)")
    if rel_format is RelFormat.sampled or (rel_format is RelFormat.qrels and looks_sampled(qrels)):
        unusable = {"-c": complete, "--shared-topics": shared_topics, "-l": level != 1,
                    "-M": max_docs is not None, "-J": judged_only,
                    "-N": collection_size is not None, "-Z": zscores is not None,
                    "--engine": engine is not EngineOpt.local,
                    "--dedupe/--run-names/--meta/--split-by-tag/--topic-map":
                        not run_reading(dedupe, run_names or RunNamesOpt.tag, meta, split_by_tag,
                                        topic_map).is_plain}
        used = [flag for flag, on in unusable.items() if on]
        if used:
            raise EvaluationError(f"{', '.join(used)} do(es) not apply to sampled qrels (which "
                                  "sample_eval.pl scores with its own fixed rules); drop them")
        state.fast_exit = True
        _eval_sampled(qrels, runs, measure or [_DEFAULT_MEASURES["sampled"]], gain or [],
                      sample_eval_output, output_format, per_query, output, not no_summary)
        return
    if gain or sample_eval_output:
        raise EvaluationError("-G and --sample-eval are for sampled qrels (five columns: query_id "
                              "iter doc_id stratum relevance); give such a file, or -R sampled")
    if complete and shared_topics:
        raise EvaluationError("-c and --shared-topics contradict each other; pick one")
    policy = "zero" if complete else "skip" if shared_topics else "error"
    state.fast_exit = True  # files in, text out: nothing to clean up at exit
    reading = run_reading(dedupe, run_names or RunNamesOpt.tag, meta, split_by_tag, topic_map)
    measure = measure or [_DEFAULT_MEASURES[rel_format.value]]
    reads = relevance_format(measure_list(measure), rel_format.value)
    if reads != RelFormat.qrels.value and not reading.is_plain:
        raise EvaluationError("--dedupe, --run-names, --meta, --split-by-tag and --topic-map "
                              "read runs against qrels; drop them with -R " + reads
                              + (" (diversity measures read subtopic qrels)"
                                 if reads == "subtopics" else ""))
    reference = None
    if zscores is not None:
        from pooling.evaluation.zscores import read_zscores

        reference = read_zscores(zscores)
    same_names = "by_file" if run_names is None else "error"
    qrels_input, run_inputs = _eval_inputs(qrels, runs, reading, same_names)
    with _topic_map_hint(topic_map is None), without_pandas():
        result = evaluate(
            qrels_input,
            run_inputs,
            measure,
            missing_topics=policy,
            relevance_level=level,
            max_docs=max_docs,
            engine=engine.value,
            ray_address=ray_address,
            judged_only=judged_only,
            collection_size=collection_size,
            zscores=reference,
            rel_format=rel_format.value,
        )
    if reading.is_plain:  # the engine read the files: the runs are named by their tags
        print_notes(_name_runs(result, runs, reading, same_names))
    _write(result, output_format, per_query, output, summary=not no_summary)
    print_warnings(getattr(result, "warnings", []) + _missing_topic_warnings(result))


def _eval_nuggets(first: str, more: list[str], measures: list[str] | None, complete: bool,
                  shared_topics: bool, output_format: OutputFormat, per_query: bool,
                  output: Path | None, summary: bool) -> None:
    """Nugget recall of the answers in nuggetizer assignment files (-R nuggets)."""
    from pooling.cli.pandas_guard import without_pandas
    from pooling.evaluation.nuggets import evaluate_nuggets

    if shared_topics:
        raise EvaluationError("--shared-topics does not apply to -R nuggets: a run is scored on "
                              "the topics it answered (add -c to score the others as 0)")
    if output_format is OutputFormat.ndeval:
        raise EvaluationError("--format ndeval is for diversity measures; use trec, csv, json "
                              "or parquet")
    state.fast_exit = True
    with without_pandas():
        result = evaluate_nuggets([first, *more], measures or [_DEFAULT_MEASURES["nuggets"]],
                                  complete=complete)
    _write(result, output_format, per_query, output, summary=summary)


def _eval_sampled(qrels: str, runs: list[str], measures: list[str], gains: list[str],
                  script_output: bool, output_format: OutputFormat, per_query: bool,
                  output: Path | None, summary: bool) -> None:
    """Sampled qrels: inferred measures in trec_eval's layout, or the script's own text."""
    from pooling.evaluation.sampled import evaluate_sampled, sample_eval_text

    if script_output:
        if output_format is not OutputFormat.trec:
            raise EvaluationError("--sample-eval prints the script's text; drop --format")
        text = "".join(sample_eval_text(qrels, run, per_query=per_query, gains=gains)
                       for run in runs)
        _emit(text.encode(), output)
        return
    _write(evaluate_sampled(qrels, runs, measures, gains=gains), output_format, per_query, output,
           summary=summary)


def _write(result, output_format: OutputFormat, per_query: bool, output: Path | None,
           summary: bool = True) -> None:
    """The results in the chosen format, on stdout or in `output` (summary=False: -n)."""
    from pooling.evaluation import format_trec_runs

    if output_format is OutputFormat.trec:
        _emit(format_trec_runs(result.runs, per_query, summary=summary).encode(), output)
        return
    if output_format is OutputFormat.ndeval:
        from pooling.evaluation.ndeval_format import format_ndeval

        _emit(format_ndeval(result.runs, summary=summary).encode(), output)
        return
    if not summary and not per_query:
        raise EvaluationError("-n without -q leaves nothing to write; add -q")
    table = _tidy(result, per_query, summary)
    if output_format is OutputFormat.parquet:
        if output is None:
            raise EvaluationError("--format parquet needs -o FILE")
        import pyarrow.parquet as pq

        from pooling.output_files import write_atomically

        write_atomically(output, lambda path: pq.write_table(table, path))
        return
    if output_format is OutputFormat.csv:
        import io

        import pyarrow.csv as pcsv

        buf = io.BytesIO()
        pcsv.write_csv(table, buf)
        _emit(buf.getvalue(), output)
        return
    import json

    rows = table.to_pylist()
    _emit((json.dumps(rows, indent=1) + "\n").encode(), output)


@contextmanager
def _topic_map_hint(wanted: bool):
    """Missing topics often mean ids written two ways: say how to map them."""
    from pooling.evaluation.results import NoTopicsError
    from pooling.evaluation.topics import MissingTopicsError

    try:
        yield
    except (MissingTopicsError, NoTopicsError) as exc:
        if not wanted:
            raise
        raise type(exc)(f"{exc}. If the run writes topic ids differently from the qrels, "
                        "map them with --topic-map FILE") from exc


def _eval_inputs(qrels: str, runs: list[str], reading, same_names: str):
    """Paths as they are for trec_eval's own reading (the fast path), else read here with
    the run-reading options applied (and the topic map applied to the qrels too)."""
    if reading.is_plain:
        return qrels, runs
    return _read_inputs(qrels, runs, reading, same_names)


def _name_runs(result, paths: list[str], reading, same_names: str) -> list[str]:
    """Name the runs the engine read (by their tags) as `read_runs` would have named them;
    returns the notes on what was renamed."""
    from dataclasses import replace

    from pooling.formats.run_files import (
        check_distinct_files,
        check_unique_names,
        distinct_run_names,
    )
    from pooling.formats.source import display_name
    from pooling.measures import Kind

    tags = [run.run_id for run in result.runs]
    sources = [display_name(p) for p in paths]
    if same_names == "by_file":
        names, notes = distinct_run_names([(p, tag, False) for p, tag in zip(paths, tags, strict=True)],
                                          reading)
        check_distinct_files(list(zip(names, sources, paths, strict=True)))
    else:
        names, notes = tags, []
        check_unique_names(list(zip(names, sources, strict=True)))
    for i, (run, name) in enumerate(zip(result.runs, names, strict=True)):
        if name != run.run_id:
            runid = {c.name: name for c in run.columns if c.kind is Kind.RUNID}
            result.runs[i] = replace(run, run_id=name, summary={**run.summary, **runid})
    return notes


def _missing_topic_warnings(result, shown: int = 3) -> list[str]:
    """One line per run scored on qrels topics it has no lines for (-c): how many, a few ids."""
    out = []
    for run in result.runs:
        missing, total = run.missing_query_ids, len(run.query_ids)
        if len(missing) == total:
            out.append(f"run {run.run_id} shares no topic with the qrels: -c scores all {total} "
                       "qrels topics as 0; check its query_ids, or map them with --topic-map FILE")
        elif missing:
            listed = ", ".join(missing[:shown]) + (
                f", … (+{len(missing) - shown} more)" if len(missing) > shown else "")
            out.append(f"run {run.run_id} has no lines for {len(missing)} of {total} qrels topics "
                       f"({listed}); -c scores them as 0")
    return out


def _read_inputs(qrels: str, runs: list[str], reading, same_names: str = "error"):
    """Qrels table and TrecRuns read with trec_eval's parse and the run-reading options."""
    from pooling.evaluation.trec_input import TrecRun, read_qrels
    from pooling.formats.run_files import read_runs

    qrels_table = read_qrels(qrels)
    notes = []
    if reading.topic_map is not None:
        qrels_table, used = reading.topic_map.apply(qrels_table)
        if used:
            notes.append(f"{qrels}: topic map changed {len(used)} topic id(s)")
    read = read_runs(runs, reading, dialect="trec_eval", same_names=same_names)
    print_notes(notes + read.notes(reading, trec_eval=True))
    inputs = [TrecRun(r.table.select(["query_id", "doc_id", "score"]), r.run_id, r.source)
              for r in read.runs]
    return qrels_table, inputs


def _tidy(result, per_query: bool, summary: bool = True):
    """run_id, query_id ('all' for the summary), measure, value: one row per value."""
    import pyarrow as pa

    parts = []
    if per_query:
        parts.append(result.per_query)
    if not summary:
        return pa.concat_tables(parts)
    means = result.means
    parts.append(
        pa.table(
            {
                "run_id": means.column("run_id"),
                "query_id": pa.array(["all"] * means.num_rows, pa.string()),
                "measure": means.column("measure"),
                "value": means.column("value"),
            }
        )
    )
    return pa.concat_tables(parts)


def _emit(data: bytes, output: Path | None) -> None:
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    from pooling.output_files import write_bytes

    write_bytes(output, data)


@app.command("measures")
def measures_command(
    format: Annotated[str, typer.Option(help="text or md (a Markdown table).")] = "text",
) -> None:
    """List every measure: name, ir_measures spelling, parameters and description."""
    from pooling.measures.catalog import measure_markdown, measure_table

    typer.echo(measure_markdown() if format == "md" else measure_table())
    typer.echo(_sampled_measures(format))


def _sampled_measures(format: str) -> str:
    """The measures read from sampled qrels (`pooling eval` on a five-column file, `pooling
    evaluate` on a sampled version): sample_eval.pl's and statAP."""
    from pooling.measures.sampled_names import BASES, DESCRIPTIONS

    head = ("On sampled qrels (query_id iter doc_id stratum relevance; docs/sampling.md), "
            "instead: sample_eval (all of sample_eval.pl's), xinfAP = infAP, iP@k, "
            "iprec@rec0.50 ...")
    if format == "md":
        rows = "".join(f"| {b} | {DESCRIPTIONS[b]} |\n" for b in BASES)
        return f"\n{head}\n\n| measure | description |\n|---|---|\n{rows}"
    width = max(len(b) for b in BASES) + 2
    return f"\n{head}\n" + "".join(f"{b:<{width}}{DESCRIPTIONS[b]}\n" for b in BASES)


@app.command("curve")
def curve_command(
    qrels: Annotated[str, typer.Argument(help="Qrels file (trec_eval format; gzip ok).")],
    runs: Annotated[list[str], typer.Argument(help="Run file(s).")],
    relevance_level: Annotated[int, typer.Option("-l", help="Lowest grade that counts as relevant.")] = 1,
    points: Annotated[bool, typer.Option(help="Every relevant document's point, not the interpolated curve.")] = False,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="CSV file (default: stdout).")] = None,
    plot: Annotated[Path | None, typer.Option(help="Draw the mean interpolated curves (.svg or .png).")] = None,
    dedupe: Dedupe = DedupeOpt.error,
    run_names: LabelRunNames = None,
    meta: Meta = None,
    split_by_tag: SplitByTag = False,
    topic_map: TopicMapOpt = None,
) -> None:
    """Precision-recall curves: interpolated at 0.0, 0.1, ... 1.0 (trec_eval's), or raw points."""
    import io

    import pyarrow as pa
    import pyarrow.csv as pcsv

    from pooling.evaluation.curves import mean_interpolated_curve, precision_recall_points

    reading = run_reading(dedupe, run_names or RunNamesOpt.tag, meta, split_by_tag, topic_map)
    qrels_table, run_inputs = _read_inputs(qrels, runs, reading,
                                           "by_file" if run_names is None else "error")
    tables, curves = [], {}
    for run in run_inputs:
        table = (precision_recall_points(qrels_table, run, relevance_level=relevance_level)
                 if points else mean_interpolated_curve(qrels_table, run, relevance_level=relevance_level))
        curves[run.run_id] = table
        tables.append(table.add_column(0, "run_id", pa.array([run.run_id] * table.num_rows)))
    buf = io.BytesIO()
    pcsv.write_csv(pa.concat_tables(tables), buf)
    _emit(buf.getvalue(), output)
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4.5))
        for run_id, table in curves.items():
            ax.plot(table["recall"].to_pylist(), table["precision"].to_pylist(),
                    marker="" if points else "o", label=run_id)
        ax.set(xlabel="recall", ylabel="precision", xlim=(0, 1), ylim=(0, 1.02),
               title="precision-recall" + ("" if points else " (interpolated, mean over topics)"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        from pooling.output_files import write_atomically

        try:
            write_atomically(plot, lambda path: fig.savefig(path, format=plot.suffix[1:] or "png"))
        finally:
            plt.close(fig)
