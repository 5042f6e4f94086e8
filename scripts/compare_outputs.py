#!/usr/bin/env python
"""Prove that a refactor left the CLI's outputs unchanged: capture them, then compare captures.

    compare_outputs.py capture OUTDIR [--repo PATH]
    compare_outputs.py compare BEFORE AFTER

`capture` builds two stores in OUTDIR/work with the code of PATH (default: this checkout) and
saves what the reporting commands print and write in OUTDIR/outputs, one file per output:

- a demo store holding every round type of the README tours and docs: a depth round judged
  by a `command` judge and by two simulated people (batches filled from the demo's truth,
  seeded noise), a sampled round, two adaptive rounds (mixfuse, mtf), a crowd round with gold
  and 30 simulated workers, and a jury of model judges (the overlap judge, the `learned`
  judge, a noisy command judge asked three times) on the crowd round; beside it a diversity
  store with a subtopic round judged by the overlap judge and by two simulated people;
- a store of the real TREC 2003 Robust runs and official qrels, with a depth round judged
  by three simulated people and an adaptive round judged by a command judge that answers
  from the official qrels (`needs=ids`: the store holds no text).

On them it runs `evaluate`, `eval`, `leaderboard`, `agreement`, `qrels derive` (each
followed by `export qrels`), `jury report` and `release`, several variants each.

Every command runs through the CLI in a subprocess, `python -m pooling` with
PYTHONPATH=PATH and the working directory OUTDIR/work, so an older checkout's `pooling` is
imported (checked before the first step) and the same script captures any version. Every
command that takes a seed gets a fixed one. The helper programs (judges, the batch filler)
are this file's own, except the README's `scripts/overlap_judge.py`, taken from PATH; the
inputs' and helpers' checksums are an output of their own, so a changed input shows.

`compare` compares two captures file by file and prints a table (output, status, first
differing line); it exits 1 when anything differs or is missing.

Seeds: every command that takes one gets a fixed one, and the one random input no option
seeds, a store's pseudonym key (made at its first release, an HMAC key that names people in
a release), is fixed before each store's first release (`fix_pseudonym_key`, a row of
`store_meta` written with duckdb): otherwise every capture's people get other pseudonyms.

Normalisations, each applied to text outputs at capture time (`normalise_text`):

- OUTDIR and PATH, printed as absolute paths, become `<OUTDIR>` and `<REPO>`;
- timestamps (an ISO 8601 date with a time to the minute or finer: `created_at`, `judged_at`,
  the exports' provenance sidecars, the HTML leaderboard's "Generated ...") become `<TIME>`:
  two captures run at different times. `compare` applies the same to every file again, since
  release bundles are saved byte for byte as written;
- at compare time, the dates the capture ran on (`capture.json`'s `dates`: a capture may
  cross midnight) become `<CAPTURE-DATE>` in every file of that capture: a release's
  `date-released` (released_at in words) and its datasheet's span of judgment dates are the
  day it was made.

And at compare time, for release bundles only (`bundle_key`, `strip_keys`): the JSON keys
`released_at` and `store_schema` are removed wherever they occur (in `release.json`, in
other JSON and JSON-lines files, in Parquet key-value metadata), DATASHEET.md's
"(schema N)" (store_schema in words) is set aside alike, and a `SHA256SUMS` line whose two
checksums differ counts as the same when the file it covers compares the same once those
are set aside (each checksum is still verified against its own file); the table says which.
Parquet files are compared by schema and rows (times normalised), not bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

MAIN = Path(__file__).resolve().parents[1]  # this checkout
PYTHON = Path(sys.executable)  # the .venv's Python (pooling's dependencies), any code's pooling
ROBUST = MAIN.parent / "shared" / "data" / "trec2003-robust"
ROBUST_QRELS = ROBUST / "qrels" / "robust03_qrels.txt.gz"
ROBUST_TOPICS = ",".join(str(t) for t in range(601, 611))  # ten new topics, pooled to depth 125
CROWD_TOPICS = ",".join(str(t) for t in range(101, 111))
DIV_TOPICS = "101,102,103,104,105"
SET_ASIDE = ("released_at", "store_schema")
DATASHEET_SCHEMA = re.compile(r"\(schema \d+\)")
PSEUDONYM_KEY = hashlib.sha256(b"compare_outputs.py").hexdigest()  # 32 bytes, as hex
TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?")

# A jury member: the overlap judge's rule, with a quarter of its grades moved by one step,
# chosen by a hash of the pair, subtopic and sample (so each sample errs elsewhere).
NOISY_JUDGE = '''"""Overlap judge with deterministic noise (written by compare_outputs.py)."""
import hashlib, json, re, sys
WORD = re.compile(r"[a-z0-9]+")
def words(text):
    return set(WORD.findall((text or "").lower()))
for line in sys.stdin:
    r = json.loads(line)
    wanted = words(r.get("description") if "subtopic" in r else r["title"]) or words(r["title"])
    found = wanted & words((r.get("doc_title") or "") + " " + (r.get("doc_text") or ""))
    share = len(found) / len(wanted) if wanted else 0.0
    grade = 2 if share >= 0.99 else 1 if share >= 0.5 else 0
    key = "|".join(str(r.get(k, "")) for k in ("query_id", "doc_id", "subtopic", "sample"))
    h = hashlib.sha256(key.encode()).digest()
    if h[0] < 64:
        grade = grade + 1 if grade < 2 and h[1] % 2 else max(0, grade - 1) if grade else 1
    print(json.dumps({"grade": grade, "probability": round(h[2] / 255, 4)}), flush=True)
'''

# The Robust store's judge: the official grade of the pair (0 for an unjudged one).
QRELS_JUDGE = '''"""A judge answering from a qrels file (written by compare_outputs.py)."""
import gzip, json, sys
grades = {}
with gzip.open(sys.argv[1], "rt") as fh:
    for line in fh:
        q, _, d, g = line.split()
        grades[(q, d)] = max(0, int(g))
for line in sys.stdin:
    r = json.loads(line)
    g = grades.get((r["query_id"], r["doc_id"]), 0)
    print(json.dumps({"grade": g, "probability": 0.9 if g else 0.1}), flush=True)
'''


class CaptureError(RuntimeError):
    """A command of the capture failed."""


def normalise_text(text: str, out: Path, repo: Path) -> str:
    """Text with the capture's own paths and timestamps replaced (see the module doc)."""
    for path, name in ((out.resolve(), "<OUTDIR>"), (repo.resolve(), "<REPO>")):
        text = text.replace(str(path), name)
    return TIME.sub("<TIME>", text)


