"""What a release says about how its collection was made is true and safe: simulated workers
are counted apart from people, the organiser chooses the rounds and whether the judgment
history goes out and can tell the real process, ids that clients chose are replaced,
sources are file names, and every value from input is escaped in the Markdown."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from release_data import cli

from pooling.judging.history import Judgment
from pooling.judging.judgments import record
from pooling.store import Store

EVIL_RUN = "x|<script>alert(1)</script>"
EVIL_VERSION = "v|`1`"
EVIL_TITLE = "<script>alert(1)</script> [click](javascript:alert(2)) a|b `c"


@pytest.fixture(scope="module")
def story_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two topics, two runs (one tagged with markup), an expert's qrels read from a relative
    path, a crowd round `trial` played by 5 simulated workers, a round `real` judged by one
    person whose client chose submission ids holding her name, and an automatic judge's
    model calls in both rounds."""
    folder = tmp_path_factory.mktemp("story")
    data = folder / "data"
    data.mkdir()
    (data / "topics.tsv").write_text("1\tfirst topic\n2\tsecond topic\n")
    for tag, offset in (("plain", 0), (EVIL_RUN, 5)):
        lines = [f"{q} Q0 d{q}-{(i + offset) % 30:02d} {i + 1} {30 - i} {tag}"
                 for q in ("1", "2") for i in range(30)]
        (data / f"run{offset}.run").write_text("\n".join(lines) + "\n")
    (data / "expert.qrels").write_text("".join(
        f"{q} 0 d{q}-{i:02d} {i % 3}\n" for q in ("1", "2") for i in range(30)))
    store = folder / "story.duckdb"
    cli("init", store)
    cli("import", "topics", store, data / "topics.tsv")
    cli("import", "runs", store, data / "run0.run", data / "run5.run")
    work = folder / "work"
    work.mkdir()
    # Imported from a path relative to where the organiser stood: only its name is released.
    subprocess.run([sys.executable, "-m", "pooling", "import", "qrels", str(store),
                    "../data/expert.qrels", "--name", EVIL_VERSION], cwd=work, check=True,
                   capture_output=True)
    cli("pool", store, "--round", "trial", "--strategy", "depth", "--depth", "10",
        "--redundancy", "3")
    cli("crowd", "simulate", store, "--round", "trial", "--truth", EVIL_VERSION, "--workers",
        "5", "--seed", "3")
    cli("pool", store, "--round", "real", "--strategy", "depth", "--depth", "5")
    cli("assessors", "add", store, "Jane Doe")
    cli("assign", store, "--round", "real", "--assessors", "jane-doe")
    with Store(store) as s:
        pairs = s.sql("pool", "SELECT query_id, doc_id FROM pool_entries WHERE round_id = 'real' "
                      "ORDER BY query_id, position").fetchall()
        record(s, [Judgment("real", "jane-doe", q, d, k % 3, seconds=10.0,
                            submission_id=f"w2-real-name-jane-doe-{k:04d}")
                   for k, (q, d) in enumerate(pairs)])
        s.sql("judge", "INSERT INTO assessors (assessor_id, name, role, token_sha256, "
              "created_at, kind, backend, model, prompt_sha256) VALUES ('words', 'words', "
              "'assessor', '', now(), 'model', 'openai', 'gpt-x', 'abc123')")
        for round_id, calls in (("trial", 7), ("real", 3)):
            for k in range(calls):
                s.sql("call", "INSERT INTO judge_calls (judge_id, model, query_id, doc_id, "
                      "status, grade, prompt_tokens, completion_tokens, called_at, round_id) "
                      "VALUES ('words', 'gpt-x', '1', ?, 'ok', 1, 100, 10, now(), ?)",
                      [f"d1-{k:02d}", round_id])
    return store


def release(store: Path, out: Path, *options: object) -> Path:
    cli("release", store, out, "--no-pool-bias", "--title", EVIL_TITLE, *options)
    return out


def rows(path: Path) -> list[dict[str, str]]:
    head, *lines = path.read_text().splitlines()
    return [dict(zip(head.split("\t"), line.split("\t"), strict=True)) for line in lines]


