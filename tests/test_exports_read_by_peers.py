"""Every TREC qrels and run file the toolkit writes is read by the field's other tools, and
they compute from it the values we do.

The files come from every writer a user meets: `pooling export qrels` and `export run` (to a
file with -o, and to stdout as `> file` saves it), a qrels version derived from a judged
round, the organiser's qrels download in the web app, and a release's qrels and runs. Each is read by the real peer
libraries (pytrec_eval, ir_measures, ranx, trectools) with their own readers, and MAP, P@5,
nDCG@10 and RR they compute must equal `pooling.evaluation.evaluate` on the same files.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import quote

import pytest

from pooling.evaluation import evaluate

TRUTH = {  # (topic, doc): grade; every topic has relevant documents in every run's top 3
    ("301", "d01"): 2, ("301", "d02"): 1, ("301", "d03"): 0, ("301", "d05"): 1, ("301", "d07"): 0,
    ("302", "d02"): 2, ("302", "d04"): 0, ("302", "d06"): 1, ("302", "d08"): 1,
    ("303", "d03"): 1, ("303", "d09"): 2, ("303", "d10"): 0, ("303", "d11"): 0,
}
RANKINGS = {  # run tag: topic -> documents, best first (scores fall by 0.25: no ties)
    "sysA": {"301": ["d03", "d01", "d12", "d05", "d07", "d04"],
             "302": ["d06", "d04", "d02", "d12", "d01"],
             "303": ["d09", "d10", "d12", "d03", "d11", "d01"]},
    "sysB": {"301": ["d02", "d12", "d07", "d01"],
             "302": ["d08", "d02", "d11", "d06", "d04", "d03"],
             "303": ["d11", "d03", "d10", "d12"]},
}
# Our trec_eval names, as pooling.evaluation.evaluate names its summary values.
OURS = {"map": "map", "P.5": "P_5", "ndcg_cut.10": "ndcg_cut_10", "recip_rank": "recip_rank"}


def run_text(tag: str) -> str:
    return "".join(f"{q} Q0 {d} {rank} {10 - 0.25 * rank} {tag}\n"
                   for q, docs in RANKINGS[tag].items() for rank, d in enumerate(docs, start=1))


def pooling(*args: object, stdout=None) -> str:
    proc = subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], text=True,
                          stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout or ""


def judge_batch(batch: Path) -> None:
    """Grade every document of an exported batch as the truth does (0 if it has no grade)."""
    with open(batch, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["grade"] = str(TRUTH.get((row["query_id"], row["doc_id"]), 0))
    with open(batch, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def web_download(store: Path, version: str, target: Path) -> None:
    """The qrels version as the organiser's download link in the web app gives it."""
    from pooling.judging.assessors import add_assessor
    from pooling.store import Store
    from pooling.web.app import create_app

    with warnings.catch_warnings():  # this Starlette prefers httpx2 to httpx; both work here
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    with Store(store) as s:
        token = add_assessor(s, "org", role="organiser").token
    s = Store(store)
    app = create_app(s)
    try:
        browser = TestClient(app, follow_redirects=False)
        assert browser.get("/login", params={"token": token}).status_code == 303
        answer = browser.get(f"/organiser/qrels/{quote(version, safe='')}")
        assert answer.status_code == 200, answer.text
        assert "attachment" in answer.headers["content-disposition"]
        target.write_bytes(answer.content)
    finally:
        app.close()
        s.close()


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, Path]:
    """Every kind of exported qrels and run file, by how it was written."""
    d = tmp_path_factory.mktemp("exports")
    (d / "topics.tsv").write_text("301\tfirst\n302\tsecond\n303\tthird\n")
    (d / "truth.qrels").write_text("".join(f"{q} 0 {doc} {g}\n" for (q, doc), g in TRUTH.items()))
    for tag in RANKINGS:
        (d / f"{tag}.txt").write_text(run_text(tag))
    store = d / "c.duckdb"
    pooling("init", store)
    pooling("import", "topics", store, d / "topics.tsv")
    pooling("import", "runs", store, d / "sysA.txt", d / "sysB.txt")
    pooling("import", "qrels", store, d / "truth.qrels", "--name", "official")
    # A judged round, and the qrels version derived from it.
    pooling("pool", store, "--round", "r1", "--strategy", "depth", "--depth", "3")
    pooling("assessors", "add", store, "ann")
    pooling("assign", store, "--round", "r1", "--assessors", "ann")
    pooling("batch", "export", store, "--round", "r1", "--assessor", "ann", "-o", d / "batch.csv")
    judge_batch(d / "batch.csv")
    pooling("batch", "import", store, "--round", "r1", "--assessor", "ann", d / "batch.csv")
    pooling("qrels", "derive", store, "--round", "r1", "--rule", "latest", "--name", "judged r1")

    out = d / "out"
    out.mkdir()
    files = {
        "export qrels -o": out / "official.qrels",
        "export qrels > file": out / "official-stdout.qrels",
        "derived qrels, export -o": out / "judged.qrels",
        "web app qrels download": out / "web.qrels",
        "export run -o": out / "sysA.run",
        "export run > file": out / "sysB.run",
    }
    pooling("export", "qrels", store, "--qrels", "official", "-o", files["export qrels -o"])
    with open(files["export qrels > file"], "w") as fh:
        pooling("export", "qrels", store, "--qrels", "official", stdout=fh)
    pooling("export", "qrels", store, "--qrels", "judged r1", "-o", files["derived qrels, export -o"])
    pooling("export", "run", store, "sysA", "-o", files["export run -o"])
    with open(files["export run > file"], "w") as fh:
        pooling("export", "run", store, "sysB", stdout=fh)
    web_download(store, "judged r1", files["web app qrels download"])
    # A release's qrels and runs, as people download them with the collection.
    pooling("release", store, d / "release", "--no-pool-bias")
    files["release qrels"] = d / "release" / "qrels" / "official.qrels"
    files["release run"] = d / "release" / "runs" / "sysA.run"
    return files


