"""The C kernel (run files and stored runs scanned in C) against the NumPy path and pytrec_eval.

The kernel must give byte-identical values to the NumPy path on everything it accepts, and
decline (so the NumPy path reads and reports) everything else.
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_differential_pytrec_eval import EVAL_PROFILE, SHARED, Case, _theirs, assert_agree, cases

from pooling.evaluation import evaluate, kernel
from pooling.evaluation.qrels_index import QrelsIndex
from pooling.evaluation.ranking import DuplicateDocsError
from pooling.evaluation.trec_input import load_qrels

pytrec_eval = pytest.importorskip("pytrec_eval")
pytestmark = pytest.mark.skipif(not kernel.enabled() and not os.environ.get("CI"),
                                reason="the C kernel is not built here")

EVERY = ["all_trec", "Judged(ties=asc)@10", "Judged@10"]  # every trec_eval measure, and both tie rules


def test_the_kernel_is_built():
    """An install without the kernel still works, but CI must test the kernel itself."""
    assert kernel.enabled(), "pooling.evaluation._kernel is missing: reinstall with a C compiler"


def _write(case: Case, tmp: Path) -> tuple[Path, Path]:
    qrels, run = tmp / "qrels.txt", tmp / "run.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in case.qrels.items()
                             for d, g in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for q, docs in case.run.items()
                           for i, (d, s) in enumerate(docs.items())))
    return qrels, run


def _scanned(qrels: Path, run: Path) -> kernel.KernelScan | None:
    index = QrelsIndex(load_qrels(qrels).table)
    return kernel.scan_file(index.kernel_table, run)


def _same(a, b) -> None:
    """Two evaluations are identical: same topics, same values (exactly), same summaries."""
    assert [r.run_id for r in a.runs] == [r.run_id for r in b.runs]
    for x, y in zip(a.runs, b.runs, strict=True):
        assert x.query_ids == y.query_ids
        assert x.per_query.keys() == y.per_query.keys()
        for name in x.per_query:
            assert np.array_equal(x.per_query[name], y.per_query[name]), name
        assert x.summary.keys() == y.summary.keys()
        for name, value in x.summary.items():
            assert value == y.summary[name] or (
                isinstance(value, float) and math.isnan(value) and math.isnan(y.summary[name])
            ), name


def _both(monkeypatch, *args, **kwargs):
    """(kernel's evaluation, NumPy path's evaluation) of the same call."""
    ours = evaluate(*args, **kwargs)
    with monkeypatch.context() as m:
        m.setenv("POOLING_KERNEL", "off")
        numpy_path = evaluate(*args, **kwargs)
    return ours, numpy_path


@EVAL_PROFILE
@given(cases())
def test_run_files_scanned_in_c_agree_with_pytrec_eval(tmp_path_factory, case: Case):
    tmp = tmp_path_factory.mktemp("case")
    qrels, run = _write(case, tmp)
    assert _scanned(qrels, run) is not None  # the kernel, not the NumPy path, read it
    ours = evaluate(qrels, run, SHARED, missing_topics="skip", relevance_level=case.level).runs[0]
    theirs = _theirs(case)
    assert_agree(ours, theirs)


def _random_collection(tmp: Path, seed: int, *, shuffle: bool, ties: float) -> tuple[Path, Path]:
    """20 qrels topics and 3 the qrels lack; 0-300 docs each, many judged, with ties."""
    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for t in range(23):
        qid = f"{rng.randrange(1000)}-{t}"
        docs = [f"D{rng.randrange(10 ** rng.randrange(1, 6))}x{i}" for i in range(rng.randrange(300))]
        if t < 20:
            judged = rng.sample(docs, k=len(docs) // 3) + [f"unretrieved{i}" for i in range(5)]
            qrels_lines += [f"{qid} 0 {d} {rng.choice([-1, 0, 0, 1, 2, 3])}\n" for d in judged]
        scores = sorted((round(rng.random() * 10, 1) if rng.random() < ties else rng.random() * 10
                         for _ in docs), reverse=True)
        lines = [f"{qid} Q0 {d} {i + 1} {s!r} run{seed}\n" for i, (d, s) in
                 enumerate(zip(docs, scores, strict=True))]
        if shuffle:
            rng.shuffle(lines)
        run_lines += lines
    qrels, run = tmp / f"qrels{seed}.txt", tmp / f"run{seed}.txt"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    return qrels, run


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("shuffle", [False, True], ids=["score order", "shuffled"])
def test_the_kernel_and_the_numpy_path_give_identical_values(tmp_path, monkeypatch, seed,
                                                             shuffle):
    qrels, run = _random_collection(tmp_path, seed, shuffle=shuffle, ties=0.8)
    assert _scanned(qrels, run) is not None
    for options in ({}, {"max_docs": 7}, {"max_docs": 100}, {"judged_only": True},
                    {"relevance_level": 2}, {"missing_topics": "zero"}):
        _same(*_both(monkeypatch, qrels, run, EVERY, **{"missing_topics": "skip", **options}))


def test_a_file_scanned_in_two_halves_gives_the_values_of_one_scan(tmp_path, monkeypatch):
    qrels, run = _random_collection(tmp_path, 11, shuffle=False, ties=0.9)
    monkeypatch.setattr(kernel, "_SPLIT_BYTES", 1)  # split even this small file
    index = QrelsIndex(load_qrels(qrels).table)
    halves = kernel.scan_file(index.kernel_table, run)
    monkeypatch.setattr(kernel, "_SPLIT_BYTES", 1 << 40)
    whole = kernel.scan_file(index.kernel_table, run)
    assert halves is not None and whole is not None
    for field in ("num_ret", "topic", "pos", "pos_asc", "qrow"):
        assert np.array_equal(getattr(halves, field), getattr(whole, field)), field
    assert (halves.rows, halves.tag) == (whole.rows, whole.tag)


def test_a_topic_split_across_the_halves_is_left_to_the_numpy_path(tmp_path, monkeypatch):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n2 0 b 1\n")
    run = tmp_path / "run.txt"  # topic 1 comes back after topic 2: its lines are apart
    run.write_text("".join(f"1 Q0 d{i} 1 {i} t\n" for i in range(300)) + "2 Q0 b 1 1 t\n"
                   + "".join(f"2 Q0 e{i} 1 0.5 t\n" for i in range(300)) + "1 Q0 a 1 999 t\n")
    monkeypatch.setattr(kernel, "_SPLIT_BYTES", 1)
    assert _scanned(qrels, run) is None
    ours, numpy_path = _both(monkeypatch, qrels, run, ["map", "P.5", "num_ret"])
    _same(ours, numpy_path)
    assert list(ours.runs[0].per_query["map"]) == [1.0, 1.0]


CLEAN = "1 Q0 a 1 2.5 tag\n1 Q0 b 2 2.5 tag\n1 Q0 c 3 1 tag\n2 Q0 a 1 3 tag\n"


@pytest.mark.parametrize("text", [
    CLEAN.replace("1 Q0 b", "1\tQ0 b"),  # a tab
    CLEAN.replace("\n", "\r\n"),  # CRLF
    "# a comment\n" + CLEAN,
    CLEAN.replace("tag\n", "tag extra\n", 1),  # a 7th field
    "\ufeff" + CLEAN,  # a byte-order mark
    CLEAN.replace("2.5", "inf", 1),
    CLEAN.replace("2.5", "0x1p1", 1),
    CLEAN.replace("2.5", "2.5e", 1),
    CLEAN.replace("2.5", ".", 1),
    CLEAN.replace("\n", "\n\n", 1),  # an empty line
    CLEAN.replace("1 Q0 a", "1  Q0 a", 1),  # a doubled space
    CLEAN + "1 Q0 z 9 0 tag\n",  # topic 1's lines apart
    CLEAN + "2 Q0 a 2 1 tag\n",  # a doc_id twice in a topic
    CLEAN.replace("2 Q0", "é Q0"),  # a query_id not ASCII
], ids=["tab", "crlf", "comment", "seven fields", "bom", "inf", "hex", "exponent without digits",
        "dot", "empty line", "double space", "topic apart", "duplicate", "non-ascii topic"])
def test_unusual_files_are_declined_and_read_by_the_numpy_path(tmp_path, monkeypatch, text):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 c 2\n2 0 a 1\n")
    run = tmp_path / "run.txt"
    run.write_bytes(text.encode())
    assert _scanned(qrels, run) is None
    try:
        ours = evaluate(qrels, run, ["map", "ndcg", "num_ret"], missing_topics="skip")
    except Exception as exc:  # the NumPy path's own error, e.g. the duplicate
        with monkeypatch.context() as m:
            m.setenv("POOLING_KERNEL", "off")
            with pytest.raises(type(exc)) as theirs:
                evaluate(qrels, run, ["map", "ndcg", "num_ret"], missing_topics="skip")
        assert str(theirs.value) == str(exc)
        return
    with monkeypatch.context() as m:
        m.setenv("POOLING_KERNEL", "off")
        _same(ours, evaluate(qrels, run, ["map", "ndcg", "num_ret"], missing_topics="skip"))


def test_a_doc_id_twice_in_a_topic_still_fails_like_trec_eval(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n1 Q0 a 3 0 t\n")
    with pytest.raises(DuplicateDocsError, match="retrieves document a twice for topic 1"):
        evaluate(qrels, run, ["map"])


def test_judgments_twice_in_the_qrels_are_found_by_the_kernel_table(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 a 2\n2 0 c 1\n")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 2 t\n2 Q0 c 1 1 t\n")
    with pytest.raises(DuplicateDocsError, match="judge document a twice in topic 1"):
        evaluate(qrels, run, ["map"])


@given(st.lists(st.tuples(st.integers(0, 10 ** 18), st.integers(0, 20), st.integers(-30, 30),
                          st.booleans()), min_size=2, max_size=40))
def test_scores_are_read_as_c_atof_reads_them(tmp_path_factory, numbers):
    """Ties are decided on the parsed doubles: every score text must give the double C's
    atof gives (Python's float() is correctly rounded, like glibc's strtod)."""
    tmp = tmp_path_factory.mktemp("scores")
    texts = []
    for mantissa, decimals, exponent, with_exponent in numbers:
        digits = str(mantissa).rjust(decimals + 1, "0")
        text = f"{digits[:-decimals]}.{digits[-decimals:]}" if decimals else digits
        texts.append(text + (f"e{exponent}" if with_exponent else ""))
    mantissa, _, exponent = texts[0].partition("e")  # the same number, written longer: a tie
    texts.append(mantissa + ("0" if "." in mantissa else ".0") + (f"e{exponent}" if exponent else ""))
    qrels = tmp / "qrels.txt"
    qrels.write_text("".join(f"1 0 d{i:03d} 1\n" for i in range(len(texts))))
    run = tmp / "run.txt"
    run.write_text("".join(f"1 Q0 d{i:03d} 1 {s} t\n" for i, s in enumerate(texts)))
    scan = _scanned(qrels, run)
    assert scan is not None
    values = [float(s) for s in texts]
    expected = sorted(range(len(texts)), key=lambda i: (-values[i], -i))  # doc_id descending
    placed = dict(zip(scan.qrow.tolist(), scan.pos.tolist(), strict=True))
    assert [placed[i] for i in expected] == list(range(len(texts)))


def test_a_stored_runs_columns_give_the_values_of_its_file(tmp_path, monkeypatch):
    qrels, run = _random_collection(tmp_path, 5, shuffle=False, ties=0.8)
    index = QrelsIndex(load_qrels(qrels).table)
    from_file = kernel.scan_file(index.kernel_table, run)
    lines = [line.split() for line in run.read_text().splitlines()]
    table = pa.table({"query_id": [x[0] for x in lines], "doc_id": [x[2] for x in lines],
                      "score": pa.array([float(x[4]) for x in lines], pa.float64())})
    batches = table.to_batches(max_chunksize=97)  # topics straddle the batches
    from_columns = kernel.scan_columns(index.kernel_table, batches)
    assert from_file is not None and from_columns is not None
    for field in ("num_ret", "topic", "pos", "pos_asc", "qrow"):
        assert np.array_equal(getattr(from_file, field), getattr(from_columns, field)), field


@given(st.lists(st.sampled_from([b"a", b"bc ", b"\n", b"\t", b"\r", b"\v", b"\f", b"x" * 40,
                                 b"\n\n", b"\xef\xbb\xbf", b" "]), max_size=60))
def test_line_facts_count_lines_and_find_odd_whitespace_as_python_does(pieces):
    """In C, and in the passes taken without the kernel: every bound on the line length
    tells whether the longest line is over it."""
    data = b"".join(pieces)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    longest = max((len(x) for x in lines), default=0)
    odd = any(c in data for c in (b"\t", b"\r", b"\v", b"\f"))
    for setting in ("on", "off"):
        with pytest.MonkeyPatch.context() as m:
            m.setenv("POOLING_KERNEL", setting)
            for bound in range(longest + 2):
                assert kernel.line_facts(data, bound) == (len(lines), longest > bound, odd)


def test_a_stored_run_evaluates_to_the_values_of_the_numpy_path(tmp_path, monkeypatch):
    from pooling.store import Store
    from pooling.store.evaluate import evaluate_store

    qrels, run = _random_collection(tmp_path, 3, shuffle=False, ties=0.8)
    with Store.create(tmp_path / "s.duckdb") as store:
        store.import_qrels(qrels, name="q")
        store.import_runs([run])
        ours = evaluate_store(store, qrels="q", measures=EVERY, missing_topics="zero")
        store.con.execute("DELETE FROM eval_results")
        with monkeypatch.context() as m:
            m.setenv("POOLING_KERNEL", "off")
            numpy_path = evaluate_store(store, qrels="q", measures=EVERY, missing_topics="zero")
    assert ours.computed == numpy_path.computed == [ours.run_ids[0]]
    keys = [("run_id", "ascending"), ("query_id", "ascending"), ("measure", "ascending")]
    assert ours.per_query.num_rows > 0
    assert ours.per_query.sort_by(keys).equals(numpy_path.per_query.sort_by(keys))
    assert ours.means.sort_by(keys[::2]).equals(numpy_path.means.sort_by(keys[::2]))


TOKENS = ["1", "2", "10", "#", "Q0", "a", "b", "B", "d1", "é", "0.5", "1e2", "-0", "inf", "nan",
          "x" * 300, "", " ", "\t", "\r", "\x00", "\ufeff1", ".", "2.50", "0x10"]



@st.composite
def run_lines(draw) -> list[str]:
    """A run line: mostly six well-formed fields, sometimes one of them replaced by an odd
    token, or a line of odd tokens only."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.lists(st.sampled_from(TOKENS), max_size=8))
    fields = [draw(st.sampled_from(["1", "2", "10", "3"])), "Q0",
              draw(st.sampled_from(["a", "b", "B", "d1", "c", "e"])), "1",
              draw(st.sampled_from(["0.5", "1", "2.50", "1e2", "-0", "3", ".5", "+1"])), "t"]
    if draw(st.integers(0, 4)) == 0:
        fields[draw(st.integers(0, 5))] = draw(st.sampled_from(TOKENS))
    return fields


