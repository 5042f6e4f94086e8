"""`pooling evaluate`: score stored runs against a stored qrels version (results are cached)."""

import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from pooling.cli.app import app, state
from pooling.cli.engine_options import EngineArg, EngineOpt, RayAddress
from pooling.cli.leaderboard_options import (
    LevelOpt,
    OutputOpt,
    QrelsOpt,
    SharedOpt,
    ZeroOpt,
    missing_topics,
)
from pooling.cli.store_cmds import StoreArg
from pooling.errors import PoolingError
from pooling.terminal.console import Console, set_wide_note

if TYPE_CHECKING:
    import pyarrow as pa

out = Console()


@app.command("evaluate")
def evaluate_cmd(
    store: StoreArg,
    qrels: QrelsOpt = None,
    run: Annotated[list[str], typer.Option("--run", help="Run to score (repeatable; default all).")] = [],  # noqa: B006
    measure: Annotated[list[str], typer.Option("-m", "--measure", help="Measure (trec_eval or ir_measures name; repeatable). Diversity measures "
        "(alpha-nDCG@20, ERR-IA@20, ndeval for all) on a version with subtopics.")] = [],  # noqa: B006
    zero: ZeroOpt = False,
    shared_topics: SharedOpt = False,
    relevance_level: LevelOpt = 1,
    max_docs: Annotated[int | None, typer.Option("-M", help="Use only each topic's top M documents.")] = None,
    collection_size: Annotated[int | None, typer.Option(
        "-N", "--collection-size", help="Documents in the collection, for Fallout@k, set_fallout "
        "and utility's d (default: the documents in the store).", show_default=False)] = None,
    topics: Annotated[str | None, typer.Option(help="Topic list (a,b,c) or a stored subset's name.")] = None,
    format: Annotated[str, typer.Option(help="table, csv, json or parquet.")] = "table",
    output: OutputOpt = None,
    engine: EngineArg = EngineOpt.local,
    ray_address: RayAddress = None,
    partitions: Annotated[str | None, typer.Option(
        "--partitions", help="With --engine ray: the directory the runs are exported to as "
        "Parquet for the workers, on a disk every node reads (default: a temporary one here).",
        show_default=False)] = None,
) -> None:
    """Score stored runs against a stored qrels version; values are cached in the store.

    Accepts every measure `pooling measures` lists, and official, all_trec and set. Only
    numeric values are kept: runid and relstring are text, printed by `pooling eval`.
    Diversity measures are computed from the version's subtopic rows, as `pooling eval`
    computes them on the exported ndeval file.
    """
    from pooling.cli.pandas_guard import without_pandas
    from pooling.store import Store
    from pooling.store.evaluate import evaluate_store
    from pooling.terminal.progress import terminal_progress

    policy = missing_topics(zero, shared_topics)
    with Store(store) as s, without_pandas(), terminal_progress() as bar:
        result = evaluate_store(
            s, qrels=qrels, runs=run or None, measures=measure or ["official"],
            missing_topics=policy,
            relevance_level=relevance_level, max_docs=max_docs, topics=topics,
            collection_size=collection_size,
            engine=engine.value, ray_address=ray_address, partitions=partitions, progress=bar,
        )
    # The store is closed (its last checkpoint written): with the local engine nothing is
    # left to clean up, and tearing the interpreter down would only add to the wait.
    state.fast_exit = engine is EngineOpt.local
    typer.echo(f"qrels: {result.qrels_version}", err=True)
    skipped = [m for m in result.text_measures if m != "runid"]
    if skipped:
        typer.echo(f"note: {', '.join(skipped)} is text, not a value; `pooling eval -q` prints it",
                   err=True)
    if format == "table":
        _print_table(result)
        return
    tidy = _tidy(result)
    if format == "parquet":
        if output is None:
            raise PoolingError("--format parquet needs -o FILE")
        import pyarrow.parquet as pq

        from pooling.output_files import write_atomically

        write_atomically(output, lambda path: pq.write_table(tidy, path))
    elif format in ("csv", "json"):
        text = _csv(tidy) if format == "csv" else tidy.to_pandas().to_json(orient="records", lines=True)
        if output is None:
            sys.stdout.write(text)
        else:
            from pooling.output_files import write_text

            write_text(output, text)
    else:
        raise PoolingError("--format must be table, csv, json or parquet")


def _tidy(result) -> "pa.Table":
    """Per-topic rows plus one `all` row per run and measure, with the settings used.

    As in `pooling eval -q`, geometric means (gm_map, gm_bpref) have the `all` row only.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from pooling.measures import Kind, parse_measures

    sampled = bool(result.options.get("sampled"))  # inferred measures: every one per topic
    summary_only = [] if sampled else [c for m in parse_measures(result.measures)
                                       if m.spec.kind is Kind.GEO for c in m.columns]
    per_query = result.per_query.filter(
        pc.invert(pc.is_in(result.per_query["measure"], pa.array(summary_only, pa.string()))))
    means = result.means
    schema = pa.schema([("run_id", pa.string()), ("query_id", pa.string()),
                        ("measure", pa.string()), ("value", pa.float64())])
    rows = pa.concat_tables([
        per_query.select(["run_id", "query_id", "measure", "value"]).cast(schema),
        pa.table({"run_id": means["run_id"], "query_id": pa.array(["all"] * means.num_rows),
                  "measure": means["measure"], "value": means["value"]}).cast(schema),
    ])
    n = rows.num_rows
    o = result.options
    return rows.append_column("qrels_version", pa.array([result.qrels_version] * n)) \
        .append_column("missing_topics", pa.array([o["missing_topics"]] * n)) \
        .append_column("relevance_level", pa.array([o["relevance_level"]] * n))


def _csv(table: "pa.Table") -> str:
    import io

    buf = io.StringIO()
    table.to_pandas().to_csv(buf, index=False)
    return buf.getvalue()


def _print_table(result) -> None:
    means = result.means.to_pylist()
    measures = result.measures
    by_run: dict[str, dict[str, float]] = {r: {} for r in result.run_ids}
    for r in means:
        by_run.setdefault(r["run_id"], {})[r["measure"]] = r["value"]
    table = Table("run_id", *measures, title=f"qrels {result.qrels_version} · topics policy "
                  f"{result.options['missing_topics']} · -l {result.options['relevance_level']}")
    for run_id, values in by_run.items():
        table.add_row(run_id, *(_fmt(values.get(m)) for m in measures))
    out.print(set_wide_note(table, "`--format csv` gives every value, one per line"))


def _fmt(v: float | None) -> str:
    if v is None:
        return ""
    return f"{v:.0f}" if float(v).is_integer() and abs(v) >= 1 else f"{v:.4f}"
