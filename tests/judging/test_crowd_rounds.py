"""Crowd rounds in the store: redundancy and gold recorded and checked, the open queue read from
the history, unjudgeable answers, progress at K, gold kept out of every derived qrels
version, and a withdrawn worker handed nothing while keeping every judgment."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from pooling.crowds.queue_policy import gold_key, gold_turn
from pooling.errors import FormatError, StoreError
from pooling.judging.assessors import add_assessor
from pooling.judging.batches import export_batch, import_batch
from pooling.judging.handouts import handouts, record_handouts
from pooling.judging.history import (
    answers_per_pair,
    effective_judgments,
    history,
    over_k_answers,
    unjudgeable_answers,
)
from pooling.judging.judgments import Judgment, append_judgments, record, undo_in_store
from pooling.judging.queue import next_document, topic_queue
from pooling.judging.rounds import create_round, get_round, gold_pairs, set_gold
from pooling.judging.rules import derive_grades, derive_qrels, rule_names
from pooling.store import Store

RUN = "".join(f"1 Q0 d{i} {i} {100 - i} A\n" for i in range(1, 7))
GOLD = "1 0 g1 1\n1 0 g2 0\n1 0 g3 2\n1 0 g4 1\n"


@pytest.fixture
def store(tmp_path):
    (tmp_path / "a.run").write_text(RUN)
    (tmp_path / "gold.qrels").write_text(GOLD)
    (tmp_path / "other.qrels").write_text("9 0 x 1\n")
    s = Store.create(tmp_path / "c.duckdb")
    s.import_runs([tmp_path / "a.run"])
    s.import_qrels(tmp_path / "gold.qrels", name="gold")
    s.import_qrels(tmp_path / "other.qrels", name="elsewhere")
    for name in ("ann", "bob", "cid", "dee"):
        add_assessor(s, name)
    yield s
    s.close()


def crowd(store, name="c", k=2, gold="gold", rate=0.25):
    return create_round(store, name, "depth", strategy_params={"depth": 6}, redundancy=k,
                        gold=gold, gold_rate=rate if gold else None).round


def cli(*args: str) -> subprocess.CompletedProcess:
    """`pooling ARGS` as a person runs it."""
    return subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True, text=True)


def hand(store, *pairs, round_id="c"):
    """Documents handed to workers as the queue records them, (worker, doc) pairs of topic 1,
    their claims run out already: a worker answers only what was handed to them."""
    with store.transaction() as con:
        record_handouts(con, [h for w, d in pairs for h in handouts(round_id, w, "1", [d], 0)])


def work(store, worker, round_id="c", grade=1, limit=100):
    """The worker judges what they are handed until nothing is left; the documents in order."""
    seen = []
    while len(seen) < limit and (doc := next_document(store, round_id, worker, "1")) is not None:
        seen.append(doc)
        record(store, [Judgment(round_id, worker, "1", doc, grade)])
    return seen


def test_a_crowd_round_records_redundancy_gold_and_rate(store):
    rnd = crowd(store, k=3, rate=0.2)
    again = get_round(store, "c")
    assert (again.redundancy, again.gold, again.gold_rate, again.crowd) == (3, "gold", 0.2, True)
    assert rnd.params["redundancy"] == 3
    plain = create_round(store, "p", "depth", strategy_params={"depth": 2}).round
    assert (plain.redundancy, plain.gold, plain.gold_rate, plain.crowd) == (1, None, 0.0, False)
    assert create_round(store, "g", "depth", gold="gold").round.gold_rate == 0.1


@pytest.mark.parametrize("options,words", [
    ({"redundancy": 0}, "--redundancy must be a whole number from 1"),
    ({"gold": "nope"}, "no qrels version 'nope' to use as gold"),
    ({"gold": "gold", "gold_rate": 1.0}, "--gold-rate must be a share between 0 and 1"),
    ({"gold": "gold", "gold_rate": 0}, "--gold-rate must be a share between 0 and 1"),
    ({"gold_rate": 0.1}, "name the gold qrels version with --gold"),
    ({"gold": "elsewhere"}, "has no pair in the round's topics"),
])
def test_a_crowd_round_is_refused_saying_what_to_do(store, options, words):
    with pytest.raises(StoreError, match=words):
        create_round(store, "c", "depth", **options)
    assert store.one("n", "SELECT count(*) FROM rounds") == (0,)


def test_cli_pool_makes_a_crowd_round_and_says_so(store, tmp_path):
    path = store.path
    store.close()
    done = cli("pool", str(path), "--round", "c", "--strategy", "depth", "--depth", "6",
               "--redundancy", "3", "--gold", "gold", "--gold-rate", "0.2")
    assert done.returncode == 0, done.stderr
    assert "a crowd round: 3 answer(s) per pair, gold from gold at 0.2" in done.stdout
    bad = cli("pool", str(path), "--round", "d", "--strategy", "depth", "--redundancy", "2",
              "--gold", "nope")
    assert bad.returncode != 0 and "no qrels version 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_every_person_works_in_a_crowd_round_until_each_pair_has_k_answers(store):
    crowd(store, k=2, gold=None)
    ann, bob, cid = work(store, "ann"), work(store, "bob"), work(store, "cid")
    assert sorted(ann) == sorted(bob) == [f"d{i}" for i in range(1, 7)]
    assert cid == []  # every pair has its two answers
    table = effective_judgments(store, "c")
    per_pair = {}
    for d, a in zip(table["doc_id"].to_pylist(), table["assessor_id"].to_pylist(), strict=True):
        per_pair.setdefault(d, set()).add(a)
    assert all(len(people) == 2 for people in per_pair.values())


def test_gold_is_mixed_in_at_the_rate_and_never_enters_derived_qrels(store):
    crowd(store, k=2, rate=0.25)
    for w in ("ann", "bob"):
        seen = work(store, w)
        gold = [d for d in seen if d.startswith("g")]
        assert len(seen) == len(set(seen))
        for n in range(1, len(seen) + 1):
            assert abs(sum(d.startswith("g") for d in seen[:n]) - 0.25 * n) <= 1
        assert gold
    for rule in ("latest", "majority", "mean", "wawa", "dawid-skene"):
        table = derive_grades(store, rule, round_id="c")
        assert not any(d.startswith("g") for d in table["doc_id"].to_pylist()), rule
        assert table.num_rows == 6, rule
    made = derive_qrels(store, "majority", "crowd-majority", round_id="c")
    rows = store.con.execute("SELECT doc_id FROM qrels WHERE version = ?", [made.name]).fetchall()
    assert sorted(r[0] for r in rows) == [f"d{i}" for i in range(1, 7)]
    assert {"latest", "majority", "mean"} <= set(rule_names())


def test_unjudgeable_is_an_answer_toward_k_left_out_of_grades_and_counted(store):
    crowd(store, k=2, gold=None)
    hand(store, ("ann", "d1"), ("bob", "d1"), ("ann", "d2"), ("bob", "d2"))
    record(store, [Judgment("c", "ann", "1", "d1", None, kind="unjudgeable"),
                   Judgment("c", "bob", "1", "d1", None, kind="unjudgeable"),
                   Judgment("c", "ann", "1", "d2", None, kind="unjudgeable"),
                   Judgment("c", "bob", "1", "d2", 2)])
    assert "d1" not in work(store, "cid", limit=6)  # two answers already, both unjudgeable
    assert unjudgeable_answers(store, "c") == (1, 3)
    table = derive_grades(store, "majority", round_id="c")
    grades = dict(zip(table["doc_id"].to_pylist(), table["relevance"].to_pylist(), strict=True))
    assert "d1" not in grades and grades["d2"] == 2
    made = derive_qrels(store, "majority", "m", round_id="c")
    params = store.one("p", "SELECT params FROM qrels_versions WHERE name = ?", [made.name])[0]
    assert '"unjudgeable": {"pairs": 1, "answers": 3}' in params


def test_an_unjudgeable_answer_is_undone_like_a_grade_and_kept_in_history(store):
    crowd(store, k=2, gold=None)
    docs = [f"d{i}" for i in range(1, 7)]
    hand(store, *[(w, d) for w in ("ann", "bob") for d in docs])
    record(store, [Judgment("c", "bob", "1", d, 1) for d in docs]
           + [Judgment("c", "ann", "1", d, 0) for d in docs[1:]]
           + [Judgment("c", "ann", "1", "d1", None, kind="unjudgeable")])
    assert next_document(store, "c", "cid", "1") is None  # every pair has two answers
    done = undo_in_store(store, "c", "ann", "1", "u" * 20)
    assert done.doc_id == "d1"
    assert next_document(store, "c", "cid", "1") == "d1"  # the pair is open again
    kinds = [r["kind"] for r in history(store).to_pylist()]
    assert kinds[-2:] == ["unjudgeable", "retract"]
    with pytest.raises(StoreError, match="kind must be one of judge, retract, unjudgeable"):
        record(store, [Judgment("c", "ann", "1", "d1", None, kind="broken")])


def test_unjudgeable_is_refused_where_a_grade_is_needed(store):
    create_round(store, "a", "mtf", depth=6)
    with pytest.raises(StoreError, match="needs a grade for every document"):
        record(store, [Judgment("a", "ann", "1", "d1", None, kind="unjudgeable")])


def test_a_withdrawn_worker_is_handed_nothing_and_keeps_every_judgment(store):
    crowd(store, k=3, gold=None)
    first = work(store, "ann", limit=2)
    store.con.execute("INSERT INTO worker_decisions (round_id, assessor_id, decision, "
                      "decided_at) VALUES ('c', 'ann', 'withdraw', now())")
    assert next_document(store, "c", "ann", "1") is None
    assert topic_queue(store, get_round(store, "c"), "ann", "1").next_pairs() == []
    kept = effective_judgments(store, "c", assessor_id="ann")
    assert sorted(kept["doc_id"].to_pylist()) == sorted(first)
    with pytest.raises(StoreError, match="not assigned"):
        record(store, [Judgment("c", "ann", "1", "d6", 1)])
    store.con.execute("INSERT INTO worker_decisions (round_id, assessor_id, decision, "
                      "decided_at) VALUES ('c', 'ann', 'clear', now())")
    assert next_document(store, "c", "ann", "1") is not None


def test_automatic_judges_are_not_workers_of_a_crowd_round(store):
    crowd(store, k=2, gold=None)
    store.con.execute("UPDATE assessors SET kind = 'model' WHERE assessor_id = 'dee'")
    with pytest.raises(StoreError, match="not assigned"):
        record(store, [Judgment("c", "dee", "1", "d1", 1)])


def test_a_batch_of_a_crowd_round_is_the_worker_s_queue_and_takes_unjudgeable(store, tmp_path):
    crowd(store, k=2, rate=0.25)
    out = tmp_path / "ann.csv"
    n = export_batch(store, "c", "ann", out)
    rows = list(csv.DictReader(out.open()))
    gold = sum(r["doc_id"].startswith("g") for r in rows)
    assert n == len(rows) == 6 + gold  # all six pairs, and gold at its turns
    assert 1 <= gold <= 3  # within one pair of a quarter of each topic's answers
    rows[0]["grade"], rows[1]["grade"] = "unjudgeable", "2"
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert import_batch(store, "c", "ann", out) == (2, 0)
    assert import_batch(store, "c", "ann", out) == (0, 2)
    kinds = {r["doc_id"]: r["kind"] for r in history(store).to_pylist()}
    assert kinds == {rows[0]["doc_id"]: "unjudgeable", rows[1]["doc_id"]: "judge"}
    again = tmp_path / "again.csv"
    export_batch(store, "c", "ann", again)
    left = {r["doc_id"] for r in csv.DictReader(again.open())}
    assert left and not left & {rows[0]["doc_id"], rows[1]["doc_id"]}


def test_cli_progress_counts_a_crowd_round_s_pairs_at_k(store):
    crowd(store, k=2, gold="gold", rate=0.25)
    work(store, "ann")
    work(store, "bob", limit=3)  # bob's first answers: a gold one, then two pairs reach K
    path = store.path
    store.close()
    done = cli("progress", str(path))
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("│ c ")
               or " c " in line)
    assert "crowd, 2 answer(s) per pair, gold gold" in done.stdout
    assert "2 at 2" in row


def test_an_organiser_s_answer_takes_no_worker_s_slot_of_k(store):
    crowd(store, k=2, gold=None)
    add_assessor(store, "org", role="organiser")
    record(store, [Judgment("c", "org", "1", "d1", 2)])  # a check, not a worker's vote
    assert answers_per_pair(store, "c") == {}
    assert next_document(store, "c", "ann", "1") == "d1"  # fewest answers, then queue order
    everything = [f"d{i}" for i in range(1, 7)]
    assert sorted(work(store, "ann")) == sorted(work(store, "bob")) == everything
    assert answers_per_pair(store, "c") == {("1", d): 2 for d in everything}
    assert work(store, "cid") == []  # every pair has its two workers' answers


def _official(store, tmp_path, text="1 0 d1 1\n1 0 d2 0\n"):
    """A qrels version like the official one of the pooled runs: it covers the queued pairs."""
    (tmp_path / "official.qrels").write_text(text)
    store.import_qrels(tmp_path / "official.qrels", name="official")


def test_a_gold_version_covering_the_pool_is_refused_naming_the_cause(store, tmp_path):
    _official(store, tmp_path)
    with pytest.raises(StoreError, match="are in the round's queue, and a queued pair is never "
                                         "a gold question") as refused:
        create_round(store, "c4", "depth", strategy_params={"depth": 2}, redundancy=3,
                     gold="official", gold_rate=0.1)
    assert "pooling crowd gold STORE --round c4 --from official" in str(refused.value)
    assert store.one("n", "SELECT count(*) FROM rounds") == (0,)
    create_round(store, "c5", "depth", strategy_params={"depth": 2}, redundancy=3)
    with pytest.raises(StoreError, match="never a gold question"):
        set_gold(store, "c5", "official", 0.1)
    assert get_round(store, "c5").gold is None
    path = store.path
    store.close()
    done = cli("pool", str(path), "--round", "c4", "--strategy", "depth", "--depth", "2",
               "--redundancy", "3", "--gold", "official", "--gold-rate", "0.1")
    assert done.returncode == 1 and "never a gold question" in done.stderr
    assert "Traceback" not in done.stderr


def test_queued_pairs_are_taken_out_of_the_gold_and_the_rest_is_counted(store, tmp_path):
    _official(store, tmp_path, "1 0 d1 1\n1 0 d2 0\n1 0 g1 2\n")
    path = store.path
    store.close()
    done = cli("pool", str(path), "--round", "c4", "--strategy", "depth", "--depth", "2",
               "--redundancy", "3", "--gold", "official", "--gold-rate", "0.1")
    assert done.returncode == 0, done.stderr
    assert "(1 gold pair(s) outside the queue)" in done.stdout
    with Store(path) as s:
        rnd = get_round(s, "c4")
        assert gold_pairs(s, rnd) == {"1": ["g1"]}
        handed = [work(s, w, "c4") for w in ("ann", "bob", "cid")]
        assert all({"d1", "d2"} <= set(seen) for seen in handed)  # queued pairs go to the crowd
        assert answers_per_pair(s, "c4") == {("1", "d1"): 3, ("1", "d2"): 3}
        made = derive_qrels(s, "majority", "crowd", round_id="c4")
        rows = s.con.execute("SELECT doc_id FROM qrels WHERE version = ?", [made.name]).fetchall()
        assert sorted(r[0] for r in rows) == ["d1", "d2"]
    shown = cli("progress", str(path))
    assert "2 at 3" in shown.stdout, shown.stdout


def test_a_round_stored_with_gold_covering_its_pool_leaves_the_pool_to_the_crowd(store, tmp_path):
    """A round made before queued pairs were taken out of gold: its queue is handed out."""
    _official(store, tmp_path)
    create_round(store, "old", "depth", strategy_params={"depth": 2}, redundancy=2)
    store.con.execute("UPDATE rounds SET params = json_merge_patch(params, "
                      "'{\"gold\": \"official\", \"gold_rate\": 0.1}') WHERE round_id = 'old'")
    assert get_round(store, "old").gold == "official"
    assert gold_pairs(store, get_round(store, "old")) == {}
    assert sorted(work(store, "ann", "old")) == ["d1", "d2"]
    assert derive_grades(store, "majority", round_id="old").num_rows == 2


def test_a_finished_round_hands_out_nothing_not_even_gold(store, tmp_path):
    crowd(store, k=2, rate=0.25)
    work(store, "ann")
    work(store, "bob")
    counts = answers_per_pair(store, "c")
    assert {p: n for p, n in counts.items() if p[1].startswith("d")} == {
        ("1", f"d{i}"): 2 for i in range(1, 7)}
    # a worker added now, whose first pair would be a gold one
    late = next(w for w in (f"late{i}" for i in range(100))
                if gold_turn(0, 0, 0.25, gold_key(w, ["g1", "g2", "g3", "g4"])))
    add_assessor(store, late)
    assert next_document(store, "c", late, "1") is None
    assert not topic_queue(store, get_round(store, "c"), late, "1").has_next()
    assert export_batch(store, "c", late, tmp_path / "late.csv") == 0


def _adaptive_and_judged(store):
    create_round(store, "a", "mtf", depth=6, budget=2)
    create_round(store, "s", "depth", strategy_params={"depth": 6})
    store.con.execute("UPDATE assessors SET kind = 'model' WHERE assessor_id = 'dee'")
    append_judgments(store, [Judgment("s", "dee", "1", f"d{i}", 1) for i in range(1, 7)])


def test_progress_shows_an_untouched_adaptive_round_not_done_and_counts_automatic_judges(store):
    _adaptive_and_judged(store)
    path = store.path
    store.close()
    done = cli("progress", str(path))
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in done.stdout.splitlines() if line.count("│") > 4}
    assert rows["a"][1:] == ["adaptive", "1", "0", "0", "0"]  # untouched: nothing done
    assert rows["s"][1:] == ["static", "1", "6", "6", "1"]  # judged by the automatic judge


def test_answers_past_k_are_kept_and_left_out_of_every_derivation(store):
    crowd(store, k=2, gold=None)
    hand(store, *[(w, "d1") for w in ("ann", "bob", "cid", "dee")])  # claims that ran out
    record(store, [Judgment("c", "ann", "1", "d1", 0), Judgment("c", "bob", "1", "d1", 0),
                   Judgment("c", "cid", "1", "d1", 2), Judgment("c", "dee", "1", "d1", 2)])
    assert over_k_answers(store, "c") == {("c", "cid", "1", "d1"), ("c", "dee", "1", "d1")}
    assert len(history(store)) == 4  # every answer is stored
    for rule in ("majority", "mean", "wawa", "dawid-skene"):
        grades = derive_grades(store, rule, round_id="c")
        assert dict(zip(grades["doc_id"].to_pylist(), grades["relevance"].to_pylist(),
                        strict=True)) == {"d1": 0}, rule
    assert sorted(effective_judgments(store, "c")["assessor_id"].to_pylist()) == ["ann", "bob"]
    assert len(effective_judgments(store, "c", over_k=True)) == 4
    assert effective_judgments(store, "c", assessor_id="cid").num_rows == 1  # her own, kept
    # bob takes his answer back: cid's is among the first two now, dee's still past K
    undo_in_store(store, "c", "bob", "1", "u" * 20)
    assert over_k_answers(store, "c") == {("c", "dee", "1", "d1")}
    assert sorted(effective_judgments(store, "c")["assessor_id"].to_pylist()) == ["ann", "cid"]


def test_a_worker_s_answer_to_a_pair_never_handed_to_them_is_refused(store, tmp_path):
    crowd(store, k=2, gold=None)
    with pytest.raises(StoreError, match="answers only documents handed to them"):
        record(store, [Judgment("c", "ann", "1", "d3", 2)])
    first = next_document(store, "c", "ann", "1")
    record(store, [Judgment("c", "ann", "1", first, 2)])  # handed: taken
    record(store, [Judgment("c", "ann", "1", first, 1)])  # a correction of her own answer
    # a batch row for a pair that was not in the batch handed to her
    (tmp_path / "b.csv").write_text("round_id,query_id,doc_id,grade\nc,1,d5,1\n")
    with pytest.raises(FormatError, match=r"b\.csv:2.*handed to them"):
        import_batch(store, "c", "bob", tmp_path / "b.csv")
    assert len(history(store)) == 2


def test_a_claim_kept_in_the_store_counts_toward_k_until_its_lease_runs_out(store):
    crowd(store, k=2, gold=None)
    held = next_document(store, "c", "ann", "1")  # claimed for ten minutes
    assert next_document(store, "c", "ann", "1") == held  # asked again: the same document
    # fewest answers plus live claims first: ann's claim counts as if she had answered
    assert [next_document(store, "c", w, "1") for w in ("bob", "cid")] == ["d2", "d3"]
    store.con.execute("UPDATE crowd_handouts SET lease_until = handed_at")  # ten minutes on
    assert next_document(store, "c", "dee", "1") == "d1"


def test_a_late_answer_to_a_handed_pair_is_stored_and_marked_over_k(store):
    crowd(store, k=2, gold=None)
    hand(store, ("ann", "d1"))  # handed to ann, who left: her claim ran out
    hand(store, ("bob", "d1"), ("cid", "d1"))  # so it was handed again, twice
    record(store, [Judgment("c", "bob", "1", "d1", 0), Judgment("c", "cid", "1", "d1", 0)])
    record(store, [Judgment("c", "ann", "1", "d1", 2)])  # ann comes back: stored all the same
    assert over_k_answers(store, "c") == {("c", "ann", "1", "d1")}
    assert len(history(store)) == 3
    for rule in ("majority", "dawid-skene"):
        grades = derive_grades(store, rule, round_id="c").select(["doc_id", "relevance"])
        assert grades.to_pylist() == [{"doc_id": "d1", "relevance": 0}], rule
