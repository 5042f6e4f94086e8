"""`pooling eval` with diversity measures: subtopic qrels, ndeval's and ir_measures' names,
trec_eval's layout and ndeval's CSV, plain measures on the derived plain qrels, topics."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pooling
from pooling.cli.app import app
from pooling.errors import MeasureError
from pooling.evaluation import evaluate
from pooling.formats.subtopic_qrels import plain_qrels, read_subtopic_qrels
from pooling.formats.trec_qrels import write_trec_qrels
from pooling.measures import parse_measures

pyndeval = pytest.importorskip("pyndeval") if not os.environ.get("CI") else __import__("pyndeval")

# Topic 3 has no relevant document (nNRBP 0/0), topic 4 is not in the run, topic 9 only in
# the run; ties in score between b/x and among topic 2's documents.
QRELS = """\
1 1 a 1
1 2 a 1
1 2 b 2
1 3 c 1
1 1 d 0
2 1 e 1
2 1 g 1
2 2 f 0
3 1 h 0
4 1 i 1
"""
RUN = """\
1 Q0 a 1 3 runA
1 Q0 x 2 2 runA
1 Q0 b 3 2 runA
1 Q0 c 4 1 runA
2 Q0 f 1 5 runA
2 Q0 g 2 4 runA
2 Q0 e 3 4 runA
3 Q0 h 1 1 runA
9 Q0 a 1 1 runA
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "subtopics.qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "subtopics.qrels"), str(tmp_path / "run")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def pyndeval_values() -> dict[str, dict[str, float]]:
    qrels = [(q, s, d, int(r)) for q, s, d, r in (line.split() for line in QRELS.splitlines())]
    run = [(f[0], f[2], float(f[4])) for f in (line.split() for line in RUN.splitlines())]
    return pyndeval.ndeval(qrels, run)


def test_ndeval_layout_prints_what_pyndeval_computes_digit_for_digit(files):
    done = invoke("eval", "-m", "ndeval", "--format", "ndeval", "--shared-topics", *files)
    assert done.exit_code == 0, done.output
    expected = pyndeval_values()
    measures = pyndeval.DEFAULT_MEASURES
    lines = [",".join(["runid", "topic", *measures])]
    for topic in sorted(expected, key=int):
        lines.append(",".join(["runA", topic, *(_c(expected[topic][m]) for m in measures)]))
    amean = [sum(expected[t][m] for t in expected) / len(expected) for m in measures]
    lines.append(",".join(["runA", "amean", *(_c(v) for v in amean)]))
    assert done.stdout == "\n".join(lines) + "\n"


def _c(value: float) -> str:
    return "-nan" if value != value else "%.6f" % value  # noqa: UP031


def test_trec_layout_names_each_value_by_ndevals_name(files):
    done = invoke("eval", "-q", "--shared-topics", "-m", "alpha-nDCG@20", "-m", "nNRBP", *files)
    assert done.exit_code == 0, done.output
    expected = pyndeval_values()
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert [r[0].strip() for r in rows] == ["alpha-nDCG@20", "nNRBP"] * 4
    for name, topic, value in rows[:-2]:
        theirs = expected[topic][name.strip()]
        assert value == ("  -nan" if theirs != theirs else "%6.4f" % theirs)  # noqa: UP031
    assert rows[-1][1] == "all" and rows[-1][2] == "  -nan"  # topic 3's 0/0 reaches the mean


def test_ir_measures_spellings_are_the_same_measures_as_ndevals_names():
    ours = parse_measures(["alpha-nDCG@20", "ERR-IA@5", "NRBP", "MAP-IA", "P-IA@10", "strec@5"])
    theirs = parse_measures(["alpha_nDCG@20", "ERR_IA@5", "NRBP(alpha=0.5,beta=0.5)", "AP_IA",
                             "P_IA@10", "StRecall@5"])
    assert ours == theirs
    assert [m.columns for m in parse_measures(["α_nDCG(alpha=0.25)@10"])] == [
        ["alpha-nDCG(alpha=0.25)@10"]]
    assert parse_measures(["alpha-nDCG"])[0].columns == [
        "alpha-nDCG@5", "alpha-nDCG@10", "alpha-nDCG@20"]


@pytest.mark.parametrize(("name", "says"), [
    ("NRBP@5", "takes no cutoff"),
    ("alpha-nDCG(alpha=1.5)@5", "between 0 and 1"),
    ("P-IA(alpha=0.3)@5", "unsupported parameter"),
    ("strec(rel=0)@5", "rel must be >= 1"),
])
def test_a_diversity_measure_with_a_wrong_parameter_says_what_it_takes(name, says):
    with pytest.raises(MeasureError, match=says):
        parse_measures([name])


