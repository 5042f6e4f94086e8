"""Small things a reader of a leaderboard or report sees: each run's team (from --meta at
import) in the HTML leaderboard, the report index and each report; a difference that rounds
to zero printed as 0.0000, never -0.0000; and progress heard run by run on the long steps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pooling.leaderboard.participant_html import report_html
from pooling.leaderboard.participant_report import RunReport, Standing, Summary
from pooling.leaderboard.render import fmt
from pooling.leaderboard.report import store_report
from pooling.leaderboard.report_files import write_participant_reports
from pooling.store import Store
from pooling.store.runs import read_run_meta

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "collections" / "demo"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo collection's runs with their teams, and its qrels; sysD_boolean's team left
    out of the meta file, so one run has none."""
    folder = tmp_path_factory.mktemp("details")
    meta = folder / "runs.tsv"
    lines = (DEMO / "runs.tsv").read_text(encoding="utf-8").splitlines()
    meta.write_text("\n".join(
        "\t".join(f if k != 2 or not line.split("\t")[1] == "sysD_boolean" else ""
                  for k, f in enumerate(line.split("\t")))
        for line in lines) + "\n", encoding="utf-8")
    path = folder / "demo.duckdb"
    with Store.create(path) as s:
        s.import_runs(sorted((DEMO / "runs").glob("*.run")), meta=read_run_meta(meta))
        s.import_qrels(DEMO / "truth.qrels", name="truth")
    return path


@pytest.fixture(scope="module")
def teams() -> dict[str, str]:
    rows = [line.split("\t") for line in
            (DEMO / "runs.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    return {r[1]: ("" if r[1] == "sysD_boolean" else r[2]) for r in rows}


def test_the_html_leaderboard_shows_each_runs_team(demo, teams):
    with Store(demo) as s:
        text = store_report(s, qrels="truth", measures=["map"], resamples=100, pool_depth=None)
    table = re.search(r'<table id="leaderboard">.*?</table>', text, re.S).group(0)
    assert '<th class="team">team</th>' in table
    shown = dict(re.findall(r'<tr data-run="([^"]+)"[^>]*>.*?<td class="team">([^<]*)</td>',
                            table, re.S))
    assert shown == teams and shown["sysD_boolean"] == ""


def test_the_report_index_and_each_report_show_the_team(demo, teams, tmp_path):
    with Store(demo) as s:
        written = write_participant_reports(s, tmp_path / "out", pdf=False, qrels="truth",
                                            measures=["map"], resamples=100)
    index = written.index.read_text(encoding="utf-8")
    shown = dict(re.findall(r'<tr data-run="([^"]+)">.*?<td class="team">([^<]*)</td>', index,
                            re.S))
    assert shown == teams
    page = written.pages["sysA_neural"].read_text(encoding="utf-8")
    assert f'team <span class="team">{teams["sysA_neural"]}</span>' in page
    assert "team <span" not in written.pages["sysD_boolean"].read_text(encoding="utf-8")


@pytest.mark.parametrize(("value", "signed", "shown"), [
    (-0.00001, True, "0.0000"), (-0.00001, False, "0.0000"), (-0.0, False, "0.0000"),
    (0.00004, True, "0.0000"), (0.00005, True, "+0.0001"), (-0.00006, True, "-0.0001"),
    (0.25, True, "+0.2500"), (-0.25, False, "-0.2500"),
])
def test_a_value_rounding_to_zero_prints_without_a_sign(value, signed, shown):
    assert fmt(value, signed=signed) == shown


def test_a_report_shows_a_tiny_negative_difference_as_zero():
    report = RunReport(
        run_id="a", qrels_version="q", primary="map", summary=[Summary("map", 0.3, 0.2, 0.4)],
        topics={}, rank=1, group="a", n_runs=2,
        standings=[Standing("a", 1, 0.3, 0.0, None, False),
                   Standing("b", 1, 0.3 + 1e-9, -1e-9, 0.9, False)],
        judged={})
    page = report_html(report, "one line")
    assert "-0.0000" not in page and "−0.0000" not in page
    assert re.search(r'<td class="run">b</td><td>0\.3000</td><td>0\.0000</td>', page)


class Recorder:
    """A Progress that records what it hears."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, int | None]] = []
        self.advanced: dict[str, int] = {}

    def start(self, description: str, total: int | None = None) -> None:
        self.heard.append((description, total))
        self.advanced[description] = 0

    def advance(self, amount: int = 1) -> None:
        self.advanced[self.heard[-1][0]] += amount

    def finish(self) -> None:
        pass


@pytest.fixture
def sampled(tmp_path) -> Path:
    """Sampled qrels on two topics and three runs, r0 and r1 of team T, r2 without a team."""
    lines = []
    for q in ("1", "2"):
        for i in range(40):
            stratum = "1" if i < 10 else "2"
            grade = (i % 3 == 0) * 1 if (stratum == "1" or i % 4 == 0) else -1
            lines.append(f"{q} 0 d{i} {stratum} {grade}")
    (tmp_path / "s.qrels").write_text("\n".join(lines) + "\n")
    runs = []
    for r in range(3):
        path = tmp_path / f"r{r}.run"
        path.write_text("".join(f"{q} Q0 d{(i + 7 * r) % 40} {i + 1} {50 - i} r{r}\n"
                                for q in ("1", "2") for i in range(30)))
        runs.append(path)
    meta = tmp_path / "runs.tsv"
    meta.write_text("file\trun_id\tteam\nr0.run\tr0\tT\nr1.run\tr1\tT\nr2.run\tr2\t\n")
    with Store.create(tmp_path / "s.duckdb") as s:
        s.import_runs(runs, meta=read_run_meta(meta))
        s.import_qrels(tmp_path / "s.qrels", name="s")
    return tmp_path / "s.duckdb"


def test_the_sampled_leaderboard_reports_progress_run_by_run(sampled):
    from pooling.leaderboard.sampled import sampled_leaderboard

    heard = Recorder()
    with Store(sampled) as s:
        board = sampled_leaderboard(s, qrels="s", resamples=20, progress=heard)
    assert heard.heard == [("estimating intervals, run by run", 3)]
    assert heard.advanced == {"estimating intervals, run by run": 3}
    assert board.table.num_rows == 3


def test_the_sampled_leaderboard_and_its_reports_show_the_team(sampled, tmp_path):
    from pooling.leaderboard.sampled import render_sampled, sampled_leaderboard

    with Store(sampled) as s:
        board = sampled_leaderboard(s, qrels="s", resamples=20)
        written = write_participant_reports(s, tmp_path / "out", pdf=False, qrels="s")
    teams = dict(zip(board.table["run_id"].to_pylist(), board.table["team"].to_pylist(),
                     strict=True))
    assert teams == {"r0": "T", "r1": "T", "r2": None}
    page = render_sampled(board, "html")
    assert "<th>team</th>" in page
    assert set(re.findall(r"<td>(r\d)</td><td>(T?)</td>", page)) == {("r0", "T"), ("r1", "T"),
                                                                      ("r2", "")}
    index = written.index.read_text(encoding="utf-8")
    assert dict(re.findall(r'<tr data-run="([^"]+)">.*?<td class="team">([^<]*)</td>', index,
                           re.S)) == {"r0": "T", "r1": "T", "r2": ""}
