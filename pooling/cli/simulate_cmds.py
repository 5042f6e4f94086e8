"""`pooling simulate`: replay pooling strategies with existing qrels as the assessor."""

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from pooling.cli.app import app
from pooling.cli.engine_options import EngineArg, EngineOpt, RayAddress
from pooling.cli.run_options import (
    Dedupe,
    DedupeOpt,
    Meta,
    RunNames,
    RunNamesOpt,
    SplitByTag,
    TopicMapOpt,
    print_notes,
    run_reading,
)


class SimulateFormat(StrEnum):
    table = "table"
    csv = "csv"


class LeaveOut(StrEnum):
    run = "run"
    group = "group"


# The strategies a replay can run (those the registry says replay: `Strategy.replays`),
# written out so that building the help (which every `pooling` command does) need not import
# the strategies and NumPy; a test pins them to pooling.strategies.REGISTRY.
REPLAYABLE = (
    "cal", "depth", "hedge", "maxmean", "mixfuse", "mmfuse", "mtf", "random", "sample", "take",
    "thompson", "ucb",
)


def _strategy_help() -> str:
    return ("Strategy, repeatable: name or name:key=value,... (" + ", ".join(REPLAYABLE)
            + "; triage by automatic judges replays with `pooling simulate-triage`).")


@app.command("simulate")
def simulate_command(
    qrels: Annotated[str, typer.Argument(help="Qrels file: the oracle assessor (gzip ok).")],
    runs: Annotated[list[str], typer.Argument(help="Run file(s) to pool.")],
    strategy: Annotated[list[str], typer.Option("--strategy", "-s", help=_strategy_help())],
    budget: Annotated[list[int], typer.Option("--budget", "-b", help="Judgments per topic; repeatable.")],
    depth: Annotated[int, typer.Option("--depth", help="Candidates: each run's top D.")] = 100,
    topics: Annotated[
        str | None, typer.Option("--topics", help="Topics to replay, e.g. 601-650,700.")
    ] = None,
    floor: Annotated[int, typer.Option("--floor", help="Judge every run's top F first.")] = 0,
    docs: Annotated[
        str | None,
        typer.Option("--docs", help="The collection's documents (any format `pooling import docs` "
                     "reads), for strategies that read text (cal)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for random choices.")] = 0,
    leave_one_out: Annotated[
        LeaveOut | None,
        typer.Option("--leave-one-out", help="Pool without each run (or group) and report its MAP and rank change."),
    ] = None,
    output_format: Annotated[
        SimulateFormat, typer.Option("--format", help="table (text) or csv.")
    ] = SimulateFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write here instead of stdout.")] = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Plot found share against budget (.png or .svg; needs matplotlib).")
    ] = None,
    dedupe: Dedupe = DedupeOpt.error,
    run_names: RunNames = RunNamesOpt.tag,
    meta: Meta = None,
    split_by_tag: SplitByTag = False,
    topic_map: TopicMapOpt = None,
    engine: EngineArg = EngineOpt.local,
    ray_address: RayAddress = None,
) -> None:
    """Replay pooling strategies against existing qrels and report, per strategy and budget,
    documents judged, relevant found, the share of the depth pool's relevant documents found,
    and Kendall's tau / tau_ap of the run ranking (MAP) against the full depth pool's."""
    from pooling.strategies import replays as sim

    reading = run_reading(dedupe, run_names, meta, split_by_tag, topic_map)
    inputs = sim.read_inputs(qrels, runs, reading)
    print_notes(inputs.notes)
    data = sim.prepare(inputs.qrels, inputs.runs, depth, sim.parse_topics(topics) if topics else None,
                       texts=sim.read_texts(docs) if docs else None)
    specs = [sim.parse_strategy(s) for s in strategy]
    if leave_one_out is not None:
        if engine is EngineOpt.ray:
            from pooling.runner import EngineError

            raise EngineError("--leave-one-out runs on the local engine only; leave out --engine ray")
        table = sim.leave_one_out(data, specs, budget, by=leave_one_out.value, seed=seed, floor=floor,
                                  groups=inputs.groups or None)
    else:
        table = sim.simulate(data, specs, budget, seed=seed, floor=floor, engine=engine.value,
                             ray_address=ray_address)
        if plot is not None:
            sim.plot_found(table, str(plot))
    if output_format is SimulateFormat.csv:
        text = sim.to_csv(table)
    else:
        text = sim.render_table(table)
    _emit(text, output)


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
        return
    from pooling.output_files import write_text

    write_text(output, text)



