"""The replay harness: the oracle cannot be peeked at, the report's columns, the CLI."""

from __future__ import annotations

import csv
import io

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pooling.cli import app
from pooling.strategies import REGISTRY
from pooling.strategies.replays import (
    Oracle,
    SimulationError,
    kendall_tau_b,
    parse_strategy,
    parse_topics,
    prepare,
    replay,
    simulate,
    tau_ap,
)

RUN_A = """1 Q0 d1 1 9 runA
1 Q0 d2 2 8 runA
1 Q0 d3 3 7 runA
1 Q0 d4 4 6 runA
2 Q0 e1 1 9 runA
2 Q0 e2 2 8 runA
2 Q0 e3 3 7 runA
"""
RUN_B = """1 Q0 d5 1 9 runB
1 Q0 d3 2 8 runB
1 Q0 d6 3 7 runB
1 Q0 d1 4 6 runB
2 Q0 e4 1 9 runB
2 Q0 e1 2 8 runB
2 Q0 e5 3 7 runB
"""
QRELS = """1 0 d1 1
1 0 d3 2
1 0 d6 0
1 0 d9 1
2 0 e1 1
2 0 e5 1
"""


def _table(text, cols):
    rows = [line.split() for line in text.strip().splitlines()]
    if cols == "run":
        return pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows], "score": [float(r[4]) for r in rows]})
    return pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows], "relevance": [int(r[3]) for r in rows]})


@pytest.fixture
def tiny_data():
    runs = {"runA": _table(RUN_A, "run"), "runB": _table(RUN_B, "run")}
    return prepare(_table(QRELS, "qrels"), runs, depth=3)


class CountingOracle(Oracle):
    pass


REPLAYABLE = sorted(n for n, cls in REGISTRY.items() if cls.replays())


@pytest.mark.parametrize("name", REPLAYABLE)
def test_oracle_answers_only_what_strategies_ask(name, tiny_data):
    oracle = CountingOracle(tiny_data.qrels)
    tiny_data.texts = {d: f"text of {d}" for d in ("d1", "d2", "d3", "d5", "d6", "e1", "e2", "e3", "e4", "e5")}
    rep = replay(tiny_data, parse_strategy(name), 4, oracle=oracle, floor=1)
    served = {(q, tiny_data_doc) for q, j in rep.judgments.items() for tiny_data_doc in _docs(tiny_data, q, j)}
    assert set(oracle.asked) <= served
    assert oracle.count == sum(len(j) for j in rep.judgments.values()) == len(set(oracle.asked))
    # only the depth-3 candidates are ever asked about: d4 and d9 never are
    assert not {("1", "d4"), ("1", "d9")} & set(oracle.asked)


def _docs(data, q, judgments):
    by_number = {n: d for (qq, d), n in data.doc_number.items() if qq == q}
    return [by_number[n] for n, _ in judgments]


def test_simulation_reports_found_share_of_the_depth_pool(tiny_data):
    table = simulate(tiny_data, [parse_strategy("depth")], [2, 6])
    rows = table.to_pylist()
    assert table.column_names == ["strategy", "budget", "judged", "relevant_found", "found_share", "tau", "tau_ap"]
    full = rows[1]
    # depth-3 pool: topic 1 relevant d1, d3 (d9 is outside the pool); topic 2: e1, e5
    assert full["judged"] == 5 + 5 and full["relevant_found"] == 4 and full["found_share"] == 1.0
    assert full["tau"] == pytest.approx(1.0)


def test_tau_b_and_tau_ap_agree_on_perfect_and_reversed_rankings():
    x = np.array([0.4, 0.3, 0.2, 0.1])
    assert kendall_tau_b(x, x) == tau_ap(x, x) == 1.0
    assert kendall_tau_b(x, -x) == tau_ap(x, -x) == -1.0
    swapped_top = np.array([0.3, 0.4, 0.2, 0.1])
    swapped_bottom = np.array([0.4, 0.3, 0.1, 0.2])
    assert kendall_tau_b(swapped_top, x) == kendall_tau_b(swapped_bottom, x)
    assert tau_ap(swapped_top, x) < tau_ap(swapped_bottom, x)  # tau_ap weighs the top more


