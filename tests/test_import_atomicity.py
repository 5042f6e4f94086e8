"""Imports are all or nothing, even when the process is SIGKILLed half way.

1. Real `pooling import` subprocesses are killed (POOLING_KILL_AT, see `pooling.store.faults`) after
   chunks of a multi-chunk general-path import, after the fast path's single statement, between
   the files of a multi-file import, during qrels and documents imports, and at many delays
   after COMMIT starts. After every kill the store opens cleanly and is either exactly as
   before (every table's digest unchanged) or, only for kills that landed after the commit was
   durable, holds the whole import.
2. Imports that fail validation raise a `PoolingError` and leave every table unchanged.
3. A store held open by another process gives a plain message naming that process (or the
   `pooling serve` that holds it), exit code 1 and no traceback.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pooling.errors import FormatError, PoolingError, StoreError
from pooling.store import Store
from pooling.store.runs import CHUNK_ROWS
from pooling.store.schema import DATA_TABLES

N_TOPICS = 50
BASE_RUN_ROWS = 1_000
BASE_QRELS_ROWS = 1_000
BASE_DOCS = 500

# Kill points after COMMIT starts, in milliseconds (0 = just before COMMIT).
FAST_COMMIT_DELAYS = [0, 1, 2, 3, 5, 8, 12, 20, 35]
LARGE_COMMIT_DELAYS = [1, 4]
GZIP_COMMIT_DELAYS = [0, 5, 20]
MULTI_COMMIT_DELAYS = [0, 6]
QRELS_COMMIT_DELAYS = [0, 2, 5]


# -- generated inputs -------------------------------------------------------------------------
@dataclass(frozen=True)
class RunData:
    """A generated run: its TREC lines (without tag) and the rows the store must end up with."""

    body: pa.Array  # "query_id Q0 doc_id rank score" per line
    table: pa.Table  # query_id, doc_id, rank, score

    def text(self, tag: str) -> str:
        return "\n".join(pc.binary_join_element_wise(self.body, tag, " ").to_pylist()) + "\n"

    def head(self, n: int) -> RunData:
        return RunData(self.body.slice(0, n), self.table.slice(0, n))

    @property
    def n_topics(self) -> int:
        return len(pc.unique(self.table["query_id"]))


def make_run(n_rows: int, doc_prefix: str, n_topics: int = N_TOPICS) -> RunData:
    """n_rows lines over n_topics topics, distinct (query_id, doc_id), descending scores."""
    per_topic = -(-n_rows // n_topics)
    i = np.arange(n_rows)
    q, r = i // per_topic, i % per_topic
    score_texts = [f"{1000 - x / 1000:.3f}" for x in range(per_topic)]
    qids = pa.array([str(x + 1) for x in range(n_topics)]).take(q)
    docs = pc.binary_join_element_wise(
        pc.binary_join_element_wise(doc_prefix, qids, ""),
        pa.array([str(x) for x in range(per_topic)]).take(r), "_",
    )
    ranks = pa.array([str(x + 1) for x in range(per_topic)]).take(r)
    body = pc.binary_join_element_wise(qids, "Q0", docs, ranks, pa.array(score_texts).take(r), " ")
    table = pa.table({
        "query_id": qids,
        "doc_id": docs,
        "rank": pa.array(r + 1, pa.int64()),
        "score": pa.array([float(t) for t in score_texts], pa.float64()).take(r),
    })
    return RunData(body, table)


def make_qrels(n_rows: int, doc_prefix: str = "d") -> tuple[str, pa.Table]:
    per_topic = -(-n_rows // N_TOPICS)
    rows = [(str(i // per_topic + 1), f"{doc_prefix}{i // per_topic + 1}_{i % per_topic}", i % 3)
            for i in range(n_rows)]
    text = "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)
    table = pa.table({
        "query_id": pa.array([r[0] for r in rows], pa.string()),
        "doc_id": pa.array([r[1] for r in rows], pa.string()),
        "relevance": pa.array([r[2] for r in rows], pa.int64()),
    })
    return text, table


def make_docs(n: int, prefix: str) -> str:
    return "".join(
        json.dumps({"doc_id": f"{prefix}{i}", "title": f"title {i}", "text": f"text of {i}"}) + "\n"
        for i in range(n)
    )


def write(path: Path, text: str, *, gz: bool = False) -> Path:
    if gz:
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def base_store(tmp_path_factory) -> Path:
    """A closed store holding topics, documents, one qrels version and one run."""
    d = tmp_path_factory.mktemp("base")
    write(d / "topics.tsv", "".join(f"{q}\ttopic number {q}\n" for q in range(1, N_TOPICS + 1)))
    write(d / "qrels.txt", make_qrels(BASE_QRELS_ROWS, "d")[0])
    write(d / "base.txt", make_run(BASE_RUN_ROWS, "d").text("base"))
    write(d / "docs.jsonl", make_docs(BASE_DOCS, "doc"))
    path = d / "store.db"
    with Store.create(path) as s:
        s.import_topics(d / "topics.tsv")
        s.import_documents(d / "docs.jsonl")
        s.import_qrels(d / "qrels.txt")
        s.import_runs([d / "base.txt"])
    assert not Path(f"{path}.wal").exists()
    return path


def copy_store(base: Path, dest: Path) -> Path:
    shutil.copyfile(base, dest)
    return dest


def digests(store: Store) -> dict[str, str]:
    return {t: store.table_digest(t) for t in DATA_TABLES}


def read_digests(path: Path) -> dict[str, str]:
    with Store(path, read_only=True) as s:
        return digests(s)


# -- running the command line -------------------------------------------------------------------
def pooling_cmd() -> list[str]:
    script = Path(sys.executable).with_name("pooling")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pooling"]


def run_pooling(*args: str | Path, kill_at: str | None = None, timeout: float = 120):
    env = dict(os.environ)
    env.pop("POOLING_KILL_AT", None)
    if kill_at is not None:
        env["POOLING_KILL_AT"] = kill_at
    return subprocess.run(
        [sys.executable, "-m", "pooling", *map(str, args)] if kill_at is not None
        else [*pooling_cmd(), *map(str, args)],
        env=env, capture_output=True, text=True, timeout=timeout,
    )


# -- 1. kills ----------------------------------------------------------------------------------
@dataclass
class Expected:
    """What a complete import adds: runs (id -> data, file) or a qrels version, or documents."""

    runs: dict[str, tuple[RunData, Path]] = field(default_factory=dict)
    qrels: tuple[str, pa.Table, Path] | None = None
    docs: tuple[list[str], Path] | None = None


@dataclass
class Kill:
    label: str
    kind: str  # "rows" | "commit"
    spec: str  # POOLING_KILL_AT
    args: list[str | Path]  # after `pooling`
    expected: Expected


KEYS = {  # column that tells an import's new rows apart, per table it touches
    "runs": "run_id", "run_results": "run_id", "imports": "sha256",
    "qrels": "version", "qrels_versions": "name", "documents": "doc_id",
}


def rows_digest(store: Store, table: str, exclude: list[str] | None = None) -> tuple:
    """count and hash-sum of a table's rows, optionally without the rows of a new import."""
    cols = [d[0] for d in store.con.execute(f'SELECT * FROM "{table}" LIMIT 0').description]
    h = "hash(" + ", ".join(f'"{c}"' for c in cols) + ")"
    where, params = "", []
    if exclude is not None:
        where, params = f'WHERE NOT list_contains(?, "{KEYS[table]}")', [exclude]
    return store.con.execute(
        f'SELECT count(*), coalesce(sum({h}::HUGEINT), 0), coalesce(bit_xor({h}), 0) '
        f'FROM "{table}" {where}', params
    ).fetchall()[0]


