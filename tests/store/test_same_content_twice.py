"""The same content imported again: "already imported" when no new name is asked for, and
refused, naming what holds it, when a name is (`--name`, a `--meta` run_id) that the content
was never imported as; `--allow-copy` stores it again under that name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pooling.errors import StoreError
from pooling.store import Store
from pooling.store.runs import read_run_meta

RUN = "1 Q0 d1 1 3.0 alpha\n1 Q0 d2 2 2.0 alpha\n2 Q0 d3 1 1.5 alpha\n"
QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def store(tmp_path):
    s = Store.create(tmp_path / "c.duckdb")
    yield s
    s.close()


def pooling(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, check=False)


def test_a_run_file_again_without_a_name_is_already_imported(store, tmp_path):
    path = write(tmp_path / "runs/a.txt", RUN)
    store.import_runs([path])
    (again,) = store.import_runs([path]).items
    assert (again.status, again.run_id) == ("already imported", "alpha")
    (named_as_before,) = store.import_runs([path], name="alpha").items
    assert named_as_before.status == "already imported"
    assert store.run_ids() == ["alpha"]


def test_a_run_file_again_under_a_new_name_is_refused_naming_the_run_that_holds_it(store, tmp_path):
    path = write(tmp_path / "runs/a.txt", RUN)
    store.import_runs([path])
    with pytest.raises(StoreError) as info:
        store.import_runs([path], name="Y")
    message = str(info.value)
    assert f"{path} has the same content as run 'alpha', imported from {path} at " in message
    assert "run 'Y' was not made: use run 'alpha', or pass --allow-copy to store it again as 'Y'" in message
    assert store.run_ids() == ["alpha"]


def test_allow_copy_stores_the_same_run_again_under_the_new_name(store, tmp_path):
    path = write(tmp_path / "runs/a.txt", RUN)
    store.import_runs([path])
    (copy,) = store.import_runs([path], name="Y", allow_copy=True).items
    assert (copy.status, copy.run_id, copy.n_rows) == ("imported", "Y", 3)
    assert store.run_table("Y").equals(store.run_table("alpha"))
    # Each name is now idempotent on its own.
    assert store.import_runs([path], name="Y").items[0].status == "already imported"
    assert store.import_runs([path]).items[0].status == "already imported"
    assert store.run_ids() == ["Y", "alpha"]


def test_a_meta_run_id_the_content_was_not_imported_as_is_refused(store, tmp_path):
    path = write(tmp_path / "runs/a.txt", RUN)
    store.import_runs([path])
    meta = write(tmp_path / "runs.tsv", "file\trun_id\tteam\tdescription\nruns/a.txt\tA1\tt\td\n")
    with pytest.raises(StoreError, match="run 'A1' was not made: use run 'alpha'"):
        store.import_runs([path], meta=read_run_meta(meta))
    assert store.run_ids() == ["alpha"]


def test_two_files_of_one_content_named_apart_in_one_call_are_refused_or_both_stored(store, tmp_path):
    a = write(tmp_path / "runs/a.txt", RUN)
    b = write(tmp_path / "runs/b.txt", RUN)
    meta = read_run_meta(write(tmp_path / "runs.tsv", "file\trun_id\tteam\tdescription\n"
                               "runs/a.txt\tA1\tt\td\nruns/b.txt\tB1\tt\td\n"))
    with pytest.raises(StoreError) as info:
        store.import_runs([a, b], meta=meta)
    assert f"{b} has the same content as {a} (run 'A1' of this import); run 'B1' was not made" in str(info.value)
    assert store.run_ids() == []
    report = store.import_runs([a, b], meta=meta, allow_copy=True)
    assert [(i.run_id, i.status) for i in report.items] == [("A1", "imported"), ("B1", "imported")]


def test_an_in_memory_run_with_content_stored_under_another_id_is_refused(store):
    import pandas as pd

    frame = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0],
                          "tag": ["sys", "sys"]})
    store.import_run(frame, "first")
    with pytest.raises(StoreError, match="run 'second' was not made: use run 'first'"):
        store.import_run(frame, "second")
    assert store.import_run(frame, "second", allow_copy=True).items[0].status == "imported"


def test_a_qrels_file_again_under_a_new_name_is_refused_unless_copied(store, tmp_path):
    path = write(tmp_path / "q.txt", QRELS)
    store.import_qrels(path, name="v1")
    assert store.import_qrels(path).status == "already imported"
    assert store.import_qrels(path, name="v1").status == "already imported"
    with pytest.raises(StoreError) as info:
        store.import_qrels(path, name="v2")
    assert (f"{path} has the same content as qrels version 'v1', imported from {path} at "
            in str(info.value))
    assert ("qrels version 'v2' was not made: use qrels version 'v1', or pass --allow-copy to "
            "store it again as 'v2'" in str(info.value))
    assert store.qrels_versions() == ["v1"]
    copy = store.import_qrels(path, name="v2", allow_copy=True)
    assert (copy.status, copy.n_rows) == ("imported", 3)
    assert store.qrels_table("v2").equals(store.qrels_table("v1"))
    assert store.import_qrels(path, name="v2").status == "already imported"


def test_the_cli_exits_1_for_a_refused_new_name_and_0_for_the_same_file_again(tmp_path):
    store = tmp_path / "s.duckdb"
    run = write(tmp_path / "runs/a.txt", RUN)
    qrels = write(tmp_path / "q.txt", QRELS)
    assert pooling("init", store).returncode == 0
    assert pooling("import", "runs", store, run).returncode == 0
    assert pooling("import", "qrels", store, qrels, "--name", "v1").returncode == 0

    again = pooling("import", "runs", store, run)
    assert (again.returncode, again.stdout.strip()) == (0, f"{run}: already imported as run alpha")
    refused = pooling("import", "runs", store, run, "--name", "Y")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "--allow-copy to store it again as 'Y'" in refused.stderr
    copied = pooling("import", "runs", store, run, "--name", "Y", "--allow-copy")
    assert copied.returncode == 0 and f"{run}: imported run Y" in copied.stdout

    again = pooling("import", "qrels", store, qrels)
    assert (again.returncode, again.stdout.strip()) == (0, f"{qrels}: already imported as qrels version v1")
    refused = pooling("import", "qrels", store, qrels, "--name", "v2")
    assert refused.returncode == 1 and "has the same content as qrels version 'v1'" in refused.stderr
    copied = pooling("import", "qrels", store, qrels, "--name", "v2", "--allow-copy")
    assert copied.returncode == 0 and "imported qrels version v2" in copied.stdout