QRELS_EXPORTS = ["export qrels -o", "export qrels > file", "derived qrels, export -o",
                 "web app qrels download", "release qrels"]
RUN_EXPORTS = ["export run -o", "export run > file", "release run"]


# -- the peers, each reading the files itself ---------------------------------------------------


def pytrec_eval_values(qrels: Path, run: Path) -> dict[str, float]:
    import pytrec_eval

    with open(qrels) as fq, open(run) as fr:
        judged, ranked = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
    names = ["map", "P_5", "ndcg_cut_10", "recip_rank"]
    per_topic = pytrec_eval.RelevanceEvaluator(judged, set(names)).evaluate(ranked)
    return {n: sum(v[n] for v in per_topic.values()) / len(per_topic) for n in names}


def ir_measures_values(qrels: Path, run: Path) -> dict[str, float]:
    import ir_measures
    from ir_measures import AP, RR, P, nDCG

    values = ir_measures.calc_aggregate([AP, P @ 5, nDCG @ 10, RR], ir_measures.read_trec_qrels(str(qrels)),
                                        ir_measures.read_trec_run(str(run)))
    return {"map": values[AP], "P_5": values[P @ 5], "ndcg_cut_10": values[nDCG @ 10],
            "recip_rank": values[RR]}


def ranx_values(qrels: Path, run: Path) -> dict[str, float]:
    with warnings.catch_warnings():  # numba's notes on its own casts
        warnings.simplefilter("ignore")
        from ranx import Qrels, Run
        from ranx import evaluate as ranx_evaluate

        values = ranx_evaluate(Qrels.from_file(str(qrels), kind="trec"),
                               Run.from_file(str(run), kind="trec"),
                               ["map", "precision@5", "ndcg@10", "mrr"])
    return {"map": values["map"], "P_5": values["precision@5"],
            "ndcg_cut_10": values["ndcg@10"], "recip_rank": values["mrr"]}


def trectools_values(qrels: Path, run: Path) -> dict[str, float]:
    with warnings.catch_warnings():  # pandas' notes on trectools' use of it
        warnings.simplefilter("ignore")
        from trectools import TrecEval, TrecQrel, TrecRun

        scores = TrecEval(TrecRun(str(run)), TrecQrel(str(qrels)))
        return {"map": scores.get_map(), "P_5": scores.get_precision(depth=5),
                "ndcg_cut_10": scores.get_ndcg(depth=10),
                "recip_rank": scores.get_reciprocal_rank()}


PEERS = [
    pytest.param(pytrec_eval_values, id="pytrec_eval"),
    pytest.param(ir_measures_values, id="ir_measures"),
    pytest.param(ranx_values, id="ranx", marks=pytest.mark.slow),  # numba compiles on first use
    pytest.param(trectools_values, id="trectools"),
]


@pytest.mark.parametrize("run_export", RUN_EXPORTS)
@pytest.mark.parametrize("qrels_export", QRELS_EXPORTS)
@pytest.mark.parametrize("peer", PEERS)
def test_peers_read_our_exports_and_compute_our_values(exports, peer, qrels_export, run_export):
    qrels, run = exports[qrels_export], exports[run_export]
    ours = evaluate(str(qrels), [str(run)], list(OURS)).runs[0].summary
    expected = {name: ours[name] for name in OURS.values()}
    assert peer(qrels, run) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("export", QRELS_EXPORTS + RUN_EXPORTS)
def test_exports_are_plain_trec_lines_with_nothing_before_the_data(exports, export):
    lines = exports[export].read_text().splitlines()
    fields = 4 if "qrels" in export else 6
    assert lines and all(len(line.split()) == fields for line in lines), lines[:3]
    assert not any(line.startswith("#") for line in lines)


def test_an_exported_qrels_file_holds_the_judgments_stored(exports):
    for export in ("export qrels -o", "export qrels > file"):
        rows = [line.split() for line in exports[export].read_text().splitlines()]
        assert {(q, d): int(g) for q, _, d, g in rows} == TRUTH


def test_a_qrels_export_to_a_file_puts_its_provenance_beside_it(exports):
    official = json.loads(Path(f"{exports['export qrels -o']}.meta.json").read_text())
    assert {k: official[k] for k in ("qrels_version", "method", "grades", "rows", "topics")} == {
        "qrels_version": "official", "method": "imported", "grades": [0, 1, 2], "rows": 13,
        "topics": 3}
    assert official["source"].endswith("truth.qrels") and official["created_at"].endswith("Z")
    derived = json.loads(Path(f"{exports['derived qrels, export -o']}.meta.json").read_text())
    assert (derived["qrels_version"], derived["method"]) == ("judged r1", "derived:latest")


def test_with_header_the_provenance_is_a_first_comment_line_trec_eval_skips(exports, tmp_path):
    store = exports["export qrels -o"].parent.parent / "c.duckdb"
    out = tmp_path / "with-header.qrels"
    pooling("export", "qrels", store, "--qrels", "official", "--with-header", "-o", out)
    first, *rest = out.read_text().splitlines()
    assert first.startswith("# pooling qrels version official; method: imported; created_at: ")
    assert rest == exports["export qrels -o"].read_text().splitlines()
    run = str(exports["export run -o"])
    assert (evaluate(str(out), [run], list(OURS)).runs[0].summary
            == evaluate(str(exports["export qrels -o"]), [run], list(OURS)).runs[0].summary)