@dataclass
class Baseline:
    digests: dict[str, str]
    rows: dict[str, tuple]

    @classmethod
    def take(cls, store: Store) -> Baseline:
        return cls(digests(store), {t: rows_digest(store, t) for t in KEYS})


def same_rows(store: Store, query: str, params: list, expected: pa.Table) -> None:
    """The rows a query returns are exactly the expected table (as a multiset)."""
    got = store.con.sql(query, params=params).to_arrow_table()
    assert got.num_rows == expected.num_rows
    store.con.register("_expected", expected)
    try:
        store.con.register("_got", got)
        cols = ", ".join(expected.column_names)
        for a, b in (("_got", "_expected"), ("_expected", "_got")):
            (extra,) = store.con.execute(
                f"SELECT count(*) FROM (SELECT {cols} FROM {a} EXCEPT ALL SELECT {cols} FROM {b})"
            ).fetchall()[0]
            assert extra == 0
    finally:
        store.con.unregister("_expected")
        store.con.unregister("_got")


def assert_complete(store: Store, before: Baseline, exp: Expected, label: str) -> None:
    """The store holds exactly the previous content plus the whole import: nothing partial."""
    touched: dict[str, list[str]] = {"imports": []}
    for run_id, (data, path) in exp.runs.items():
        touched.setdefault("runs", []).append(run_id)
        touched.setdefault("run_results", []).append(run_id)
        touched["imports"].append(sha256_of(path))
        row = store.con.execute(
            "SELECT n_rows, n_topics, source FROM runs WHERE run_id = ?", [run_id]
        ).fetchall()[0]
        assert row == (data.table.num_rows, data.n_topics, str(path)), label
        same_rows(store, "SELECT query_id, doc_id, rank, score FROM run_results WHERE run_id = ?",
                  [run_id], data.table)
    if exp.qrels:
        name, table, path = exp.qrels
        touched["qrels"] = touched["qrels_versions"] = [name]
        touched["imports"].append(sha256_of(path))
        row = store.con.execute(
            "SELECT n_rows, source FROM qrels_versions WHERE name = ?", [name]
        ).fetchall()[0]
        assert row == (table.num_rows, str(path)), label
        same_rows(store, "SELECT query_id, doc_id, relevance FROM qrels WHERE version = ?",
                  [name], table)
    if exp.docs:
        ids, path = exp.docs
        touched["documents"] = ids
        touched["imports"].append(sha256_of(path))
        (n,) = store.con.execute(
            "SELECT count(*) FROM documents WHERE list_contains(?, doc_id)", [ids]
        ).fetchall()[0]
        assert n == len(ids), label
    (n_imports,) = store.con.execute(
        "SELECT count(*) FROM imports WHERE list_contains(?, sha256)", [touched["imports"]]
    ).fetchall()[0]
    assert n_imports == len(touched["imports"]), label
    now = digests(store)
    for table in DATA_TABLES:
        if table in touched:
            assert rows_digest(store, table, touched[table]) == before.rows[table], (
                f"{label}: rows of {table} that were there before have changed"
            )
        else:
            assert now[table] == before.digests[table], f"{label}: {table} changed"


