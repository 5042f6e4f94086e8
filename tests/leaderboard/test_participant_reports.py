"""Participant reports (`pooling report runs`): one self-contained page per run whose numbers
are the ones `pooling evaluate` and `pooling leaderboard` print, bars and all.

The values are checked against `pooling evaluate --format csv` on the same store, against the
real pytrec_eval on random runs with score ties and topics a run lacks, and against the
leaderboard's own tests; the pages are read as HTML (one bar per topic, the index links
every file), the PDFs through WeasyPrint's document API.
"""

from __future__ import annotations

import csv
import html
import io
import os
import random
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest

from pooling.leaderboard import leaderboard
from pooling.leaderboard.errors import LeaderboardError
from pooling.leaderboard.participant_report import participant_reports
from pooling.leaderboard.report_files import report_file_stems, write_participant_reports
from pooling.store import Store

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "collections" / "demo"
MEASURES = ["map", "P_10", "ndcg_cut_10"]


class Page(HTMLParser):
    """What a report page holds: elements by tag and class, with their attributes and text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.links: list[str] = []
        self.fetches: list[str] = []
        self.text: list[str] = []
        self.source = text
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a))
        if tag == "a":
            self.links.append(a["href"])
        if tag in ("script", "link", "img", "iframe") or "src" in a:
            self.fetches.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_data(self, data):
        self.text.append(data)

    def find(self, tag: str, css: str | None = None) -> list[dict[str, str]]:
        return [a for t, a in self.elements
                if t == tag and (css is None or css in a.get("class", "").split())]

    def h1(self) -> str:
        return html.unescape(re.search(r"<h1>(.*?)</h1>", self.source, re.S).group(1))


def pooling(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory) -> Path:
    """The demo collection's 20 runs and its qrels (grades 0-2) on 50 topics."""
    from pooling.store.runs import read_run_meta

    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    with Store.create(path) as s:
        s.import_runs(sorted((DEMO / "runs").glob("*.run")), meta=read_run_meta(DEMO / "runs.tsv"))
        s.import_qrels(DEMO / "truth.qrels", name="truth")
    return path


@pytest.fixture(scope="module")
def demo_reports(demo_store, tmp_path_factory):
    folder = tmp_path_factory.mktemp("reports") / "out"
    with Store(demo_store) as s:
        written = write_participant_reports(s, folder, pdf=False)
    return written


def _evaluate_csv(store: Path, *measures: str) -> dict[tuple[str, str, str], float]:
    """(run, topic or `all`, measure) -> value, as `pooling evaluate --format csv` prints it."""
    args = [a for m in measures for a in ("-m", m)]
    out = pooling("evaluate", store, *args, "--format", "csv").stdout
    return {(r["run_id"], r["query_id"], r["measure"]): float(r["value"])
            for r in csv.DictReader(io.StringIO(out))}