def read_qrels(path: Path) -> dict[tuple[str, ...], int]:
    """A TREC qrels file (4 columns) or ndeval's subtopic qrels as {(q, d) or (q, s, d): g}."""
    opener = gzip.open if path.suffix == ".gz" else open
    grades: dict[tuple[str, ...], int] = {}
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            q, second, d, g = line.split()
            grades[(q, d)] = max(grades.get((q, d), 0), int(g))
            grades[(q, second, d)] = int(g)
    return grades


def fill_batch(batch: Path, truth: Path, seed: int, error_rate: float = 0.15) -> int:
    """Grade an exported CSV batch from the truth, a random other grade at `error_rate`."""
    import csv

    grades = read_qrels(truth)
    rng = random.Random(seed)
    with open(batch, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        fields = list(reader.fieldnames or [])
        rows = list(reader)

    def plain(cell: str) -> str:  # the export escapes cells that look like formulas with a '
        return cell[1:] if cell.startswith("'") and cell[1:2] in ("=", "+", "-", "@") else cell

    for row in rows:
        q, d = plain(row["query_id"]), plain(row["doc_id"])
        sub = plain(row.get("subtopic") or "")
        grade = grades.get((q, sub, d), grades.get((q, d), 0)) if sub else grades.get((q, d), 0)
        grade = max(0, min(2, grade))
        if rng.random() < error_rate:
            grade = rng.choice([g for g in (0, 1, 2) if g != grade])
        row["grade"] = str(grade)
    with open(batch, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Capture:
    """One capture: runs the CLI of `repo` in `out/work`, saves outputs in `out/outputs`."""

    repo: Path
    out: Path
    steps: int = 0
    outputs: list[str] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)

    @property
    def work(self) -> Path:
        return self.out / "work"

    @property
    def saved(self) -> Path:
        return self.out / "outputs"

    @property
    def logs(self) -> Path:
        return self.out / "log"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(PYTHONPATH=str(self.repo), PYTHONHASHSEED="0", COLUMNS="200", LINES="50",
                   NO_COLOR="1", TERM="dumb", TZ="UTC", LC_ALL="C.UTF-8")
        env.pop("POOLING_TOKEN", None)
        return env

    def run(self, label: str, argv: Sequence[str], save: str | None = None,
            files: Sequence[tuple[str, str]] = ()) -> str:
        """Run argv in `work`; save its stdout as `save` and each (file in work, output name)."""
        self.steps += 1
        started = time.perf_counter()
        proc = subprocess.run(list(argv), cwd=self.work, env=self.env(), capture_output=True,
                              text=True, check=False)
        seconds = time.perf_counter() - started
        self.timings.append((label, round(seconds, 3)))
        log = self.logs / f"{self.steps:03d}.log"
        log.write_text(f"$ {' '.join(argv)}\n[exit {proc.returncode}]\n--- stdout\n{proc.stdout}"
                       f"--- stderr\n{proc.stderr}", encoding="utf-8")
        print(f"[{self.steps:3d}] {label} ({seconds:.1f}s)", flush=True)
        if proc.returncode != 0:
            raise CaptureError(f"step {self.steps} ({label}) exited {proc.returncode}; see {log}\n"
                               + proc.stderr[-3000:])
        if save is not None:
            self.save_text(save, proc.stdout)
        for name, output in files:
            self.save_file(self.work / name, output)
        return proc.stdout

    def pooling(self, label: str, *args: str, save: str | None = None,
                files: Sequence[tuple[str, str]] = ()) -> str:
        return self.run(label, [str(PYTHON), "-m", "pooling", *args], save=save, files=files)

    def save_text(self, name: str, text: str) -> None:
        path = self.saved / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(normalise_text(text, self.out, self.repo), encoding="utf-8")
        self.outputs.append(name)

    def save_file(self, source: Path, name: str) -> None:
        """A written file or directory, copied; text files normalised, binary ones as they are."""
        if source.is_dir():  # a release bundle: copied as written, compared by `compare`
            shutil.copytree(source, self.saved / name)
            self.outputs.append(name + "/")
            return
        try:
            text = source.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            (self.saved / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, self.saved / name)
            self.outputs.append(name)
            return
        self.save_text(name, text)

    def export_qrels(self, store: str, version: str, *extra: str) -> None:
        """`export qrels` of a version to a file, saved with its provenance sidecar."""
        stem = f"{Path(store).stem}/qrels/{version}{'.' + extra[-1] if extra else ''}"
        target = f"{version}{'.' + extra[-1] if extra else ''}.qrels"
        self.pooling(f"export qrels {store} {version} {' '.join(extra)}".rstrip(), "export",
                     "qrels", store, "--qrels", version, *extra, "-o", target,
                     files=[(target, stem + ".qrels"), (target + ".meta.json",
                                                        stem + ".qrels.meta.json")])

    def derive(self, store: str, version: str, *args: str, exports: Sequence[str] = ()) -> None:
        """`qrels derive` (stdout saved), then the version exported."""
        self.pooling(f"qrels derive {store} {version}", "qrels", "derive", store, "--name",
                     version, *args, save=f"{Path(store).stem}/derive/{version}.out")
        self.export_qrels(store, version)
        for fmt in exports:
            self.export_qrels(store, version, "--format", fmt)

    def people(self, store: str, round_name: str, truth: Path, who: Sequence[str],
               overlap: str) -> None:
        """Simulated people: add, assign with overlap, export, fill from truth, import."""
        for name in who:
            self.pooling(f"assessors add {store} {name}", "assessors", "add", store, name)
        ids = ",".join(name.lower() for name in who)
        self.pooling(f"assign {store} {round_name}", "assign", store, "--round", round_name,
                     "--assessors", ids, "--overlap", overlap, "--seed", "3")
        for seed, name in enumerate(who, start=11):
            batch = f"batch-{Path(store).stem}-{round_name}-{name.lower()}.csv"
            self.pooling(f"batch export {store} {round_name} {name}", "batch", "export", store,
                         "--round", round_name, "--assessor", name.lower(), "-o", batch)
            rows = fill_batch(self.work / batch, truth, seed)
            print(f"      filled {batch}: {rows} row(s) from {truth.name}, seed {seed}")
            self.pooling(f"batch import {store} {round_name} {name}", "batch", "import", store,
                         "--round", round_name, "--assessor", name.lower(), batch)

    def fix_pseudonym_key(self, store: str) -> None:
        """Give the store a fixed pseudonym key before its first release (see the module doc)."""
        code = ("import duckdb, sys; c = duckdb.connect(sys.argv[1]); c.execute(\"INSERT OR "
                "IGNORE INTO store_meta VALUES ('release_pseudonym_key', ?)\", [sys.argv[2]]); "
                "c.close()")
        self.run(f"fixed pseudonym key {store}", [str(PYTHON), "-c", code, store, PSEUDONYM_KEY])

    def check_import(self) -> str:
        found = self.run("which pooling is imported", [str(PYTHON), "-c",
                         "import pooling, os; print(os.path.dirname(pooling.__file__))"]).strip()
        if Path(found).resolve() != (self.repo / "pooling").resolve():
            raise CaptureError(f"python imports pooling from {found}, not from {self.repo}")
        return found

    # -- the stores -------------------------------------------------------------------------

    def prepare(self) -> None:
        """Inputs and helpers copied into work, their checksums an output."""
        shutil.copytree(self.repo / "collections" / "demo", self.work / "demo")
        helpers = self.work / "helpers"
        helpers.mkdir()
        shutil.copyfile(self.repo / "scripts" / "overlap_judge.py", helpers / "overlap_judge.py")
        (helpers / "noisy_judge.py").write_text(NOISY_JUDGE, encoding="utf-8")
        (helpers / "qrels_judge.py").write_text(QRELS_JUDGE, encoding="utf-8")
        files = sorted(p for p in (self.work / "demo").rglob("*") if p.is_file())
        files += sorted(helpers.iterdir())
        lines = [f"{sha256(p)}  {p.relative_to(self.work)}" for p in files]
        self.save_text("inputs.sha256", "\n".join(lines) + "\n")

    def demo_store(self) -> None:
        s, py = "demo.duckdb", str(PYTHON)
        p = self.pooling
        p("init demo", "init", s)
        p("import topics", "import", "topics", s, "demo/topics.jsonl")
        p("import docs", "import", "docs", s, "demo/documents.jsonl")
        runs = sorted(str(r.relative_to(self.work)) for r in (self.work / "demo/runs").glob("*.run"))
        p("import runs", "import", "runs", s, *runs, "--meta", "demo/runs.tsv")
        p("import qrels truth", "import", "qrels", s, "demo/truth.qrels", "--name", "truth")
        # A campaign in ten lines: a depth round judged by the command judge ...
        p("pool r1 (depth 10)", "pool", s, "--round", "r1", "--strategy", "depth", "--depth", "10",
          "--runs", "pooled")
        p("judges add words", "judges", "add", s, "words", "--backend", "command", "--param",
          f"command={py} helpers/overlap_judge.py")
        p("judge words r1", "judge", s, "--judge", "words", "--round", "r1")
        self.derive(s, "r1", "--round", "r1", "--rule", "judge-only", "--judge", "words")
        # ... and by two people (simulated), with an overlap for agreement
        self.people(s, "r1", self.work / "demo/truth.qrels", ["Ada", "Bo"], "0.2")
        # A sampled round
        p("plan-sample", "plan-sample", s, "--budget", "40", "--depth", "30",
          save="demo/plan-sample.out")
        p("pool s1 (sample)", "pool", s, "--round", "s1", "--strategy", "sample", "--depth", "30",
          "--param", "strata=5", "--param", "rates=1,0.25", "--seed", "5")
        p("judge words s1", "judge", s, "--judge", "words", "--round", "s1")
        self.derive(s, "s1", "--round", "s1", "--rule", "judge-only", "--judge", "words",
                    exports=["sampled"])
        # Adaptive rounds, judged by the command judge a document at a time
        for name, strategy in (("a1", "mixfuse"), ("a2", "mtf")):
            p(f"pool {name} ({strategy})", "pool", s, "--round", name, "--strategy", strategy,
              "--depth", "50", "--budget", "15", "--runs", "pooled", "--seed", "1")
            p(f"judge words {name}", "judge", s, "--judge", "words", "--round", name)
            p(f"export pool {name}", "export", "pool", s, "--round", name, "-o", f"{name}.pool.tsv",
              files=[(f"{name}.pool.tsv", f"demo/pool/{name}.pool.tsv")])
            self.derive(s, name, "--round", name, "--rule", "judge-only", "--judge", "words")
        # A crowd round with gold
        p("pool c1 (crowd)", "pool", s, "--round", "c1", "--strategy", "depth", "--depth", "5",
          "--topics", CROWD_TOPICS, "--redundancy", "3")
        p("crowd gold c1", "crowd", "gold", s, "--round", "c1", "--from", "truth", "--per-topic",
          "4", "--rate", "0.2", "--name", "c1-gold")
        p("crowd simulate c1", "crowd", "simulate", s, "--round", "c1", "--truth", "truth",
          "--workers", "30", "--seed", "7")
        p("crowd quality c1", "crowd", "quality", s, "--round", "c1", "--sort", "accuracy",
          save="demo/crowd-quality.out")
        p("crowd flag c1", "crowd", "flag", s, "--round", "c1", "--below", "0.5", "--withdraw",
          "--reason", "accuracy on gold below 0.5")
        self.derive(s, "c1-ds", "--round", "c1", "--rule", "dawid-skene", "--gold", "c1-gold")
        self.derive(s, "c1-wawa", "--round", "c1", "--rule", "wawa", "--gold", "c1-gold")
        self.derive(s, "c1-majority", "--round", "c1", "--rule", "majority")
        p("qrels workers c1-ds", "qrels", "workers", s, "c1-ds", save="demo/qrels-workers-c1-ds.out")
        # A jury of model judges on the crowd round (its gold pairs judged too)
        p("judges add learned", "judges", "add", s, "learned", "--backend", "learned")
        p("judges add noisy", "judges", "add", s, "noisy", "--backend", "command", "--param",
          f"command={py} helpers/noisy_judge.py")
        p("judge jury c1", "judge", s, "--round", "c1", "--judge", "words", "--judge", "learned",
          "--judge", "noisy")
        p("judge noisy c1 x3", "judge", s, "--round", "c1", "--judge", "noisy", "--samples", "3")
        for fmt in ("table", "json"):
            p(f"jury report c1 {fmt}", "jury", "report", s, "--round", "c1", "--gold", "c1-gold",
              "--folds", "5", "--seed", "0", "--format", fmt, save=f"demo/jury-report.{fmt}")
        for rule in ("majority", "wawa", "dawid-skene", "gold-weighted"):
            self.derive(s, f"c1-jury-{rule}", "--round", "c1", "--jurors", "all", "--rule", rule,
                        "--gold", "c1-gold", "--judge-grades", "0=0,1=1,2=2")
        # The people's rules on the depth round
        self.derive(s, "r1-majority", "--round", "r1", "--rule", "majority")
        self.derive(s, "r1-majority-higher", "--round", "r1", "--rule", "majority", "--tie",
                    "higher")
        self.derive(s, "r1-latest", "--round", "r1", "--rule", "latest")
        self.derive(s, "r1-mean", "--round", "r1", "--rule", "mean")
        self.derive(s, "r1-primary", "--round", "r1", "--rule", "primary")
        self.derive(s, "r1-ds", "--round", "r1", "--rule", "dawid-skene")
        self.derive(s, "mixed", "--rule", "human-first", "--judge", "words")

    def demo_reports(self) -> None:
        s, p = "demo.duckdb", self.pooling
        for version, measures in (("r1", ("map", "P.10", "ndcg_cut.10")),
                                  ("truth", ("official",)),
                                  ("r1-majority", ("bpref", "recip_rank", "Rprec", "infAP")),
                                  ("s1", ("infAP", "infNDCG", "statAP", "iP10")),
                                  ("a1", ("map", "P_10")), ("a2", ("map", "P_10")),
                                  ("c1-ds", ("map", "ndcg_cut_10")),
                                  ("c1-jury-gold-weighted", ("map", "P_5"))):
            ms = [x for m in measures for x in ("-m", m)]
            p(f"evaluate {version}", "evaluate", s, "--qrels", version, *ms,
              save=f"demo/evaluate/{version}.table")
        p("evaluate r1 csv", "evaluate", s, "--qrels", "r1", "-m", "map", "-m", "P.10", "--format",
          "csv", save="demo/evaluate/r1.csv")
        p("evaluate r1-mean json", "evaluate", s, "--qrels", "r1-mean", "-m", "map", "-m",
          "ndcg_cut.10", "-l", "2", "--format", "json", save="demo/evaluate/r1-mean-l2.json")
        p("evaluate c1-ds shared-topics", "evaluate", s, "--qrels", "c1-ds", "--shared-topics",
          "-m", "map", "-M", "20", "--format", "csv", save="demo/evaluate/c1-ds-shared.csv")
        # pooling eval on the exported files
        runs = sorted(str(r.relative_to(self.work)) for r in (self.work / "demo/runs").glob("*.run"))
        p("eval r1-majority file", "eval", "r1-majority.qrels", *runs, "-c", "-m", "map", "-m",
          "P.10", "-m", "ndcg_cut.10", "--format", "csv", save="demo/eval/r1-majority.csv")
        p("eval truth per query", "eval", "demo/truth.qrels", runs[0], "-q", "-m", "official",
          save="demo/eval/truth-per-query.trec")
        p("eval s1 sampled", "eval", "s1.sampled.qrels", *runs, "--format", "json",
          save="demo/eval/s1-sampled.json")
        plain = ("-m", "map", "-m", "P_10")
        for version, fmt, ms in (("r1", "table", plain), ("r1", "md", plain), ("r1", "csv", plain),
                                 ("r1-majority", "md", plain), ("s1", "md", ()),
                                 ("s1", "csv", ("-m", "infAP", "-m", "statAP")),
                                 ("a1", "csv", plain), ("a2", "md", plain), ("c1-ds", "md", plain),
                                 ("truth", "latex", plain)):
            p(f"leaderboard {version} {fmt}", "leaderboard", s, "--qrels", version, *ms,
              "--format", fmt, "--seed", "0", "--resamples", "2000",
              save=f"demo/leaderboard/{version}{'-' + ms[1] if ms else ''}.{fmt}")
        p("leaderboard r1 randomization", "leaderboard", s, "--qrels", "r1", "-m", "ndcg_cut_10",
          "--test", "randomization", "--permutations", "4000", "--seed", "4", "--pairs",
          "--format", "csv", save="demo/leaderboard/r1-randomization.csv")
        p("leaderboard truth tukey", "leaderboard", s, "--qrels", "truth", "-m", "map", "--test",
          "tukey", "--permutations", "4000", "--seed", "4", "--format", "md",
          save="demo/leaderboard/truth-tukey.md")
        p("leaderboard r1 html", "leaderboard", s, "--qrels", "r1", "-m", "map", "--format",
          "html", "--seed", "0", "--resamples", "2000", "-o", "leaderboard.html",
          files=[("leaderboard.html", "demo/leaderboard/r1.html")])
        p("agreement r1", "agreement", s, "--round", "r1", save="demo/agreement/r1-round.table")
        for fmt in ("table", "csv", "json"):
            p(f"agreement judge words {fmt}", "agreement", s, "--judge", "words", "--round", "r1",
              "--format", fmt, save=f"demo/agreement/judge-words.{fmt}")
            p(f"agreement truth vs r1-majority {fmt}", "agreement", s, "--qrels", "truth",
              "--qrels", "r1-majority", "-m", "map", "--format", fmt,
              save=f"demo/agreement/truth-r1-majority.{fmt}")
        p("agreement judge vs truth", "agreement", s, "--judge", "noisy", "--round", "c1",
          "--against", "truth", "--format", "json", save="demo/agreement/noisy-truth.json")
        p("agreement truth vs c1-ds unjudged 0", "agreement", s, "--qrels", "truth", "--qrels",
          "c1-ds", "--unjudged", "0", "--topics", CROWD_TOPICS, "-m", "ndcg_cut_10", "--top", "3",
          save="demo/agreement/truth-c1-ds.table")
        p("agreement r1-majority vs mixed", "agreement", s, "--qrels", "r1-majority", "--qrels",
          "mixed", "-m", "map", "--threshold", "2", "--format", "csv",
          save="demo/agreement/r1-majority-mixed.csv")
        self.fix_pseudonym_key(s)
        p("release demo", "release", s, "release-demo", "--title", "pooling demo collection",
          "--documents", "text", "--license", "CC-BY-4.0", files=[("release-demo", "demo/release")])
        p("release demo (r1, pooled runs, no judgments)", "release", s, "release-demo-r1",
          "--round", "r1", "--qrels", "r1-majority", "--runs", "pooled", "--no-judgments",
          "--no-pool-bias", "--version", "0.9", files=[("release-demo-r1", "demo/release-r1")])

    def div_store(self) -> None:
        s, py, p = "div.duckdb", str(PYTHON), self.pooling
        p("init div", "init", s)
        p("import topics div", "import", "topics", s, "demo/subtopics.xml")
        p("import docs div", "import", "docs", s, "demo/documents.jsonl")
        runs = sorted(str(r.relative_to(self.work)) for r in (self.work / "demo/runs").glob("*.run"))
        p("import runs div", "import", "runs", s, *runs, "--meta", "demo/runs.tsv")
        p("pool d1 (subtopics)", "pool", s, "--round", "d1", "--subtopics", "--topics", DIV_TOPICS,
          "--strategy", "depth", "--depth", "20", "--runs", "all")
        p("judges add words div", "judges", "add", s, "words", "--backend", "command", "--param",
          f"command={py} helpers/overlap_judge.py")
        p("judge words d1", "judge", s, "--judge", "words", "--round", "d1")
        self.derive(s, "d1", "--round", "d1", "--rule", "judge-only", "--judge", "words")
        p("import qrels subtopic truth", "import", "qrels", s, "demo/subtopics.qrels", "--format",
          "subtopic", "--name", "truth")
        self.people(s, "d1", self.work / "demo/subtopics.qrels", ["Ada", "Bo"], "0.3")
        self.derive(s, "d1-majority", "--round", "d1", "--rule", "majority")
        self.derive(s, "d1-latest", "--round", "d1", "--rule", "latest")
        p("qrels plain d1-majority", "qrels", "plain", s, "--from", "d1-majority", "--name",
          "d1-any", save="div/derive/d1-any.out")
        self.export_qrels(s, "d1-any")
        p("qrels export-subtopics d1-majority", "qrels", "export-subtopics", s, "--qrels",
          "d1-majority", "-o", "d1-majority.subtopic.qrels",
          files=[("d1-majority.subtopic.qrels", "div/qrels/d1-majority.subtopic.qrels")])
        p("qrels export-subtopics d1", "qrels", "export-subtopics", s, "--qrels", "d1", "-o",
          "d1.subtopic.qrels", files=[("d1.subtopic.qrels", "div/qrels/d1.subtopic.qrels")])
        p("agreement d1 (per subtopic)", "agreement", s, "--round", "d1",
          save="div/agreement/d1-round.table")
        p("agreement truth vs d1", "agreement", s, "--qrels", "truth", "--qrels", "d1",
          "--topics", DIV_TOPICS, "-m", "alpha-nDCG@20", "--format", "json",
          save="div/agreement/truth-d1.json")
        p("agreement judge words d1", "agreement", s, "--judge", "words", "--round", "d1",
          save="div/agreement/judge-words.table")
        for version in ("d1", "d1-majority", "truth"):
            p(f"evaluate div {version}", "evaluate", s, "--qrels", version, "-m", "alpha-nDCG@20",
              "-m", "ERR-IA@20", "-m", "map", save=f"div/evaluate/{version}.table")
        p("evaluate div truth ndeval json", "evaluate", s, "--qrels", "truth", "-m", "ndeval",
          "--format", "json", save="div/evaluate/truth-ndeval.json")
        runs5 = runs[:5]
        p("eval ndeval file", "eval", "d1-majority.subtopic.qrels", *runs5, "-m", "ndeval",
          "--format", "ndeval", save="div/eval/d1-majority.ndeval")
        for version, fmt in (("d1", "md"), ("d1-majority", "csv"), ("truth", "table")):
            p(f"leaderboard div {version} {fmt}", "leaderboard", s, "--qrels", version, "-m",
              "alpha-nDCG@20", "-m", "ERR-IA@20", "--topics", DIV_TOPICS, "--format", fmt,
              "--seed", "0", "--resamples", "2000", save=f"div/leaderboard/{version}.{fmt}")
        self.fix_pseudonym_key(s)
        p("release div", "release", s, "release-div", "--title", "pooling demo diversity",
          "--license", "CC-BY-4.0", files=[("release-div", "div/release")])

    def robust_store(self) -> None:
        s, py, p = "robust.duckdb", str(PYTHON), self.pooling
        p("init robust", "init", s)
        p("import topics robust", "import", "topics", s,
          str(ROBUST / "topics" / "topics.robust03.txt"))
        runs = sorted(str(r) for r in (ROBUST / "runs").glob("input.*.gz"))
        p(f"import runs robust ({len(runs)})", "import", "runs", s, *runs)
        p("import qrels official", "import", "qrels", s, str(ROBUST_QRELS), "--name", "official")
        p("topics subset new", "topics", "subset", s, "new", "601-650")
        p("topics subset old", "topics", "subset", s, "old", "303-448")
        p("pool r1 robust (depth 10)", "pool", s, "--round", "r1", "--strategy", "depth",
          "--depth", "10", "--runs", "all", "--topics", ROBUST_TOPICS)
        self.people(s, "r1", ROBUST_QRELS, ["Ada", "Bo", "Cy"], "0.2")
        p("judges add official", "judges", "add", s, "official", "--backend", "command", "--param",
          f"command={py} helpers/qrels_judge.py {ROBUST_QRELS}", "--param", "needs=ids")
        p("pool a1 robust (mixfuse)", "pool", s, "--round", "a1", "--strategy", "mixfuse",
          "--depth", "100", "--budget", "30", "--runs", "all", "--topics", ROBUST_TOPICS,
          "--seed", "1")
        p("judge official a1", "judge", s, "--judge", "official", "--round", "a1")
        p("export pool a1 robust", "export", "pool", s, "--round", "a1", "-o", "robust-a1.pool.tsv",
          files=[("robust-a1.pool.tsv", "robust/pool/a1.pool.tsv")])
        self.derive(s, "a1", "--round", "a1", "--rule", "judge-only", "--judge", "official")
        for rule in ("majority", "latest", "mean", "dawid-skene"):
            self.derive(s, f"r1-{rule}", "--round", "r1", "--rule", rule)

    def robust_reports(self) -> None:
        s, p = "robust.duckdb", self.pooling
        p("evaluate robust official", "evaluate", s, "--qrels", "official", "-m", "map", "-m",
          "P.10", "-m", "ndcg", "-m", "bpref", "-m", "Rprec", save="robust/evaluate/official.table")
        p("evaluate robust official csv new", "evaluate", s, "--qrels", "official", "--topics",
          "new", "-m", "official", "--format", "csv", save="robust/evaluate/official-new.csv")
        p("evaluate robust official json l2", "evaluate", s, "--qrels", "official", "-l", "2",
          "-m", "map", "-m", "ndcg_cut.20", "--topics", "new", "--format", "json",
          save="robust/evaluate/official-l2.json")
        for version in ("r1-majority", "r1-dawid-skene", "a1"):
            p(f"evaluate robust {version}", "evaluate", s, "--qrels", version, "-m", "map", "-m",
              "P.10", "-m", "infAP", "--shared-topics", save=f"robust/evaluate/{version}.table")
        runs = sorted(str(r) for r in (ROBUST / "runs").glob("input.*.gz"))
        p("eval robust file official", "eval", str(ROBUST_QRELS), *runs, "-m", "map", "-m",
          "P.10", "-m", "num_rel_ret", "--format", "csv", save="robust/eval/official.csv")
        p("eval robust file r1-majority", "eval", "r1-majority.qrels", *runs[:4], "-q", "-m",
          "map", "-m", "ndcg_cut.10", save="robust/eval/r1-majority-per-query.trec")
        for version, fmt, topics in (("official", "table", "601-650"), ("official", "md", "old"),
                                     ("official", "csv", "new"), ("r1-majority", "md", ROBUST_TOPICS),
                                     ("a1", "csv", ROBUST_TOPICS)):
            p(f"leaderboard robust {version} {fmt}", "leaderboard", s, "--qrels", version, "-m",
              "map", "-m", "P_10", "-m", "ndcg_cut_10", "--topics", topics, "--format", fmt,
              "--seed", "0", "--resamples", "2000",
              save=f"robust/leaderboard/{version}-{topics.replace(',', '_')[:20]}.{fmt}")
        p("leaderboard robust randomization", "leaderboard", s, "--qrels", "official", "-m", "map",
          "--topics", "new", "--test", "randomization", "--permutations", "4000", "--seed", "9",
          "--correction", "bh", "--format", "csv", save="robust/leaderboard/official-rand.csv")
        p("agreement robust r1", "agreement", s, "--round", "r1", save="robust/agreement/r1.table")
        for fmt in ("table", "csv", "json"):
            p(f"agreement robust official vs r1-majority {fmt}", "agreement", s, "--qrels",
              "official", "--qrels", "r1-majority", "--topics", ROBUST_TOPICS, "-m", "map",
              "--format", fmt, save=f"robust/agreement/official-r1-majority.{fmt}")
        p("agreement robust official vs a1", "agreement", s, "--qrels", "official", "--qrels", "a1",
          "--topics", ROBUST_TOPICS, "--unjudged", "0", "-m", "P_10", "--format", "json",
          save="robust/agreement/official-a1.json")
        p("agreement robust judge official", "agreement", s, "--judge", "official", "--round",
          "a1", "--against", "official", save="robust/agreement/judge-official.table")
        self.fix_pseudonym_key(s)
        p("release robust", "release", s, "release-robust", "--title", "TREC 2003 Robust",
          "--runs", "none", "--documents", "none", files=[("release-robust", "robust/release")])

    def capture(self) -> None:
        for d in (self.work, self.saved, self.logs):
            d.mkdir(parents=True)
        print(f"capture of {self.repo} into {self.out}", flush=True)
        self.check_import()
        self.prepare()
        started = time.perf_counter()
        self.demo_store()
        self.demo_reports()
        self.div_store()
        self.robust_store()
        self.robust_reports()
        total = time.perf_counter() - started
        git = subprocess.run(["git", "-C", str(self.repo), "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=False).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(self.repo), "status", "--porcelain", "--",
                                "pooling"], capture_output=True, text=True, check=False).stdout
        meta = {"repo": str(self.repo), "commit": git, "pooling_changed": dirty.splitlines(),
                "dates": capture_dates(time.time() - total, time.time()),
                "steps": self.steps, "seconds": round(total, 1), "outputs": self.outputs,
                "timings": self.timings}
        (self.out / "capture.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        print(f"captured {len(self.outputs)} outputs in {self.steps} steps, {total:.0f}s",
              flush=True)


# -- compare --------------------------------------------------------------------------------


def capture_dates(start: float, end: float) -> list[str]:
    """The UTC dates (ISO) from `start` to `end` (epoch seconds), both included."""
    day = datetime.fromtimestamp(start, UTC).date()
    last = datetime.fromtimestamp(end, UTC).date()
    dates = []
    while day <= last:
        dates.append(day.isoformat())
        day += timedelta(days=1)
    return dates


def dates_of(capture: Path) -> list[str]:
    """The dates a capture ran on, from its capture.json (for one written without them:
    from the file's time and the capture's length)."""
    meta_file = capture / "capture.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    if "dates" in meta:
        return list(meta["dates"])
    end = meta_file.stat().st_mtime
    return capture_dates(end - float(meta.get("seconds", 0)), end)


def without_dates(lines: list[str], dates: Sequence[str]) -> list[str]:
    """Lines with the capture's own dates replaced by `<CAPTURE-DATE>`."""
    if not dates:
        return lines
    pattern = re.compile("|".join(re.escape(d) for d in dates))
    return [pattern.sub("<CAPTURE-DATE>", line) for line in lines]


@dataclass
class Row:
    output: str
    status: str
    detail: str = ""


def strip_keys(value: Any) -> Any:
    """A JSON value with the set-aside keys removed at every depth."""
    if isinstance(value, dict):
        return {k: strip_keys(v) for k, v in value.items() if k not in SET_ASIDE}
    if isinstance(value, list):
        return [strip_keys(v) for v in value]
    return value


def bundle_key(path: Path) -> bool:
    """Whether the file lies inside a release bundle (a directory holding SHA256SUMS)."""
    return any((parent / "SHA256SUMS").is_file() for parent in path.parents)


def comparable_lines(path: Path, in_bundle: bool) -> list[str]:
    """The lines a file is compared by (JSON in bundles with the set-aside keys removed)."""
    if path.suffix == ".parquet":
        return parquet_lines(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return [f"<binary sha256 {hashlib.sha256(data).hexdigest()}>"]
    text = TIME.sub("<TIME>", text)  # bundles are saved as written: their times normalised here
    if in_bundle and path.name == "DATASHEET.md":  # store_schema, as the datasheet words it
        text = DATASHEET_SCHEMA.sub("(schema <store_schema>)", text)
    if in_bundle and path.suffix == ".json":
        return json.dumps(strip_keys(json.loads(text)), indent=1, ensure_ascii=False).splitlines()
    if in_bundle and path.suffix == ".jsonl":
        return [json.dumps(strip_keys(json.loads(line)), ensure_ascii=False)
                for line in text.splitlines() if line.strip()]
    lines = text.splitlines()
    if in_bundle:
        lines = [line for line in lines if not line.lstrip().startswith(SET_ASIDE)]
    return lines


def parquet_lines(path: Path) -> list[str]:
    """A Parquet file as its schema, key-value metadata (keys set aside) and rows."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    lines = [f"schema: {field.name}: {field.type}" for field in table.schema]
    for key, raw in (table.schema.metadata or {}).items():
        name, text = key.decode(), raw.decode("utf-8", "replace")
        try:
            text = json.dumps(strip_keys(json.loads(text)), ensure_ascii=False)
        except ValueError:
            pass
        lines.append(f"metadata {name}: {text}")
    columns = [c for c in table.column_names if c not in SET_ASIDE]
    for row in table.select(columns).to_pylist():
        lines.append(TIME.sub("<TIME>", json.dumps(row, default=str, ensure_ascii=False)))
    return lines


def first_difference(a: list[str], b: list[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            col = next((c for c, (p, q) in enumerate(zip(x, y, strict=False)) if p != q),
                       min(len(x), len(y)))
            start = max(0, col - 30)
            return f"line {i} col {col + 1}: {x[start:col + 50]!r} | {y[start:col + 50]!r}"
    if len(a) != len(b):
        n = min(len(a), len(b)) + 1
        return f"line {n}: {len(a)} vs {len(b)} lines"
    return ""


def compare_checksums(before: Path, after: Path, dates_a: Sequence[str] = (),
                      dates_b: Sequence[str] = ()) -> tuple[str, str]:
    """SHA256SUMS of two bundles: the same, or lines that differ only by set-aside keys."""
    def entries(path: Path) -> dict[str, str]:
        pairs = (line.split(maxsplit=1) for line in path.read_text().splitlines() if line.strip())
        return {name.lstrip("*"): digest for digest, name in pairs}

    a, b = entries(before), entries(after)
    if list(a) != list(b):
        return "DIFFERENT", first_difference(list(a), list(b))
    notes: list[str] = []
    for name in a:
        for root, sums in ((before.parent, a), (after.parent, b)):
            if (root / name).is_file() and sha256(root / name) != sums[name]:
                return "DIFFERENT", f"{name}: checksum does not match {root / name}"
        if a[name] != b[name]:
            same = (before.parent / name).is_file() and (after.parent / name).is_file() and (
                without_dates(comparable_lines(before.parent / name, True), dates_a)
                == without_dates(comparable_lines(after.parent / name, True), dates_b))
            if not same:
                return "DIFFERENT", f"{name}: checksums differ, and so does the file"
            notes.append(name)
    if notes:
        return "same", ("checksums recomputed: " + ", ".join(notes)
                        + " differ only by what is set aside (times, dates, released_at, store_schema)")
    return "same", ""


def files_of(root: Path) -> Iterator[str]:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            yield str(path.relative_to(root))


def compare(before: Path, after: Path) -> int:
    a_root, b_root = before / "outputs", after / "outputs"
    dates_a, dates_b = dates_of(before), dates_of(after)
    names = list(files_of(a_root))
    names += [n for n in files_of(b_root) if n not in set(names)]
    rows: list[Row] = []
    for name in names:
        a, b = a_root / name, b_root / name
        if not a.is_file() or not b.is_file():
            rows.append(Row(name, "missing", f"only in {'BEFORE' if a.is_file() else 'AFTER'}"))
            continue
        if a.name == "SHA256SUMS":
            status, detail = compare_checksums(a, b, dates_a, dates_b)
            rows.append(Row(name, status, detail))
            continue
        in_bundle = bundle_key(a)
        la = without_dates(comparable_lines(a, in_bundle), dates_a)
        lb = without_dates(comparable_lines(b, in_bundle), dates_b)
        rows.append(Row(name, "same" if la == lb else "DIFFERENT", first_difference(la, lb)))
    width = max([len(r.output) for r in rows] + [6])
    print(f"{'output':<{width}}  {'status':<9}  first difference / note")
    print(f"{'-' * width}  {'-' * 9}  {'-' * 30}")
    for r in rows:
        print(f"{r.output:<{width}}  {r.status:<9}  {r.detail}")
    counts = {s: sum(r.status == s for r in rows) for s in ("same", "DIFFERENT", "missing")}
    print(f"\n{len(rows)} files: {counts['same']} same, {counts['DIFFERENT']} DIFFERENT, "
          f"{counts['missing']} missing")
    return 0 if counts["DIFFERENT"] == counts["missing"] == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture", help="build the stores and save every output in OUTDIR")
    cap.add_argument("outdir", type=Path)
    cap.add_argument("--repo", type=Path, default=MAIN,
                     help="the checkout whose pooling is imported (PYTHONPATH; default %(default)s)")
    cmp = sub.add_parser("compare", help="compare two captures file by file")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "compare":
        return compare(args.before, args.after)
    if args.outdir.exists():
        parser.error(f"{args.outdir} exists: capture into a new directory")
    try:
        Capture(args.repo.resolve(), args.outdir.resolve()).capture()
    except CaptureError as error:
        print(f"capture failed: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