def check_after_kill(path: Path, before: Baseline, kill: Kill) -> tuple[str, Baseline]:
    """Open the killed store and classify it: unchanged, or (after COMMIT only) complete.

    A reader opens it (as `pooling info` would); the next import in the loop is the writer
    that recovers it, and `check_writer_agrees` opens it for writing at the end of a group.
    """
    now = read_digests(path)
    if now == before.digests:
        return "unchanged", before
    changed = sorted(t for t in DATA_TABLES if now[t] != before.digests[t])
    assert kill.kind == "commit" and kill.spec != "commit:0", (
        f"{kill.label}: killed before COMMIT, yet tables changed: {changed}"
    )
    with Store(path) as s:
        assert digests(s) == now, f"{kill.label}: a reader and a writer see different content"
        assert_complete(s, before, kill.expected, kill.label)
        return "complete", Baseline.take(s)


def check_writer_agrees(path: Path, before: Baseline) -> None:
    with Store(path) as s:
        assert digests(s) == before.digests


def build_kills(d: Path, store_a: Path, store_b: Path) -> tuple[list[Kill], list[Kill]]:
    """Every kill point, in two groups (one store each), with the files generated here."""
    a: list[Kill] = []  # general path, qrels, documents
    b: list[Kill] = []  # fast path, several files

    def runs(*files: tuple[Path, str, RunData]) -> Expected:
        return Expected(runs={run_id: (data, path) for path, run_id, data in files})

    # General path (gzip), several chunks: kill after chunk 1, after chunk 3 and after the last.
    big_rows = 3 * CHUNK_ROWS + 5_000
    big = make_run(big_rows, "g")
    big_gz = write(d / "big.gz", big.text("big_gz"), gz=True)
    for n, where in ((1, "after chunk 1"), (2 * CHUNK_ROWS + 1, "after chunk 3"),
                     (big_rows, "after the last chunk")):
        a.append(Kill(f"gzip {big_rows:,} rows, rows:{n} ({where})", "rows", f"rows:{n}",
                      ["import", "runs", store_a, big_gz], runs((big_gz, "big_gz", big))))

    # Fast path (plain text, one statement): killed after the statement; the larger file
    # is big enough for DuckDB to write row groups into the file before COMMIT.
    medium = make_run(100_000, "f")
    large = make_run(300_000, "h")
    for run_id, data in (("fast_medium", medium), ("fast_large", large)):
        path = write(d / f"{run_id}.txt", data.text(run_id))
        b.append(Kill(f"plain {data.table.num_rows:,} rows, rows:1", "rows", "rows:1",
                      ["import", "runs", store_b, path], runs((path, run_id, data))))
    # The fast path's rows are undone (a repeated doc; a line with two spaces, which only the
    # general reader accepts) and the general path inserts the file: kill before the undo, and
    # after the general path's insert.
    dup_data = medium.head(2_000)
    dup = write(d / "dup.txt", dup_data.text("dup") + f"{medium.body[10]} dup\n")
    b.append(Kill("plain with a repeat, --dedupe first, rows:1 (fast read, before undo)", "rows",
                  "rows:1", ["import", "runs", store_b, dup, "--dedupe", "first"],
                  runs((dup, "dup", dup_data))))
    odd_data = medium.head(2_001)
    odd_lines = odd_data.text("odd").splitlines(keepends=True)
    odd_lines[-1] = odd_lines[-1].replace(" Q0 ", "  Q0 ")
    odd = write(d / "odd.txt", "".join(odd_lines))
    for n, where in ((1, "fast read, before undo"), (2_001, "general path, after the fast one")):
        b.append(Kill(f"plain with a double space, rows:{n} ({where})", "rows", f"rows:{n}",
                      ["import", "runs", store_b, odd], runs((odd, "odd", odd_data))))

    # Several files in one call: plain 2,000 rows, gzip 3,000 rows, plain 5,000 rows.
    m = [make_run(n, f"m{i}") for i, n in enumerate((2_000, 3_000, 5_000), start=1)]

    def three_files(prefix: str) -> tuple[list[Path], Expected]:
        files = [write(d / f"{prefix}{i}.{'gz' if i == 2 else 'txt'}", r.text(f"{prefix}{i}"),
                       gz=(i == 2)) for i, r in enumerate(m, start=1)]
        return files, runs(*((p, f"{prefix}{i}", r)
                             for i, (p, r) in enumerate(zip(files, m, strict=True), start=1)))

    m_files, m_expected = three_files("m")
    for n, where in ((2_000, "in file 1"), (2_500, "after file 1, in file 2"),
                     (4_000, "after files 1 and 2, in file 3")):
        b.append(Kill(f"3 files, rows:{n} ({where})", "rows", f"rows:{n}",
                      ["import", "runs", store_b, *m_files], m_expected))

    # Qrels and documents.
    q_text, q_table = make_qrels(20_000, "q")
    qrels2 = write(d / "qrels2.txt", q_text)
    a.append(Kill("qrels 20,000 rows, rows:1", "rows", "rows:1",
                  ["import", "qrels", store_a, qrels2], Expected(qrels=("qrels2", q_table, qrels2))))
    docs2 = write(d / "docs2.jsonl", make_docs(25_000, "new"))
    a.append(Kill("docs 25,000 (3 batches), rows:20000", "rows", "rows:20000",
                  ["import", "docs", store_a, docs2],
                  Expected(docs=([f"new{i}" for i in range(25_000)], docs2))))

    # Kills during COMMIT; each import has its own content and run_id, so one that completed
    # does not turn the next into "already imported".
    for ms in FAST_COMMIT_DELAYS:
        run_id = f"c_fast_{ms}"
        path = write(d / f"{run_id}.txt", medium.text(run_id))
        b.append(Kill(f"plain 100,000 rows, commit:{ms}", "commit", f"commit:{ms}",
                      ["import", "runs", store_b, path], runs((path, run_id, medium))))
    for ms in LARGE_COMMIT_DELAYS:
        run_id = f"c_large_{ms}"
        path = write(d / f"{run_id}.txt", large.text(run_id))
        b.append(Kill(f"plain 300,000 rows, commit:{ms}", "commit", f"commit:{ms}",
                      ["import", "runs", store_b, path], runs((path, run_id, large))))
    for ms in MULTI_COMMIT_DELAYS:
        files, expected = three_files(f"cm{ms}_")
        b.append(Kill(f"3 files, commit:{ms}", "commit", f"commit:{ms}",
                      ["import", "runs", store_b, *files], expected))
    for ms in GZIP_COMMIT_DELAYS:
        run_id = f"c_gz_{ms}"
        path = write(d / f"{run_id}.gz", medium.text(run_id), gz=True)
        a.append(Kill(f"gzip 100,000 rows, commit:{ms}", "commit", f"commit:{ms}",
                      ["import", "runs", store_a, path], runs((path, run_id, medium))))
    for ms in QRELS_COMMIT_DELAYS:
        text, table = make_qrels(20_000, f"cq{ms}_")
        path = write(d / f"cq{ms}.txt", text)
        a.append(Kill(f"qrels 20,000 rows, commit:{ms}", "commit", f"commit:{ms}",
                      ["import", "qrels", store_a, path], Expected(qrels=(f"cq{ms}", table, path))))
    return a, b