def test_a_subset_scores_like_a_replay_prepared_on_those_topics_alone(tiny_data):
    runs = {"runA": _table(RUN_A, "run"), "runB": _table(RUN_B, "run")}
    alone = prepare(_table(QRELS, "qrels"), runs, depth=3, query_ids=["2"])
    sub = tiny_data.subset(["2"])
    assert sub.query_ids == ["2"] and list(sub.topics) == ["2"]
    np.testing.assert_array_equal(sub.truth_map, alone.truth_map)
    spec = parse_strategy("depth")
    assert simulate(sub, [spec], [1, 3]).to_pylist() == simulate(alone, [spec], [1, 3]).to_pylist()
    assert tiny_data.truth_map.tolist() != sub.truth_map.tolist()  # topic 1 no longer counts
    with pytest.raises(SimulationError, match="not in this replay"):
        tiny_data.subset(["7"])


def test_topics_and_bad_inputs_are_reported(tiny_data):
    assert parse_topics("601-603,x7") == ["601", "602", "603", "x7"]
    with pytest.raises(SimulationError, match="--topics"):
        prepare(tiny_data.qrels, {"r": _table(RUN_A, "run")}, 3, ["9"])
    with pytest.raises(SimulationError, match="budget"):
        simulate(tiny_data, [parse_strategy("depth")], [0])


def test_cli_csv_has_exactly_the_documented_columns(tmp_path):
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "q.txt").write_text(QRELS)
    result = CliRunner().invoke(
        app,
        ["simulate", str(tmp_path / "q.txt"), str(tmp_path / "a.run"), str(tmp_path / "b.run"),
         "--strategy", "depth", "--strategy", "maxmean", "--budget", "2", "--budget", "4",
         "--depth", "3", "--format", "csv"],
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.output)))
    assert rows[0] == ["strategy", "budget", "judged", "relevant_found", "found_share", "tau", "tau_ap"]
    assert [r[:2] for r in rows[1:]] == [["depth", "2"], ["depth", "4"], ["maxmean", "2"], ["maxmean", "4"]]


def test_cli_leave_one_out_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "q.txt").write_text(QRELS)
    args = ["simulate", str(tmp_path / "q.txt"), str(tmp_path / "a.run"), str(tmp_path / "b.run"),
            "-s", "hedge", "-b", "3", "--depth", "3"]
    result = CliRunner().invoke(app, [*args, "--plot", str(tmp_path / "f.png")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "f.png").stat().st_size > 0
    loo = CliRunner().invoke(app, [*args, "--leave-one-out", "run", "--format", "csv"])
    assert loo.exit_code == 0, loo.output
    header = loo.output.splitlines()[0].split(",")
    assert header[:4] == ["strategy", "budget", "left_out", "run_id"] and "rank_change" in header
    assert len(loo.output.splitlines()) == 3  # each run left out once


def test_cli_unknown_strategy_is_one_line(tmp_path):
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "q.txt").write_text(QRELS)
    with pytest.raises(Exception, match="unknown strategy"):
        CliRunner().invoke(
            app, ["simulate", str(tmp_path / "q.txt"), str(tmp_path / "a.run"), "-s", "nope", "-b", "1"],
            catch_exceptions=False,
        )


def test_strategies_that_need_more_than_the_runs_say_what_a_replay_lacks(tiny_data):
    assert "uncertain" not in REPLAYABLE and "cal" in REPLAYABLE
    with pytest.raises(SimulationError, match="--docs FILE"):
        replay(tiny_data, parse_strategy("cal"), 2)
    with pytest.raises(SimulationError, match="pooling pool"):
        replay(tiny_data, parse_strategy("uncertain:judges=j"), 2)


def test_cli_replays_cal_with_the_documents_given(tmp_path):
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "q.txt").write_text(QRELS)
    words = {"d1": "wing flutter", "d3": "wing flutter panel", "d6": "heat transfer",
             "d2": "heat flow", "d5": "heat shield", "d4": "wing flutter tip"}
    (tmp_path / "docs.tsv").write_text("".join(f"{d}\t{t}\n" for d, t in words.items()))
    args = ["simulate", str(tmp_path / "q.txt"), str(tmp_path / "a.run"), str(tmp_path / "b.run"),
            "-s", "cal", "-b", "4", "--depth", "3", "--format", "csv"]
    refused = CliRunner().invoke(app, args)
    assert isinstance(refused.exception, SimulationError) and "--docs FILE" in str(refused.exception)
    result = CliRunner().invoke(app, [*args, "--docs", str(tmp_path / "docs.tsv")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].startswith("cal,4,")
