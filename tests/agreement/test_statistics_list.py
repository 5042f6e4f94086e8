"""One ordered list of the agreement statistics drives the record, its CSV and the HTML page."""

from __future__ import annotations

import re

import pyarrow as pa

from pooling.agreement import compare_labels
from pooling.agreement.statistics import SECTIONS, STATISTICS, statistic_values
from pooling.label_sets.agreement import LabelAgreement


def _labels(rows, probabilities=None) -> pa.Table:
    table = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                      "grade": [r[2] for r in rows]})
    if probabilities is not None:
        table = table.append_column("probability", pa.array(probabilities, pa.float64()))
    return table


def _agreement(with_probability: bool) -> LabelAgreement:
    a = _labels([("1", "a", 2), ("1", "b", 0), ("1", "c", 1), ("2", "a", 0)])
    b = _labels([("1", "a", 1), ("1", "b", 0), ("1", "c", 1), ("2", "a", 1)],
                [0.9, 0.2, 0.6, 0.7] if with_probability else None)
    labels = compare_labels(a, b, threshold=1)
    return LabelAgreement("people", "judge w", labels, "map", "scored", {}, {}, None)


def test_the_record_holds_every_statistic_under_its_section_and_key_in_list_order():
    result = _agreement(with_probability=True)
    d = result.to_dict()
    assert list(SECTIONS) == ["kappa", "alpha", "classification", "probability"]
    assert [k for k in d if k in SECTIONS] == list(SECTIONS)
    for stat, value in statistic_values(result.labels):
        assert d[stat.section][stat.key] == (None if value != value else value)
    for section in SECTIONS:
        listed = [s.key for s in STATISTICS if s.section == section]
        assert [k for k in d[section] if k in listed] == listed
    assert list(d["classification"])[:5] == ["n", "tp", "fp", "fn", "tn"]  # counts first


def test_the_csv_rows_follow_the_list_and_leave_probability_out_without_probabilities():
    for with_probability in (True, False):
        result = _agreement(with_probability)
        names = [name for name, _ in result.statistics()]
        listed = [f"{s.section}.{s.key}" for s in STATISTICS
                  if with_probability or s.section != "probability"]
        assert [n for n in names if n in {f"{s.section}.{s.key}" for s in STATISTICS}] == listed


def test_the_html_statistics_table_has_one_row_per_statistic_in_list_order():
    from pooling.leaderboard.report import agreement_section

    result = _agreement(with_probability=True)
    table = re.search(r'<table id="agreement-statistics">(.*?)</table>',
                      agreement_section(result)).group(1)
    rows = re.findall(r'<tr><td class="run">(.*?)</td>', table)
    assert len(rows) == len(STATISTICS)
    assert rows[3] == "Cohen&#x27;s kappa (binary, grade ≥ 1)"
    assert rows[-3] == "ROC-AUC (4 pairs with a probability)"


def test_every_statistic_says_what_it_measures():
    assert all(s.description and s.label and s.term for s in STATISTICS)
    assert len({(s.section, s.key) for s in STATISTICS}) == len(STATISTICS)