def run_kills(store: Path, kills: list[Kill]) -> list[tuple[Kill, str, float]]:
    """Kill one import after another on the same store, checking the store after each."""
    with Store(store, read_only=True) as s:
        before = Baseline.take(s)
    results = []
    for kill in kills:
        started = time.monotonic()
        proc = run_pooling(*kill.args, kill_at=kill.spec)
        assert proc.returncode == -signal.SIGKILL, (
            f"{kill.label}: expected death by SIGKILL, got exit code {proc.returncode}\n"
            f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
        )
        outcome, before = check_after_kill(store, before, kill)
        results.append((kill, outcome, time.monotonic() - started))
    check_writer_agrees(store, before)
    return results


@pytest.mark.slow
def test_killed_imports_leave_the_store_unchanged_or_complete(base_store, tmp_path):
    store_a = copy_store(base_store, tmp_path / "a.db")
    store_b = copy_store(base_store, tmp_path / "b.db")
    group_a, group_b = build_kills(tmp_path, store_a, store_b)
    # Two stores, killed in two threads at once (each one import at a time).
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(run_kills, store_a, group_a), pool.submit(run_kills, store_b, group_b)]
        results = [r for f in futures for r in f.result()]

    outcomes = Counter((kill.kind, outcome) for kill, outcome, _ in results)
    print("", *(f"{k.label:62} {o:9} {t:5.2f}s" for k, o, t in results),
          f"outcomes: {dict(outcomes)}", sep="\n")
    kinds = Counter(kill.kind for kill, _, _ in results)
    assert sum(kinds.values()) >= 20
    assert outcomes["rows", "unchanged"] == kinds["rows"] >= 10  # never complete, never partial
    assert outcomes["commit", "unchanged"] + outcomes["commit", "complete"] == kinds["commit"]
    assert kinds["commit"] >= 15  # every one of them died by SIGKILL (checked in run_kills)
    # Kills armed with a delay that still found the store unchanged landed inside COMMIT.
    inside = sum(1 for k, o, _ in results
                 if k.kind == "commit" and k.spec != "commit:0" and o == "unchanged")
    print(f"commit kills: {kinds['commit']}, with a delay: "
          f"{sum(k.kind == 'commit' and k.spec != 'commit:0' for k, _, _ in results)}, "
          f"of which inside COMMIT: {inside}")
    assert inside >= 3

    # After all those crashes the stores still take imports, and the killed ones now finish.
    for args in (["import", "runs", store_a, tmp_path / "c_gz_0.gz"],
                 ["import", "qrels", store_a, tmp_path / "qrels2.txt"],
                 ["import", "runs", store_b, tmp_path / "fast_medium.txt"],
                 ["import", "runs", store_b, tmp_path / "m1.txt", tmp_path / "m2.gz",
                  tmp_path / "m3.txt"]):
        proc = run_pooling(*args)
        assert proc.returncode == 0, proc.stderr
    with Store(store_a, read_only=True) as s:
        assert s.one("n", "SELECT n_rows FROM runs WHERE run_id = 'c_gz_0'") == (100_000,)
        assert s.one("n", "SELECT n_rows FROM qrels_versions WHERE name = 'qrels2'") == (20_000,)
    with Store(store_b, read_only=True) as s:
        for run_id, n in {"fast_medium": 100_000, "m1": 2_000, "m2": 3_000, "m3": 5_000}.items():
            assert s.one("n", "SELECT n_rows FROM runs WHERE run_id = ?", [run_id]) == (n,)