def test_simulated_workers_are_their_own_kind_and_never_counted_as_people(story_store,
                                                                          tmp_path):
    with Store(story_store, read_only=True) as s:
        kinds = dict(s.sql("kinds", "SELECT assessor_id, kind FROM assessors").fetchall())
    assert {k for a, k in kinds.items() if a.startswith("worker-")} == {"simulated"}
    assert kinds["jane-doe"] == "person"
    out = release(story_store, tmp_path / "r")
    sheet = (out / "DATASHEET.md").read_text()
    assert "by 1 people, 5 simulated workers and 0 automatic judge(s)" in sheet
    # Only Jane's 10 seconds a judgment are people's time, not the workers' drawn seconds.
    with Store(story_store, read_only=True) as s:
        (n,) = s.one("jane", "SELECT count(*) FROM judgments WHERE assessor_id = 'jane-doe'")
    assert f"{n * 10 / 3600:.2f} hours of people's judging time" in sheet
    judges = rows(out / "judgments" / "assessors.tsv")
    assert sorted(r["kind"] for r in judges) == ["person", *["simulated"] * 5]
    assert {r["assessor_kind"] for r in rows(out / "judgments" / "judgments.tsv")} == {
        "person", "simulated"}


def test_model_calls_are_counted_with_the_judges_that_made_them(story_store, tmp_path):
    sheet = (release(story_store, tmp_path / "r") / "DATASHEET.md").read_text()
    assert ("- Model calls: 10 by 1 automatic judge(s) (0 failed, 1,100 tokens); 1 of these "
            "judges stored no judgment in the released rounds") in sheet


def test_a_round_left_out_is_in_no_file_and_no_figure(story_store, tmp_path):
    out = release(story_store, tmp_path / "r", "--exclude-round", "trial")
    same = release(story_store, tmp_path / "s", "--round", "real")
    for bundle in (out, same):
        rounds = json.loads((bundle / "pool" / "rounds.json").read_text())
        assert [r["round_id"] for r in rounds] == ["real"]
        assert {r["round_id"] for r in rows(bundle / "pool" / "pool.tsv")} == {"real"}
        assert {r["round_id"] for r in rows(bundle / "pool" / "contributions.tsv")} == {"real"}
        assert {r["round_id"] for r in rows(bundle / "judgments" / "judgments.tsv")} == {"real"}
        assert [r["kind"] for r in rows(bundle / "judgments" / "assessors.tsv")] == ["person"]
        sheet = (bundle / "DATASHEET.md").read_text()
        assert "by 1 people, 0 simulated workers" in sheet
        assert "- Model calls: 3 by 1 automatic judge(s)" in sheet
        assert "trial" not in sheet
    assert (out / "pool" / "pool.tsv").read_bytes() == (same / "pool" / "pool.tsv").read_bytes()


def test_an_unknown_round_is_refused_listing_the_rounds(story_store, tmp_path):
    from pooling.release import ReleaseOptions, write_release
    from pooling.release.writer import ReleaseError

    with Store(story_store, read_only=True) as s, pytest.raises(
            ReleaseError, match="no round 'trail' in the store; its rounds are trial, real"):
        write_release(s, tmp_path / "r", ReleaseOptions(exclude_rounds=("trail",)))
    assert list(tmp_path.iterdir()) == []


def test_without_judgments_the_release_holds_qrels_and_pool_and_still_imports(story_store,
                                                                              tmp_path):
    out = release(story_store, tmp_path / "r", "--no-judgments")
    assert not (out / "judgments").exists()
    assert not (out / "data" / "judgments.parquet").exists()
    manifest = json.loads((out / "release.json").read_text())
    assert manifest["assessors"] == [] and manifest["judgments"] is False
    assert "judgment history itself is not part of this release" in (
        out / "DATASHEET.md").read_text()
    rebuilt = tmp_path / "rebuilt.duckdb"
    cli("import", "release", rebuilt, out)
    with Store(rebuilt, read_only=True) as b:
        assert b.one("none", "SELECT count(*) FROM judgments") == (0,)
        assert b.qrels_versions() == [EVIL_VERSION]


