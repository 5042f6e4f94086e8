"""An organiser session on a served store makes the judging pages forget what they hold only
when it must: after a commit (or an autocommit write) to a table the pages read."""

from __future__ import annotations

import duckdb
import pytest

from pooling.web.session_writes import SessionWrites, tables_written
from pooling.web.store_api import _run, _Session


@pytest.mark.parametrize(("statement", "tables"), [
    ("SELECT * FROM judgments", set()),
    ("INSERT INTO judge_calls VALUES (1)", {"judge_calls"}),
    ("insert or ignore into Judgments (a) values (1)", {"judgments"}),
    ('INSERT INTO "rounds" SELECT * FROM x', {"rounds"}),
    ("WITH x AS (SELECT 1) INSERT INTO eval_results SELECT * FROM x", {"eval_results"}),
    ("UPDATE assignments SET doc_id = NULL", {"assignments"}),
    ("DELETE FROM qrels WHERE version = 'a'", {"qrels"}),
    ("CREATE TEMP TABLE batch AS SELECT 1", set()),
    ("CREATE OR REPLACE TEMPORARY TABLE b AS SELECT 1", set()),
    ("CREATE TABLE IF NOT EXISTS main.topics (a INT)", {"topics"}),
    ("DROP TABLE IF EXISTS pool_entries", {"pool_entries"}),
    ("CHECKPOINT", set()),
    ("SET threads = 1", set()),
])
def test_the_tables_a_statement_writes_are_named(statement, tables):
    assert tables_written(statement) == frozenset(tables)


def test_a_statement_whose_target_cannot_be_told_counts_as_writing_everything():
    assert tables_written("VACUUM") is None
    assert tables_written("this is not sql") is None


NOTHING = frozenset()


def test_writes_in_a_transaction_count_at_commit_only():
    writes = SessionWrites()
    assert writes.ran("BEGIN") == NOTHING
    assert writes.ran("INSERT INTO judgments VALUES (1)") == NOTHING
    assert writes.ran("INSERT INTO rounds VALUES (1)") == NOTHING
    assert writes.ran("COMMIT") == {"judgments", "rounds"}
    assert writes.ran("INSERT INTO judgments VALUES (1)") == {"judgments"}  # autocommit: visible now


def test_a_rolled_back_transaction_changes_nothing_the_pages_hold():
    writes = SessionWrites()
    writes.ran("BEGIN TRANSACTION")
    writes.ran("INSERT INTO assignments VALUES (1)")
    assert writes.ran("ROLLBACK") == NOTHING
    assert writes.ran("COMMIT") == NOTHING


def test_commits_to_tables_the_pages_never_read_keep_their_memory():
    writes = SessionWrites()
    for table in ("judge_calls", "eval_results", "run_results", "qrels"):
        writes.ran("BEGIN")
        writes.ran(f"INSERT INTO {table} VALUES (1)")
        assert writes.ran("COMMIT") == NOTHING
    assert writes.ran("INSERT INTO judge_calls VALUES (1)") == NOTHING


def test_the_server_drops_the_pages_memory_once_per_commit_that_changed_what_they_read():
    con = duckdb.connect()
    con.execute("CREATE TABLE judgments (a INT); CREATE TABLE judge_calls (a INT)")
    session = _Session(con.cursor(), "hash", "ann")
    dropped: list[str] = []

    def run(sql: str, many: bool = False, params=None) -> None:
        _run(session, sql, params, 1024, lambda tables: dropped.append(sql), many)

    run("BEGIN")
    run("INSERT INTO judge_calls VALUES (1)")
    run("INSERT INTO judgments VALUES (?)", many=True, params=[[1], [2]])
    run("INSERT INTO judgments VALUES (3) RETURNING a")
    assert dropped == []  # nothing is visible before the commit
    run("COMMIT")
    assert dropped == ["COMMIT"]
    run("INSERT INTO judge_calls VALUES (?)", many=True, params=[[1], [2]])
    run("SELECT count(*) FROM judgments")
    assert dropped == ["COMMIT"]
    run("INSERT INTO judgments VALUES (4) RETURNING a")
    assert dropped == ["COMMIT", "INSERT INTO judgments VALUES (4) RETURNING a"]
    assert con.execute("SELECT count(*) FROM judgments").fetchone() == (4,)


def test_several_statements_in_one_text_are_each_accounted_for():
    writes = SessionWrites()
    assert writes.ran("BEGIN; INSERT INTO judge_calls VALUES (1); COMMIT") == NOTHING
    assert writes.in_transaction is False
    assert writes.ran("UPDATE assessors SET name = 'x'") == {"assessors"}  # autocommit, seen at once
    assert writes.ran("BEGIN; INSERT INTO judgments VALUES (1); COMMIT") == {"judgments"}
    assert writes.ran("BEGIN; VACUUM; COMMIT") is None  # which tables: cannot be told


def test_comments_and_string_values_do_not_fool_the_accounting():
    writes = SessionWrites()
    writes.ran("BEGIN")
    writes.ran("INSERT INTO rounds VALUES (1)")
    assert writes.ran("/* done */ COMMIT") == {"rounds"}
    assert tables_written("UPDATE assessors SET name = 'INSERT INTO runs'") == {"assessors"}
    assert tables_written("COPY (SELECT * FROM judgments) TO 'out.csv'") == frozenset()


def test_a_commit_that_fails_ends_the_transaction():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INT PRIMARY KEY)")
    session = _Session(con.cursor(), "hash", "ann")
    other = con.cursor()
    dropped: list[str] = []

    def run(sql: str) -> None:
        _run(session, sql, None, 1024, lambda tables: dropped.append(sql))

    run("BEGIN")
    run("INSERT INTO t VALUES (1)")
    other.execute("INSERT INTO t VALUES (1)")  # commits first: ours conflicts at COMMIT
    with pytest.raises(duckdb.Error):
        run("COMMIT")
    assert session.writes.in_transaction is False
    run("INSERT INTO t VALUES (2)")  # autocommit again: the pages hear of it at once
    assert dropped == ["INSERT INTO t VALUES (2)"]



def test_a_subtopic_qrels_version_keeps_the_pages_memory():
    writes = SessionWrites()
    writes.ran("BEGIN")
    writes.ran("INSERT INTO qrels SELECT 1")
    writes.ran("INSERT INTO subtopic_qrels SELECT 1")
    assert writes.ran("COMMIT") == NOTHING