# -- 2. failed imports leave no trace ----------------------------------------------------------
def good_run(d: Path, name: str, tag: str, prefix: str, *, gz: bool = False) -> Path:
    return write(d / name, make_run(500, prefix).text(tag), gz=gz)


def with_bad_line(d: Path, name: str, tag: str, bad: str, *, gz: bool = False) -> Path:
    """A 500-line run whose line 57 is replaced by `bad`."""
    lines = make_run(500, "x").text(tag).splitlines(keepends=True)
    lines[56] = bad + "\n"
    return write(d / name, "".join(lines), gz=gz)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("inputs")
    good_run(d, "g1.txt", "g1", "a")
    good_run(d, "g3.txt", "g3", "c")
    good_run(d, "g4.gz", "g4", "e", gz=True)
    good_run(d, "after.txt", "after", "z")
    for ext, gz in (("txt", False), ("gz", True)):
        with_bad_line(d, f"short.{ext}", "short", "3 Q0 x3_6 7 999.9", gz=gz)
        with_bad_line(d, f"badrank.{ext}", "badrank", "3 Q0 x3_6 seven 999.9 badrank", gz=gz)
        with_bad_line(d, f"nanscore.{ext}", "nanscore", "3 Q0 x3_6 7 nan nanscore", gz=gz)
        with_bad_line(d, f"repeat.{ext}", "repeat", "1 Q0 x1_0 57 1.5 repeat", gz=gz)
    good_run(d, "twin_a.txt", "twin", "t")
    good_run(d, "twin_b.txt", "twin", "u")
    good_run(d, "base_again.txt", "base", "b")
    write(d / "unknown_topic.txt", "".join(
        f"{q} Q0 y{q}_{r} {r + 1} {10 - r} unknown\n" for q in (1, 2, 999) for r in range(5)))
    write(d / "two_tags.txt", "1 Q0 s1 1 2.0 newtag\n1 Q0 s2 1 2.0 base\n")
    write(d / "qrels_bad.txt", make_qrels(300, "k")[0] + "7 0 k7_99\n" + make_qrels(10, "l")[0])
    write(d / "qrels_repeat.txt", make_qrels(300, "k")[0] + "1 0 k1_0 2\n")
    write(d / "qrels_new.txt", make_qrels(300, "k")[0])
    write(d / "topics_changed.tsv", "".join(
        f"{q}\t{'a changed title' if q == 7 else f'topic number {q}'}\n" for q in range(1, 80)))
    write(d / "docs_bad_end.jsonl", make_docs(15_000, "late") + "{not json\n")
    return d


