"""Participant reports of the 17 TREC 2003 Robust runs agree with trec_eval's own per-topic
output (../shared reference files): each run's per-topic map, P_10 and ndcg_cut_10, and the
best, median and worst beside them, to the printed precision."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import numpy as np
import pytest

from pooling.leaderboard.report_files import write_participant_reports

pytestmark = pytest.mark.shared
MEASURES = ("map", "P_10", "ndcg_cut_10")


@pytest.fixture(scope="module")
def reference(robust_dir: Path) -> dict[tuple[str, str, str], float]:
    """(run, topic, measure) -> trec_eval's printed value."""
    with gzip.open(robust_dir / "reference/trec_eval_per_topic.tsv.gz", "rt") as fh:
        return {(r["run"], r["qid"], r["measure"]): float(r["value"])
                for r in csv.DictReader(fh, delimiter="\t") if r["measure"] in MEASURES}


def test_robust03_reports_per_topic_values_equal_trec_evals(robust_store, reference, tmp_path):
    written = write_participant_reports(robust_store, tmp_path / "out", qrels="official",
                                        measures=list(MEASURES), pdf=False)
    reports = written.reports.reports
    assert len(reports) == 17 and len(written.pages) == 17
    runs = [r.run_id for r in reports]
    for r in reports:
        for m in MEASURES:
            topics = r.topics[m]
            assert len(topics) == 100
            for t in topics:
                assert t.value == pytest.approx(reference[(r.run_id, t.query_id, m)], abs=5e-5)
                column = [reference[(other, t.query_id, m)] for other in runs]
                assert (t.best, t.median, t.worst) == pytest.approx(
                    (max(column), float(np.median(column)), min(column)), abs=1e-4)
        page = written.pages[r.run_id].read_text(encoding="utf-8")
        assert page.count('<rect class="bar"') == 100