def test_subtopics_without_measures_give_ndevals_set(files):
    done = invoke("eval", "-R", "subtopics", "--shared-topics", *files)
    assert done.exit_code == 0, done.output
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == [*pyndeval.DEFAULT_MEASURES]


def test_plain_measures_beside_diversity_ones_use_the_derived_plain_qrels(files, tmp_path):
    qrels, run = files
    plain = tmp_path / "plain.qrels"
    write_trec_qrels(plain_qrels(read_subtopic_qrels(qrels)), plain)
    mixed = invoke("eval", "-q", "-c", "-m", "official", "-m", "ndcg_cut.5", "-m", "strec@5",
                   qrels, run)
    alone = invoke("eval", "-q", "-c", "-m", "official", "-m", "ndcg_cut.5", str(plain), run)
    assert mixed.exit_code == 0 and alone.exit_code == 0, mixed.output + alone.output
    assert [line for line in mixed.stdout.splitlines() if not line.startswith("strec")] == \
        alone.stdout.splitlines()
    assert "strec@5" in mixed.stdout


def test_a_run_lacking_qrels_topics_is_refused_unless_told_how_to_score_them(files, pooling_cli):
    refused = pooling_cli("eval", "-m", "ndeval", *files)
    assert refused.returncode == 4 and refused.stdout == b""
    assert b"--shared-topics" in refused.stderr and b"Traceback" not in refused.stderr
    expected = pyndeval_values()
    zero = evaluate(files[0], files[1], ["strec@5"], missing_topics="zero")
    (mean,) = zero.means.column("value").to_pylist()
    # ndeval -c: the shared topics' sum over every qrels topic (4), topic 4 counting 0
    assert mean == pytest.approx(sum(v["strec@5"] for v in expected.values()) / 4)
    assert zero.runs[0].missing_query_ids == ["4"]


def test_topics_a_run_lacks_have_no_row_in_ndevals_layout_but_count_in_amean(files):
    done = invoke("eval", "-c", "-m", "MAP-IA", "--format", "ndeval", *files)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert [line.split(",")[1] for line in lines] == ["topic", "1", "2", "3", "amean"]


def test_a_malformed_subtopic_qrels_line_is_named(files, tmp_path, pooling_cli):
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 1 a 1\n1 a 1\n")
    done = pooling_cli("eval", "-m", "ndeval", str(bad), files[1])
    assert done.returncode != 0 and done.stdout == b""
    assert b"bad.qrels:2" in done.stderr and b"expected 4 fields" in done.stderr


def test_run_reading_options_are_refused_with_subtopic_qrels(files, pooling_cli):
    done = pooling_cli("eval", "-m", "alpha-nDCG@5", "--dedupe", "first", *files)
    assert done.returncode != 0 and b"subtopic" in done.stderr


def test_evaluate_diversity_is_exported_from_the_package(files):
    table = pooling.evaluate_diversity(files[0], files[1], ["P-IA@5"], missing_topics="skip")
    assert table.column_names == ["run_id", "query_id", "measure", "value"]
    assert table.column("query_id").to_pylist() == ["1", "2", "3"]
    assert table.column("value").to_pylist()[0] == pytest.approx(pyndeval_values()["1"]["P-IA@5"])


def test_a_plain_qrels_file_is_read_with_a_warning_that_it_has_one_subtopic(tmp_path, files):
    plain = tmp_path / "plain.qrels"
    plain.write_text("1 0 a 1\n1 0 b 0\n2 0 e 1\n3 0 h 0\n4 0 i 1\n")
    result = evaluate(str(plain), files[1], ["strec@5"], missing_topics="skip")
    assert any("same subtopic" in w for w in result.warnings)


def test_stored_plain_qrels_are_refused_for_diversity_measures_with_what_to_do(tmp_path, files):
    from pooling.store import Store

    plain = tmp_path / "plain.qrels"
    plain.write_text("1 0 a 1\n2 0 e 1\n")
    store = tmp_path / "s.duckdb"
    with Store.create(store) as s:
        s.import_runs([files[1]])
        s.import_qrels(plain, name="official")
    done = CliRunner().invoke(app, ["evaluate", str(store), "--qrels", "official", "-m",
                                    "alpha-nDCG@5"])
    assert done.exit_code == 1
    assert "subtopic qrels" in str(done.exception) + done.output