def test_each_report_draws_one_bar_per_topic_with_the_values_pooling_evaluate_prints(
        demo_store, demo_reports):
    values = _evaluate_csv(demo_store, *MEASURES)
    topics = sorted({q for _, q, _ in values if q != "all"}, key=int)
    assert len(demo_reports.pages) == 20
    for run_id, path in demo_reports.pages.items():
        page = Page(path.read_text(encoding="utf-8"))
        assert page.h1() == f"Run {run_id}"
        assert not page.fetches
        groups = page.find("g", "topic")
        assert len(page.find("rect", "bar")) == len(groups) == len(topics) == 50
        assert [g["data-topic"] for g in groups] == topics
        for g in groups:
            assert float(g["data-value"]) == pytest.approx(values[(run_id, g["data-topic"], "map")],
                                                           abs=1e-12)
        # Every measure per topic in the table, and each mean in the summary.
        cells = [c for c in page.find("td") if "data-measure" in c]
        summary, per_topic = cells[:3], cells[3 + 2:]  # after the summary: Judged@10, Judged@100
        for c in summary:
            assert float(c["data-value"]) == pytest.approx(values[(run_id, "all", c["data-measure"])],
                                                           abs=1e-12)
        rows = page.find("tr")
        topic_rows = [r["data-topic"] for r in rows if "data-topic" in r]
        assert topic_rows == topics
        assert len(per_topic) == 50 * 3
        for k, c in enumerate(per_topic):
            q = topics[k // 3]
            assert float(c["data-value"]) == pytest.approx(values[(run_id, q, c["data-measure"])],
                                                           abs=1e-12)


def test_best_median_and_worst_are_over_every_run_and_the_bar_scale_holds_them(demo_store):
    values = _evaluate_csv(demo_store, "map")
    with Store(demo_store) as s:
        (report,) = participant_reports(s, runs=["sysB_ql"]).reports
    for t in report.topics["map"]:
        scores = [v for (r, q, m), v in values.items() if q == t.query_id and m == "map"]
        assert len(scores) == 20
        assert (t.best, t.median, t.worst) == pytest.approx(
            (max(scores), float(np.median(scores)), min(scores)), abs=1e-12)
        assert t.worst <= t.value <= t.best


def test_the_standing_is_the_leaderboards_rank_group_and_tests(demo_store):
    with Store(demo_store) as s:
        lb = leaderboard(s, measures=MEASURES)
        reports = participant_reports(s, measures=MEASURES)
    assert [r.run_id for r in reports.reports] == lb.run_ids
    table = lb.table.to_pydict()
    significant = {frozenset((a, b)): (p, sig) for a, b, p, sig in zip(
        lb.pairs["run_a"].to_pylist(), lb.pairs["run_b"].to_pylist(),
        lb.pairs["p_adjusted"].to_pylist(), lb.pairs["significant"].to_pylist(), strict=True)}
    for k, r in enumerate(reports.reports):
        assert (r.rank, r.group) == (table["rank"][k], table["group"][k])
        assert r.summary[0].value == table["map"][k]
        assert (r.summary[0].low, r.summary[0].high) == (table["map_t_low"][k],
                                                         table["map_t_high"][k])
        for s in r.standings:
            if s.run_id == r.run_id:
                continue
            p, sig = significant[frozenset((r.run_id, s.run_id))]
            assert (s.p_adjusted, s.significant) == (p, sig)
        assert r.better == sum(1 for s in r.standings if s.significant and s.value > table["map"][k])
        # Rank is 1 + the runs significantly better, kept non-decreasing down the table.
        assert r.rank >= r.better + 1


def test_judged_at_10_and_100_are_evaluates_values(demo_store, demo_reports):
    values = _evaluate_csv(demo_store, "Judged@10", "Judged@100")
    for r in demo_reports.reports.reports:
        assert r.judged == {10: values[(r.run_id, "all", "Judged@10")],
                            100: values[(r.run_id, "all", "Judged@100")]}
        page = Page(demo_reports.pages[r.run_id].read_text(encoding="utf-8"))
        cells = {c["data-measure"]: float(c["data-value"]) for c in page.find("td")
                 if c.get("data-measure", "").startswith("Judged@")}
        assert cells == {"Judged@10": r.judged[10], "Judged@100": r.judged[100]}


def test_the_index_links_every_report_and_each_link_reaches_its_file(demo_reports):
    index = Page(demo_reports.index.read_text(encoding="utf-8"))
    assert not index.fetches
    targets = [demo_reports.folder / unquote(href) for href in index.links]
    assert sorted(targets) == sorted(demo_reports.pages.values())
    assert all(t.is_file() for t in targets)
    runs = [r["data-run"] for r in index.find("tr") if "data-run" in r]
    assert runs == [r.run_id for r in demo_reports.reports.reports]


# -- differential: the real pytrec_eval on random runs with ties ----------------------------


def _random_collection(tmp: Path, seed: int) -> tuple[Path, dict, dict]:
    """Six runs over 12 topics with tied scores, a topic one run lacks, graded qrels."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    for t in range(1, 13):
        qrels[str(t)] = {f"d{i}": rng.choice([0, 0, 1, 2]) for i in rng.sample(range(80), 30)}
    runs: dict[str, dict[str, dict[str, float]]] = {}
    store = Store.create(tmp / "random.duckdb")
    paths = []
    for r in range(6):
        run_id = f"run{r}"
        runs[run_id] = {}
        lines = []
        for t in range(1, 13):
            if r == 2 and t == 5:
                continue
            docs = rng.sample(range(80), rng.randint(5, 40))
            runs[run_id][str(t)] = {}
            for d in docs:
                score = rng.choice([1.0, 2.0, 3.0, round(rng.random(), 3)])
                runs[run_id][str(t)][f"d{d}"] = score
                lines.append(f"{t} Q0 d{d} 0 {score} {run_id}")
        paths.append(tmp / f"{run_id}.run")
        paths[-1].write_text("\n".join(lines) + "\n")
    qrels_path = tmp / "random.qrels"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                                  for d, g in docs.items()))
    store.import_runs(paths)
    store.import_qrels(qrels_path, name="q")
    store.close()
    return tmp / "random.duckdb", qrels, runs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_per_topic_values_and_their_best_median_worst_equal_pytrec_eval(tmp_path, seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    path, qrels, runs = _random_collection(tmp_path, seed)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_10", "ndcg_cut_10"})
    truth = {}
    for run_id, run in runs.items():
        scored = evaluator.evaluate(run)
        for q in qrels:  # -c: a topic the run lacks scores zero
            for m in ("map", "P_10", "ndcg_cut_10"):
                truth[(run_id, q, m)] = scored.get(q, {}).get(m, 0.0)
    with Store(path) as s:
        reports = participant_reports(s, measures=MEASURES)
    assert len(reports.reports) == 6
    for r in reports.reports:
        for m in MEASURES:
            assert [t.query_id for t in r.topics[m]] == [str(t) for t in range(1, 13)]
            for t in r.topics[m]:
                column = [truth[(other, t.query_id, m)] for other in runs]
                assert t.value == pytest.approx(truth[(r.run_id, t.query_id, m)], abs=1e-9)
                assert (t.best, t.median, t.worst) == pytest.approx(
                    (max(column), float(np.median(column)), min(column)), abs=1e-9)
        for s in r.summary:
            assert s.value == pytest.approx(np.mean([truth[(r.run_id, q, s.measure)]
                                                     for q in qrels]), abs=1e-9)


# -- names, PDFs, sampled qrels and the command line ----------------------------------------

# Run tags as a TREC run file can carry them (no whitespace); `report_file_stems` also gets
# one with a space.
HOSTILE = ["[A]/1", "ünï/../x", "index", "CON", "Run", "run", "..", "x" * 200, "plain-1.0"]


def test_file_names_are_safe_distinct_ignoring_case_and_stable():
    stems = report_file_stems([*HOSTILE, "a b"])
    assert len({s.casefold() for s in stems.values()}) == len(HOSTILE) + 1
    for stem in stems.values():
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", stem), stem
        assert len(stem) <= 72 and stem.casefold() != "index"
    assert stems["plain-1.0"] == "plain-1.0"
    assert stems == report_file_stems(list(reversed([*HOSTILE, "a b"])))


def _hostile_store(tmp: Path) -> Path:
    rng = random.Random(5)
    for k, run_id in enumerate(HOSTILE):
        lines = [f"{t} Q0 d{d} {i + 1} {10 - i} {run_id}" for t in ("1", "2/b", "3")
                 for i, d in enumerate(rng.sample(range(30), 10))]
        (tmp / f"{k}.run").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp / "q.qrels").write_text("".join(f"{t} 0 d{d} {d % 3}\n" for t in ("1", "2/b", "3")
                                         for d in range(0, 30, 2)))
    with Store.create(tmp / "h.duckdb") as s:
        s.import_runs([tmp / f"{k}.run" for k in range(len(HOSTILE))])
        s.import_qrels(tmp / "q.qrels", name="q")
    return tmp / "h.duckdb"


def test_hostile_run_tags_get_safe_files_and_are_shown_whole(tmp_path):
    store = _hostile_store(tmp_path)
    out = tmp_path / "out dir"
    done = pooling("report", "runs", store, out, "--no-pdf", cwd=tmp_path)
    assert done.stdout.strip() == str((out / "index.html").resolve())
    files = sorted(p.name for p in out.iterdir())
    assert len(files) == len(HOSTILE) + 1 and all(p.is_file() for p in out.iterdir())
    index = Page((out / "index.html").read_text(encoding="utf-8"))
    shown = {}
    for href in index.links:
        page = Page((out / unquote(href)).read_text(encoding="utf-8"))
        shown[page.find("tr", "self")[0]["data-run"]] = href
        assert len(page.find("rect", "bar")) == 3
        # Half the documents are judged: every run is flagged, first thing on its page.
        assert page.find("p")[1]["id"] == "flag-note"
        assert "Flagged: Judged@10 below 0.9" in page.source
    assert sorted(shown) == sorted(HOSTILE)
    assert sorted(p for p in os.listdir(tmp_path) if p != "out dir") == sorted(
        [*(f"{k}.run" for k in range(len(HOSTILE))), "h.duckdb", "q.qrels"])


def _weasyprint() -> None:
    """WeasyPrint is a dev dependency: missing, the PDF tests skip here and fail under CI."""
    try:
        import weasyprint  # noqa: F401
    except (ImportError, OSError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the PDF tests need WeasyPrint (the dev extra): {exc}")
        pytest.skip(f"WeasyPrint is not installed: {exc}")


def test_pdf_is_printed_from_the_same_page_and_carries_the_runs_name(tmp_path, demo_store):
    _weasyprint()
    from pooling.leaderboard.participant_html import report_html
    from pooling.leaderboard.pdf import write_pdf

    with Store(demo_store) as s:
        written = write_participant_reports(s, tmp_path / "out", runs=["sysA_neural"])
    (pdf,) = written.pdfs.values()
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF") and len(data) > 10_000
    report = written.reports.reports[0]
    printed = write_pdf(report_html(report, written.reports.description), tmp_path / "again.pdf")
    assert printed.title == "Run sysA_neural"
    assert printed.headings[0] == "Run sysA_neural"
    assert {"Summary", "Leaderboard", "Judged documents", "Per-topic map"} <= set(printed.headings)
    assert printed.pages >= 2
    assert [p.name for p in sorted((tmp_path / "out").iterdir())] == [
        "index.html", "sysA_neural.html", "sysA_neural.pdf"]


def test_without_weasyprint_a_pdf_is_refused_before_anything_is_written(tmp_path, demo_store,
                                                                        monkeypatch):
    monkeypatch.setitem(sys.modules, "weasyprint", None)  # import weasyprint -> ImportError
    with Store(demo_store) as s, pytest.raises(LeaderboardError, match=r"reports\].*--no-pdf"):
        write_participant_reports(s, tmp_path / "out", runs=["sysA_neural"])
    assert not (tmp_path / "out").exists()


def test_a_sampled_version_reports_estimates_with_intervals_and_says_so(tmp_path):
    from pooling.judging.assessors import add_assessor
    from pooling.judging.history import Judgment
    from pooling.judging.judgments import append_judgments
    from pooling.judging.rounds import create_round
    from pooling.judging.rules import derive_qrels
    from pooling.leaderboard.sampled import sampled_leaderboard
    from pooling.store.evaluate import evaluate_store

    path, _, _ = _random_collection(tmp_path, 4)
    with Store(path) as s:
        create_round(s, "s1", "sample", depth=20, strategy_params={"strata": "5", "rates": "1,0.3"})
        ada = add_assessor(s, "Ada")
        rng = random.Random(3)
        pool = s.arrow("q", "SELECT query_id, doc_id FROM pool_entries ORDER BY 1, 2").to_pylist()
        append_judgments(s, [Judgment("s1", ada.assessor_id, r["query_id"], r["doc_id"],
                                      rng.choice([0, 0, 1, 2])) for r in pool[:-3]])
        derive_qrels(s, "latest", "s1", round_id="s1")
        written = write_participant_reports(s, tmp_path / "out", qrels="s1", pdf=False)
        board = sampled_leaderboard(s, qrels="s1")
        per_topic = evaluate_store(s, qrels="s1", measures=["infAP"]).per_query.to_pylist()
    assert written.reports.sampled
    table = board.table.to_pydict()
    inferred = {(r["run_id"], r["query_id"]): r["value"] for r in per_topic
                if r["measure"] == "infAP"}
    for k, run_id in enumerate(table["run_id"]):
        page = Page(written.pages[run_id].read_text(encoding="utf-8"))
        text = "".join(page.text)
        assert "Estimates from a sample, not values" in text
        assert "judged of" in text and "No pairwise test" in text
        summary: dict[str, float] = {}  # the summary table comes first
        for c in page.find("td"):
            if c.get("data-measure") in ("infAP", "infNDCG", "statAP"):
                summary.setdefault(c["data-measure"], float(c["data-value"]))
        assert summary["infAP"] == table["infAP"][k]
        report = written.reports.reports[k]
        assert (report.summary[0].low, report.summary[0].high) == (
            table["infAP_ci_low"][k], table["infAP_ci_high"][k])
        bars = page.find("g", "topic")
        assert bars and len(page.find("rect", "bar")) == len(bars)
        for g in bars:
            assert float(g["data-value"]) == inferred[(run_id, g["data-topic"])]


def test_an_unknown_run_is_refused_by_name_and_leaves_no_folder(tmp_path, demo_store):
    done = subprocess.run([sys.executable, "-m", "pooling", "report", "runs", str(demo_store),
                           str(tmp_path / "out"), "--run", "nope", "--no-pdf"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: no run 'nope'") and "sysA_bm25" in done.stderr
    assert not (tmp_path / "out").exists()


def test_report_runs_writes_only_the_runs_asked_for(tmp_path, demo_store):
    out = tmp_path / "out"
    done = pooling("report", "runs", demo_store, out, "--no-pdf", "--run", "sysB_ql",
                   "--run", "sysA_bm25", "-m", "ndcg_cut_10", "-m", "map")
    assert "wrote 2 report(s) (HTML) to" in done.stderr and "qrels: truth" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "sysA_bm25.html",
                                                     "sysB_ql.html"]
    page = Page((out / "sysB_ql.html").read_text(encoding="utf-8"))
    summary = [c["data-measure"] for c in page.find("td") if "data-measure" in c][:2]
    assert sorted(summary) == ["map", "ndcg_cut_10"]
    assert "P_10" not in page.source
    # The statistics stay over all 20 runs.
    assert len([r for r in page.find("tr") if "data-run" in r]) == 20