FAILURES = {
    # id: (call(store, dir), expected error, message fragment)
    "bad line in 2nd of 3 files (plain)": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "short.txt", d / "g3.txt"]),
        FormatError, "short.txt:57"),
    "bad line in 2nd of 3 files (gzip)": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "short.gz", d / "g3.txt"]),
        FormatError, "short.gz:57"),
    "non-integer rank in 2nd of 3 files (plain)": (
        lambda s, d: s.import_runs([d / "g4.gz", d / "badrank.txt", d / "g3.txt"]),
        FormatError, "badrank.txt:57"),
    "NaN score in 2nd of 3 files (plain)": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "nanscore.txt", d / "g3.txt"]),
        FormatError, "nanscore.txt:57"),
    "NaN score in 2nd of 3 files (gzip)": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "nanscore.gz", d / "g3.txt"]),
        FormatError, "nanscore.gz:57"),
    "same run_id from two files in one call": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "twin_a.txt", d / "twin_b.txt"]),
        StoreError, "twin"),
    "run_id already in the store": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "base_again.txt"]),
        StoreError, "'base' already exists"),
    "--name already in the store": (
        lambda s, d: s.import_runs([d / "g1.txt"], name="base"),
        StoreError, "'base' already exists"),
    "--split-by-tag with a tag that is already a run": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "two_tags.txt"], split_by_tag=True),
        StoreError, "'base'"),
    "repeated (query_id, doc_id) without dedupe, 2nd of 2 files (plain)": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "repeat.txt"]),
        FormatError, "repeat.txt:57"),
    "repeated (query_id, doc_id) without dedupe, 2nd of 2 files (gzip)": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "repeat.gz"]),
        FormatError, "repeat.gz:57"),
    "--strict with topics the store lacks, 2nd of 2 files": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "unknown_topic.txt"], strict=True),
        StoreError, "999"),
    "a missing file among the files": (
        lambda s, d: s.import_runs([d / "g1.txt", d / "no_such_run.txt"]),
        StoreError, "no_such_run.txt: no such file"),
    "qrels with a malformed line": (
        lambda s, d: s.import_qrels(d / "qrels_bad.txt"), FormatError, "qrels_bad.txt:301"),
    "qrels judging a pair twice": (
        lambda s, d: s.import_qrels(d / "qrels_repeat.txt"), FormatError, "qrels_repeat.txt:301"),
    "qrels version name already in the store": (
        lambda s, d: s.import_qrels(d / "qrels_new.txt", name="qrels"), StoreError, "qrels"),
    "topics changing a stored topic": (
        lambda s, d: s.import_topics(d / "topics_changed.tsv"), StoreError, "query_id: 7"),
    "documents with a bad line after the first batch was written": (
        lambda s, d: s.import_documents(d / "docs_bad_end.jsonl"), FormatError,
        "docs_bad_end.jsonl:15001"),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_failed_import_leaves_no_trace(case, base_store, inputs, tmp_path):
    call, error, fragment = FAILURES[case]
    path = copy_store(base_store, tmp_path / "store.db")
    with Store(path) as s:
        before = digests(s)
        with pytest.raises(error) as info:
            call(s, inputs)
        assert isinstance(info.value, PoolingError)
        assert fragment in str(info.value), str(info.value)
        assert digests(s) == before, f"{case}: the failed import left rows behind"
        # The connection is not left inside a transaction: the next import works.
        report = s.import_runs([inputs / "after.txt"])
        assert [(i.run_id, i.status, i.n_rows) for i in report.items] == [
            ("after", "imported", 500)]
    after = read_digests(path)
    changed = sorted(t for t in DATA_TABLES if after[t] != before[t])
    assert changed == ["imports", "run_results", "runs"]  # only the one good import
    with Store(path, read_only=True) as s:
        assert s.run_ids() == ["after", "base"]


