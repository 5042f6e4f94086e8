"""Every command that prints a table fits it to the terminal: in a real pseudo-terminal of 80
and of 60 columns, every run id, topic and measure name comes out whole, no cell is cut
short with an ellipsis, and no drawn table line is wider than the terminal. A table that
cannot fit is printed one row per block, saying how to get it as a table.

(Off a terminal tables keep their natural width: see test_cli_output.py.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pseudo_terminal import in_terminal

from pooling.judges.model_judges import add_judge
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import Judgment, record
from pooling.judging.rounds import create_round
from pooling.store import Store

RUN_IDS = ["CUNI_en_run1_bm25_rm3", "uwmtCR0", "THUIRr0301_with_feedback", "pircRBa1"]
TOPICS = [str(t) for t in range(301, 321)]
MEASURES = ["map", "P_10", "ndcg_cut_10", "Judged@10"]
BOX = set("│┃┏┓┗┛┡┩└┘┌┐├┤╇╈┼━─")


def _doc(t: str, i: int) -> str:
    return f"d{t}-{i:02d}"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """Four runs with ids of every length on 20 topics, two qrels versions, two subsets, a
    round judged twice over by two assessors, and a judge."""
    d = tmp_path_factory.mktemp("tables")
    for k, run_id in enumerate(RUN_IDS):
        lines = []
        for t in TOPICS:
            order = list(range(30))
            order = order[k:] + order[:k]  # each run its own order
            lines += [f"{t} Q0 {_doc(t, i)} {r + 1} {30 - r} {run_id}\n"
                      for r, i in enumerate(order)]
        (d / f"{run_id}.txt").write_text("".join(lines))
    (d / "qrels.txt").write_text("".join(f"{t} 0 {_doc(t, i)} {int(i % 4 == 0)}\n"
                                         for t in TOPICS for i in range(30)))
    (d / "second.txt").write_text("".join(f"{t} 0 {_doc(t, i)} {int(i % 3 == 0)}\n"
                                          for t in TOPICS for i in range(30)))
    (d / "topics.jsonl").write_text("".join(json.dumps({"query_id": t, "title": f"topic {t}"})
                                            + "\n" for t in TOPICS))
    path = d / "s.duckdb"
    with Store.create(path) as s:
        s.import_runs([d / f"{r}.txt" for r in RUN_IDS])
        s.import_qrels(d / "qrels.txt", name="official")
        s.import_qrels(d / "second.txt", name="second")
        s.import_topics(d / "topics.jsonl")
        from pooling.store.topic_selection import save_topic_subset

        save_topic_subset(s, "first_half", ["301-310"])
        save_topic_subset(s, "second_half", ["311-320"])
        create_round(s, "r1", "depth", strategy_params={"depth": 2}, grades=[0, 1, 2])
        add_assessor(s, "annotator one", assessor_id="annotator_one")
        add_assessor(s, "annotator two", assessor_id="annotator_two")
        assign(s, "r1", ["annotator_one", "annotator_two"], overlap=1.0)
        pairs = s.con.execute("SELECT query_id, doc_id FROM pool_entries WHERE round_id = 'r1'"
                              ).fetchall()
        record(s, [Judgment("r1", who, q, doc, (n + shift) % 3)
                   for n, (q, doc) in enumerate(pairs)
                   for who, shift in (("annotator_one", 0), ("annotator_two", n % 2))])
        add_judge(s, "a-local-program-judge", "command", {"command": "true"})
    return path


# command -> its arguments after `pooling`, and the names its output must show whole
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "leaderboard": (["leaderboard", "{store}", "--resamples", "200", "-m", "map", "-m", "P_10",
                     "-m", "ndcg_cut_10"], RUN_IDS + ["ndcg_cut_10", "Judged@10"]),
    "leaderboard --pairs": (["leaderboard", "{store}", "--resamples", "200", "--pairs"],
                            RUN_IDS),
    "compare": (["compare", "{store}", "-m", "map", "-m", "P_10", "-m", "ndcg_cut_10"],
                ["ndcg_cut_10", "P_10"]),
    "pool-bias": (["pool-bias", "{store}", "--depth", "5", "--runs", "all"],
                  RUN_IDS + ["unique_relevant", "relative_change"]),
    "folds": (["folds", "{store}", "-k", "2"], ["best_test_score"]),
    "topic-report": (["topic-report", "{store}", "--format", "table"], RUN_IDS + TOPICS),
    "evaluate": (["evaluate", "{store}", *[a for m in MEASURES for a in ("-m", m)]],
                 RUN_IDS + MEASURES),
    "info": (["info", "{store}"], RUN_IDS),
    "topics list": (["topics", "list", "{store}"], ["first_half", "second_half"]),
    "judges list": (["judges", "list", "{store}"], ["a-local-program-judge"]),
    "strategies": (["strategies"], ["depth"]),
    "qrels adjudication": (["qrels", "adjudication", "{store}"], TOPICS[:1]),
    "agreement --round": (["agreement", "{store}", "--round", "r1"],
                          ["annotator_one / annotator_two"]),
    "agreement --qrels": (["agreement", "{store}", "--qrels", "official", "--qrels", "second"],
                          ["confusion matrix"]),
}


@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_table_fits_the_terminal_with_every_name_whole(store, command, columns):
    template, names = COMMANDS[command]
    text = in_terminal([str(store) if a == "{store}" else a for a in template], columns)
    for name in names:
        assert re.search(rf"(?<![\w@]){re.escape(name)}(?![\w@])", text), (name, text)
    assert "…" not in text.replace("…\n", "") or command == "topics list", text
    for line in text.splitlines():
        if BOX & set(line):  # a line of a drawn table
            assert len(line) <= columns, (len(line), line)


def test_a_table_too_wide_for_the_terminal_comes_one_row_per_block(store):
    text = in_terminal(["pool-bias", str(store), "--depth", "5", "--runs", "all"], 60)
    assert "(wider than this 60-column terminal, so one block per row; `--format md` or " \
           "`--format csv` prints it as a table)" in text
    blocks = [b for b in text.split("\n\n") if b.startswith("run_id ")]
    assert sorted(b.splitlines()[0].split()[1] for b in blocks) == sorted(RUN_IDS)
    assert all(re.search(r"^  unique_relevant +\d+$", b, re.M) for b in blocks)


def test_a_leaderboard_in_80_columns_keeps_its_rows_leaving_out_the_intervals(store):
    args = ["leaderboard", str(store), "--resamples", "200", "-m", "map", "-m", "P_10"]
    wide, narrow = in_terminal(args, 200), in_terminal(args, 80)
    assert re.search(r"\d\.\d{4} ± \d\.\d{3}", wide)
    assert "intervals left out to fit the terminal" in narrow and "±" not in narrow
    for run_id in RUN_IDS:
        assert [line for line in narrow.splitlines() if f" {run_id} " in line]  # one row each