@given(st.lists(run_lines(), max_size=25), st.sampled_from(["\n", "\n", "\r\n"]),
       st.booleans())
def test_any_run_text_gives_the_outcome_of_the_numpy_path(tmp_path_factory, lines, newline,
                                                          final_newline):
    """Whatever the bytes, the kernel either reads the file exactly as the NumPy path does or
    declines it: same values, or the same error."""
    tmp = tmp_path_factory.mktemp("fuzz")
    qrels = tmp / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 a 2\n10 0 d1 1\n")
    run = tmp / "run.txt"
    text = newline.join(" ".join(tokens) for tokens in lines)
    run.write_bytes((text + (newline if final_newline and lines else "")).encode())

    def outcome():
        try:
            return evaluate(qrels, run, ["map", "ndcg", "num_ret", "Judged(ties=asc)@2"],
                            missing_topics="zero")
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc), str(exc)

    ours = outcome()
    with pytest.MonkeyPatch.context() as m:
        m.setenv("POOLING_KERNEL", "off")
        theirs = outcome()
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert ours == theirs
    else:
        _same(ours, theirs)


def test_the_kernel_table_reads_a_sliced_doc_id_array_from_its_offset(tmp_path):
    """The kernel reads the qrels' doc_ids in place: a sliced array starts mid-buffer."""
    qrels_path, run = _random_collection(tmp_path, 9, shuffle=False, ties=0.5)
    index = QrelsIndex(load_qrels(qrels_path).table)
    padded = pa.concat_arrays([pa.array(["pad1", "pad2", "pad3"]), index.doc_id])
    sliced = padded.slice(3)
    assert sliced.offset == 3 and sliced.equals(index.doc_id)
    in_place = kernel.qrels_table(sliced, index.topic, index.topics)
    copied = kernel.qrels_table(index.doc_id, index.topic, index.topics)
    a, b = kernel.scan_file(in_place, run), kernel.scan_file(copied, run)
    assert a is not None and b is not None and len(a.qrow) > 0
    for field in ("num_ret", "topic", "pos", "pos_asc", "qrow"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