class TriageBy(StrEnum):
    pairs = "pairs"
    topic = "topic"


class TriageErrors(StrEnum):
    binary = "binary"
    grade = "grade"


@app.command("simulate-triage")
def simulate_triage_command(
    truth: Annotated[str, typer.Argument(
        help="The truth: a qrels file (gzip ok), or with --store a qrels version's name.")],
    judge: Annotated[list[str], typer.Option(
        "--judge", help="A judge's labels: NAME=FILE, a qrels file of its grades; with --store, "
        "a judge's NAME. Once for one judge (least sure first; needs probabilities or a "
        "scale), twice for two (most disagreement first).")],
    store: Annotated[Path | None, typer.Option(
        help="Read the judges (their grades, probabilities and declared scales) and the "
        "truth's qrels version from this store.")] = None,
    max_grade: Annotated[str | None, typer.Option(
        help="The judges' grade scale 0..N: N, or N,M in --judge order (default: with --store, "
        "each judge's declared scale).", show_default=False)] = None,
    threshold: Annotated[int, typer.Option(help="Lowest grade counted relevant.")] = 1,
    unjudged: Annotated[int | None, typer.Option(
        help="The grade a pair the truth lacks counts as (0 for qrels that list mostly "
        "relevant pairs); default: such pairs are left out.", show_default=False)] = None,
    errors: Annotated[TriageErrors, typer.Option(
        help="binary: relevant or not at --threshold, against the truth; grade: any grade "
        "but the truth's.")] = TriageErrors.binary,
    by: Annotated[TriageBy, typer.Option(
        help="pairs: one order over all pairs; topic: the same share of each topic's queue, "
        "as a round with a per-topic budget.")] = TriageBy.pairs,
    shares: Annotated[str, typer.Option(
        help="Percentages of the pairs reviewed, comma-separated.")] = "10,20,30,40,50,60,70,80,90,100",
    output_format: Annotated[
        SimulateFormat, typer.Option("--format", help="table (text) or csv.")
    ] = SimulateFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write here instead of stdout.")] = None,
) -> None:
    """Replay triage against the truth: the share of each judge's errors people catch after
    reviewing 10%, 20%, ... of the judges' pairs in triage order (the order `pooling pool
    --strategy uncertain` queues), against random order (its exact expectation) and the best
    order.

    A pair counts when every judge graded it and the truth grades it (see --unjudged). Ties in
    triage order are taken in random order too, as an expected value.
    """
    from pooling.errors import PoolingError
    from pooling.label_sets.triage import store_triage_replay
    from pooling.strategies.replays.triage import triage_replay

    try:
        percents = [float(p) for p in shares.split(",") if p.strip()]
    except ValueError:
        raise PoolingError(f"--shares takes percentages like 10,20,50, not {shares!r}") from None
    names = [j.partition("=")[0].strip() for j in judge]
    scales = _triage_scales(names, max_grade)
    options = dict(max_grade=scales, threshold=threshold, unjudged=unjudged, errors=errors.value,
                   by=by.value, shares=[p / 100 for p in percents])
    if store is not None:
        from pooling.store import Store

        if any("=" in j for j in judge):
            raise PoolingError("with --store, --judge names a judge of the store; leave out "
                               "=FILE (or leave out --store to read files)")
        with Store(store, read_only=True) as s:
            result = store_triage_replay(s, names, truth, **options)
    else:
        from pooling.formats.trec_qrels import read_trec_qrels

        files = [j.partition("=")[2].strip() for j in judge]
        if not all(files):
            raise PoolingError("--judge takes NAME=FILE (a qrels file of the judge's grades); "
                               "to name a stored judge, give --store STORE")
        result = triage_replay({n: read_trec_qrels(f) for n, f in zip(names, files, strict=True)},
                               read_trec_qrels(truth), **options)
    text = result.to_csv() if output_format is SimulateFormat.csv else result.render()
    _emit(text, output)


def _triage_scales(names: list[str], max_grade: str | None) -> dict[str, int] | None:
    """--max-grade as judge -> N, checked as `pooling pool`'s max_grade parameter is."""
    if max_grade is None:
        return None
    from pooling.strategies import get_strategy

    checked = get_strategy("uncertain", judges=",".join(names), max_grade=max_grade).max_grades()
    return {n: v for n, v in checked.items() if v is not None}
