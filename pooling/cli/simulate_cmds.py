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
    from pooling import simulate as sim

    reading = run_reading(dedupe, run_names, meta, split_by_tag, topic_map)
    inputs = sim.read_inputs(qrels, runs, reading)
    print_notes(inputs.notes)
    data = sim.prepare(inputs.qrels, inputs.runs, depth, sim.parse_topics(topics) if topics else None,
                       texts=sim.read_texts(docs) if docs else None)
    specs = [sim.parse_strategy(s) for s in strategy]
    if leave_one_out is not None:
        if engine is EngineOpt.ray:
            from pooling.engine import EngineError

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