def test_ids_clients_chose_are_replaced_by_the_same_sequence_in_every_release(story_store,
                                                                              tmp_path):
    one = release(story_store, tmp_path / "one")
    two = release(story_store, tmp_path / "two", "--runs", "none")
    for bundle in (one, two):
        for path in bundle.rglob("*"):
            if path.is_file():
                assert b"jane" not in path.read_bytes().lower(), path
    ids = [r["submission_id"] for r in rows(one / "judgments" / "judgments.tsv")]
    assert ids == [f"submission-{k}" for k in range(1, len(ids) + 1)]
    assert pq.read_table(one / "data" / "judgments.parquet")["submission_id"].to_pylist() == ids
    assert (one / "judgments" / "judgments.tsv").read_bytes() == (
        two / "judgments" / "judgments.tsv").read_bytes()


def test_where_an_input_came_from_is_released_as_its_file_name(story_store, tmp_path):
    out = release(story_store, tmp_path / "r")
    manifest = json.loads((out / "release.json").read_text())
    assert [v["source"] for v in manifest["qrels_versions"]] == ["expert.qrels"]
    for name in ("release.json", "DATASHEET.md", "README.md"):
        assert "../" not in (out / name).read_text() and str(tmp_path) not in (
            out / name).read_text()
    assert {r["source"] for r in pq.read_table(out / "data" / "topics.parquet").to_pylist()} \
        == {"topics.tsv"}


UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
LINK = re.compile(r"(?<!\\)\[([^\]]*)(?<!\\)\]\(")  # a Markdown link's text, unescaped


def test_values_from_input_are_escaped_in_the_datasheet_and_the_card(story_store, tmp_path):
    out = tmp_path / "r"
    cli("release", story_store, out, "--title", EVIL_TITLE)  # with the pool-bias table
    for name in ("DATASHEET.md", "README.md"):
        text = (out / name).read_text()
        body = text.split("---\n", 2)[-1] if name == "README.md" else text
        assert "<script" not in body
        assert set(LINK.findall(body)) <= {"DATASHEET.md", "CITATION.cff"}  # the card's own
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
        assert "v\\|\\`1\\`" in body  # the version's name, as text
    sheet = (out / "DATASHEET.md").read_text()
    table = [line for line in sheet.splitlines() if line.startswith("| ")]
    assert any("x\\|&lt;script&gt;" in line for line in table)  # the run in the bias table
    widths = {}
    for line in table:
        widths.setdefault(line.split(" ")[1], set()).add(len(UNESCAPED_PIPE.findall(line)))
    assert all(len(w) == 1 for w in widths.values())  # no row breaks out of its table
    bias = [line for line in table if "&lt;script&gt;" in line]
    assert bias and all(len(UNESCAPED_PIPE.findall(line)) == 6 for line in bias)


def test_the_organisers_account_goes_into_the_datasheet_without_scripts(story_store,
                                                                        tmp_path):
    account = tmp_path / "process.md"
    account.write_text("### How the collection was really made\n\nCLEF's assessors judged "
                       "the top 60 of every run. <script>alert(1)</script>\n"
                       "[details](JavaScript:alert(1)) and [the site](https://clef.org).\n")
    out = release(story_store, tmp_path / "r", "--process", account)
    sheet = (out / "DATASHEET.md").read_text().split("## Collection process: the pool")[0]
    assert "## Collection process: the organisers' account" in sheet
    assert "### How the collection was really made" in sheet
    assert "CLEF's assessors judged the top 60 of every run." in sheet
    assert "[the site](https://clef.org)" in sheet
    account_part = sheet.split("the organisers' account")[1]
    assert "<script" not in account_part and "&lt;script&gt;" in account_part
    assert "[details](JavaScript-alert(1))" in account_part  # a link to nowhere, no script
    assert not re.search(r"javascript\s*:", account_part, re.IGNORECASE)


def test_an_account_that_cannot_be_read_is_refused_naming_the_file(story_store, tmp_path):
    missing = tmp_path / "nowhere.md"
    result = subprocess.run([sys.executable, "-m", "pooling", "release", str(story_store),
                             str(tmp_path / "r"), "--process", str(missing)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert f"{missing}: cannot be read" in result.stderr and "Traceback" not in result.stderr
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"first line\nCaf\xe9\n")
    result = subprocess.run([sys.executable, "-m", "pooling", "release", str(story_store),
                             str(tmp_path / "r"), "--process", str(latin)],
                            capture_output=True, text=True)
    assert result.returncode == 1 and f"{latin}, line 2: not UTF-8 text" in result.stderr
    assert not (tmp_path / "r").exists()