# -- 3. a store held by another process --------------------------------------------------------
HOLDER = (
    "import duckdb, sys, time\n"
    "con = duckdb.connect(sys.argv[1])\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n"
)


def assert_refused(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)


def test_store_held_by_another_process(base_store, inputs, tmp_path):
    path = copy_store(base_store, tmp_path / "held.db")
    before = read_digests(path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
        pid = str(holder.pid)

        # Plain holder: its pid, its command line, and what to do.
        for args in (["info", path], ["import", "runs", path, inputs / "g1.txt"]):
            assert_refused(run_pooling(*args), f"pid {pid}", "open in another process",
                           "stop it", "try again")

        # Held by `pooling serve` (it leaves <store>.server.json beside the store): without
        # organiser credentials the command names the server and says how to get them.
        server_file = path.with_name(path.name + ".server.json")
        server_file.write_text(json.dumps({"pid": holder.pid, "url": "http://127.0.0.1:8000"}))
        for args in (["info", path], ["import", "runs", path, inputs / "g1.txt"],
                     ["import", "qrels", path, inputs / "qrels_new.txt"]):
            assert_refused(run_pooling(*args), "pooling serve", f"pid {pid}",
                           "http://127.0.0.1:8000", "organiser credentials", "--token")
    finally:
        holder.kill()
        holder.wait(timeout=10)
        holder.stdout.close()
        holder.stderr.close()
    assert holder.returncode == -signal.SIGKILL

    # The holder is gone (its server file is now stale): the store is as it was, and usable.
    assert read_digests(path) == before
    proc = run_pooling("info", path)
    assert proc.returncode == 0, proc.stderr
    proc = run_pooling("import", "runs", path, inputs / "g1.txt")
    assert proc.returncode == 0, proc.stderr
    with Store(path, read_only=True) as s:
        assert s.run_ids() == ["base", "g1"]


def test_store_held_by_a_reader_blocks_only_writers(base_store, inputs, tmp_path):
    path = copy_store(base_store, tmp_path / "read.db")
    before = read_digests(path)
    reader = subprocess.Popen(
        [sys.executable, "-c", HOLDER.replace("connect(sys.argv[1])",
                                              "connect(sys.argv[1], read_only=True)"), str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "ready", reader.stderr.read()
        proc = run_pooling("info", path)
        assert proc.returncode == 0, proc.stderr  # readers share the file
        assert_refused(run_pooling("import", "runs", path, inputs / "g1.txt"),
                       f"pid {reader.pid}", "stop it")
    finally:
        reader.kill()
        reader.wait(timeout=10)
        reader.stdout.close()
        reader.stderr.close()
    assert read_digests(path) == before
