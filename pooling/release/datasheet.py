"""DATASHEET.md: how the collection was made, generated from the store.

In the spirit of "Datasheets for Datasets" (Gebru et al.) and the TREC overview papers: what
the collection holds (topics, judged pairs per topic, grades), how the pool was built
(strategy, depth or budget, rounds, runs), what judging cost (judgments, time, people, model
calls), how far the judgments agree (people with people, judges with people, where the store
has overlap), how reusable the pool is (leave-one-run-out bias, `pooling.leaderboard.pool_bias`)
and what each qrels version is (its rule). Every number is computed here, from the store.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from pooling.errors import PoolingError
from pooling.release import layout
from pooling.release import markdown as md
from pooling.store.core import Store

# A pooled run losing less than this share of its score when its unique judgments are
# removed is taken as fairly scored by a pool it did not build (Zobel 1998; Voorhees 2001).
REUSABLE_DROP = 0.05
PER_TOPIC_ROWS = 100  # the per-topic table is listed up to this many topics


def write_datasheet(store: Store, root: Path, manifest: dict[str, Any], names: dict[str, str],
                    *, pool_bias: bool = True, process: str | None = None) -> None:
    """Write DATASHEET.md for the release described by `manifest`."""
    sheet = datasheet_text(store, manifest, names, pool_bias=pool_bias, process=process)
    (root / layout.DATASHEET).write_text(sheet, encoding="utf-8")


def datasheet_text(store: Store, manifest: dict[str, Any], names: dict[str, str], *,
                   pool_bias: bool = True, process: str | None = None) -> str:
    """The datasheet's Markdown; every value that came from input is escaped (`md.text`),
    and the organiser's account of the process (`process`, Markdown) has its HTML escaped."""
    parts = [f"# Datasheet: {md.text(manifest['title'])} (version "
             f"{md.text(manifest['version'])})", "",
             f"Released {manifest['released_at']} from a pooling store (schema "
             f"{manifest['store_schema']}).", ""]
    parts += _motivation(manifest)
    parts += _composition(store, manifest)
    parts += _process(process)
    parts += _collection(store, manifest)
    parts += _effort(store, manifest)
    parts += _agreement(store, manifest, names)
    parts += _bias(store, manifest, pool_bias)
    parts += _versions(manifest)
    parts += _distribution(manifest)
    return "\n".join(parts).rstrip() + "\n"


def _motivation(m: dict[str, Any]) -> list[str]:
    return ["## Motivation", "",
            f"A test collection for evaluating retrieval systems: {m['topics']:,} topics, "
            f"{len(m['qrels_versions'])} qrels version(s), {len(m['runs'])} released run(s). "
            "It is meant for comparing systems on these topics with trec_eval-style measures; "
            "the pool-bias section below says how far systems that did not contribute to the "
            "pool can be compared fairly.", ""]


def _composition(store: Store, m: dict[str, Any]) -> list[str]:
    out = ["## Composition", "", f"- Topics: {m['topics']:,}",
           f"- Documents released: {m['documents']['rows']:,} ({m['documents']['mode']})",
           f"- Runs released: {len(m['runs'])} ({m['runs_mode']})", ""]
    for v in m["qrels_versions"]:
        name = v["name"]
        per = dict(store.sql("judged per topic", "SELECT query_id, count(*) FROM qrels WHERE "
                             "version = ? GROUP BY query_id ORDER BY query_id", [name]).fetchall())
        grades = store.sql("grades", "SELECT relevance, count(*) FROM qrels WHERE version = ? "
                           "GROUP BY relevance ORDER BY relevance", [name]).fetchall()
        counts = list(per.values())
        default = " (the default)" if v["default"] else ""
        out += [f"### Qrels version {md.text(name)}{default}", "",
                f"{v['n_rows']:,} judged pairs on {v['n_topics']:,} topics; per topic "
                + (f"min {min(counts):,}, median {statistics.median(counts):g}, "
                   f"max {max(counts):,}." if counts else "none."), "",
                "| grade | pairs | share |", "|---|---|---|"]
        total = sum(n for _, n in grades) or 1
        out += [f"| {g} | {n:,} | {n / total:.1%} |" for g, n in grades]
        out.append("")
        if per and len(per) <= PER_TOPIC_ROWS:
            relevant = dict(store.sql(
                "relevant per topic", "SELECT query_id, count(*) FILTER (WHERE relevance >= ?) "
                "FROM qrels WHERE version = ? GROUP BY query_id",
                [v["relevance_level"], name]).fetchall())
            out += ["| topic | judged | relevant |", "|---|---|---|"]
            out += [f"| {md.text(q)} | {n:,} | {relevant.get(q, 0):,} |" for q, n in per.items()]
            out.append("")
    return out


def _flat(params: dict[str, Any] | None) -> dict[str, Any]:
    """A round's parameters with the strategy's own (under `strategy`) lifted beside them."""
    params = dict(params or {})
    inner = params.pop("strategy", None)
    return {**params, **inner} if isinstance(inner, dict) else params


def _depth_or_budget(params: dict[str, Any] | None) -> str:
    flat = _flat(params)
    said = [f"{k.replace('_', ' ')} {flat[k]}" for k in ("depth", "budget", "total_budget")
            if flat.get(k) is not None]
    return ", ".join(said) or "-"


def _collection(store: Store, m: dict[str, Any]) -> list[str]:
    out = ["## Collection process: the pool", ""]
    if not m["rounds"]:
        return [*out, "This release holds no judging round: the qrels were imported (or "
                "their rounds left out of the release), so how their pool was built is not "
                "recorded here.", ""]
    sizes = dict(store.sql("pool sizes", "SELECT round_id, count(*) FROM pool_entries "
                           "GROUP BY round_id").fetchall())
    out += ["| round | strategy | depth / budget | pooled runs | topics | pool entries | "
            "adaptive |", "|---|---|---|---|---|---|---|"]
    for r in m["rounds"]:
        topics = len(r["topics"]) if r["topics"] else "all"
        out.append(f"| {md.text(r['round_id'])} | {md.text(r['strategy'])} | "
                   f"{md.text(_depth_or_budget(r['params']))} | "
                   f"{len(r['pooled_runs'] or [])} | {topics} | {sizes.get(r['round_id'], 0):,} "
                   f"| {'yes' if r['adaptive'] else 'no'} |")
    out += ["", f"Each round's parameters are in `{layout.POOL_ROUNDS}`; which run put each "
            f"pool entry there, at which rank, in `{layout.POOL_CONTRIBUTIONS}`.", ""]
    return out


def _effort(store: Store, m: dict[str, Any]) -> list[str]:
    """What judging took, for the released rounds only: judgments by people, by simulated
    workers (never counted as people, nor their drawn seconds as people's time) and by
    automatic judges, and the automatic judges' model calls."""
    from pooling.release.tables import RELEASED_JUDGMENT

    released = f"(SELECT * FROM judgments WHERE {RELEASED_JUDGMENT})"
    people, simulated, models, n, seconds, first, last = store.one("judging effort", f"""
        SELECT count(DISTINCT j.assessor_id) FILTER (WHERE coalesce(a.kind, 'person') = 'person'),
               count(DISTINCT j.assessor_id) FILTER (WHERE a.kind = 'simulated'),
               count(DISTINCT j.assessor_id) FILTER (WHERE a.kind = 'model'),
               count(*) FILTER (WHERE j.kind = 'judge'),
               sum(seconds) FILTER (WHERE coalesce(a.kind, 'person') = 'person'),
               min(judged_at), max(judged_at)
        FROM {released} j LEFT JOIN assessors a USING (assessor_id)""") or (0,) * 7
    judges, calls, failed, tokens = store.one("model calls", f"""
        SELECT count(DISTINCT judge_id), count(*), count(*) FILTER (WHERE status <> 'ok'),
               sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0))
        FROM judge_calls WHERE {RELEASED_JUDGMENT}""") or (0, 0, 0, None)
    out = ["## Judging effort", ""]
    if not n and not calls:
        return [*out, "No judgment was made in this store for the released rounds (the qrels "
                "were imported).", ""]
    hours = f"{seconds / 3600:.2f} hours of people's judging time recorded" if seconds else \
        "no judging time of people recorded"
    who = (f"by {people} people, {simulated} simulated workers and {models} automatic "
           "judge(s)")
    out += [f"- Judgments: {n:,}, {who}, {first:%Y-%m-%d} to {last:%Y-%m-%d}" if first
            else f"- Judgments: {n:,}", f"- Time: {hours}"]
    if simulated:
        out.append("- Simulated workers (`pooling crowd simulate`) answered from a known "
                   "qrels version with errors drawn at random: they are not people, their "
                   "answers measure a design, and their drawn seconds are not judging time")
    out.append(f"- Model calls: {calls:,} by {judges} automatic judge(s) ({failed:,} failed"
               + (f", {int(tokens):,} tokens" if tokens else "") + ")"
               + (f"; {judges - models} of these judges stored no judgment in the released "
                  "rounds" if judges > models else ""))
    if not m.get("judgments", True):
        out.append(f"- The judgment history itself is not part of this release "
                   f"(no `{layout.JUDGMENTS}`): these figures are all it says of judging")
    return [*out, ""]


def _process(process: str | None) -> list[str]:
    """The organiser's own account of how the collection was pooled and judged, when given:
    the story the store cannot tell (CLEF's assessors, not the rounds tried here)."""
    if not process or not process.strip():
        return []
    return ["## Collection process: the organisers' account", "",
            md.organiser_markdown(process).strip(), "",
            "The sections below are computed from the store this release was made from.", ""]


def _agreement(store: Store, m: dict[str, Any], names: dict[str, str]) -> list[str]:
    from pooling.agreement.labels import compare_labels
    from pooling.judging.rules import round_agreement
    from pooling.label_sets.sources import judge_labels, people_labels

    out = ["## Agreement", ""]
    rounds = [r["round_id"] for r in m["rounds"]]  # the released rounds only
    found = False
    for round_id in rounds:
        try:
            report = round_agreement(store, round_id)
        except PoolingError:
            continue
        found = True
        out.append(f"- People with people, round {md.text(round_id)}: {report.n_shared:,} "
                   "pairs judged by two or more; Fleiss' kappa {_num(report.fleiss_kappa)}, Krippendorff's "
                   f"alpha (ordinal) {_num(report.alpha_ordinal)}, overlap of relevant "
                   f"{_num(report.overlap)}")
    judges = [a for (a,) in store.sql("judges", "SELECT assessor_id FROM assessors WHERE "
                                      "kind = 'model' ORDER BY assessor_id").fetchall()]
    if judges:
        people = people_labels(store)
        for judge in judges:
            try:
                labels = compare_labels(people, judge_labels(store, judge))
            except PoolingError:
                continue
            if labels.n_compared:
                found = True
                out.append(f"- Judge {md.text(names.get(judge, judge))} with people: "
                           f"{labels.n_compared:,} pairs; Cohen's kappa {_num(labels.kappa)}")
    if not found:
        out.append("No pair was judged twice (people with people, or a judge with people), so "
                   "agreement cannot be measured on this collection.")
    return [*out, ""]


def _bias(store: Store, m: dict[str, Any], wanted: bool) -> list[str]:
    from pooling.leaderboard.pool_bias import pool_bias

    out = ["## Reusability: leave-one-run-out pool bias", ""]
    if not wanted:
        return [*out, "Not computed for this release (it re-scores every run); compute it with "
                "`pooling pool-bias STORE`.", ""]
    versions = [v["name"] for v in m["qrels_versions"]]
    if not versions or not store.run_ids():
        return [*out, "Not computed: it needs runs and qrels.", ""]
    depths = [_flat(r["params"]).get("depth") for r in m["rounds"]
              if r["strategy"] == "depth" and _flat(r["params"]).get("depth")]
    depth = int(depths[0]) if depths else None
    try:
        bias = pool_bias(store, qrels=m["default_qrels"] or versions[0], measure="map",
                         depth=depth)
    except PoolingError as exc:
        return [*out, f"Not computed: {exc}.", ""]
    summary = bias.summary(pooled=True)
    if not summary.get("runs"):
        return [*out, "Not computed: no run contributed to the pool.", ""]
    worst = -summary["worst_relative_change"]
    pool = f"a depth-{depth} pool" if depth else "the judged documents as the pool"
    verdict = (f"every pooled run loses less than {REUSABLE_DROP:.0%} of its MAP without its "
               "unique judgments: a new run of similar kind can be scored fairly on these qrels"
               if worst < REUSABLE_DROP else
               f"the worst run ({md.text(summary['worst_run'])}) loses {worst:.1%} of its MAP without its "
               "unique judgments: a new run that finds documents no pooled run found will be "
               "underestimated; report Judged@k beside its scores")
    out += [f"MAP on {md.text(bias.qrels_version)} with {pool} ({bias.pool_size:,} pairs, "
            f"{bias.judged_in_pool:,} judged), each pooled run left out in turn: mean change "
            f"{summary['mean_change']:+.4f}, worst relative change "
            f"{summary['worst_relative_change']:+.1%}, largest rank drop "
            f"{summary['max_rank_drop']}.", "", f"**Reusability:** {verdict}.", "",
            "| run | MAP | MAP without its unique judgments | change | rank change |",
            "|---|---|---|---|---|"]
    for row in bias.table.to_pylist():
        if row["pooled"]:
            out.append(f"| {md.text(row['run_id'])} | {row['score']:.4f} | "
                       f"{row['score_without']:.4f} | "
                       f"{row['change']:+.4f} | {row['rank_change']:+d} |")
    return [*out, ""]


def _versions(m: dict[str, Any]) -> list[str]:
    import json

    out = ["## Qrels versions and their rules", ""]
    for v in m["qrels_versions"]:
        rule = md.text(json.dumps(v["params"])) if v["params"] else "-"
        judges = ", ".join(md.text(j) for j in v["judges"]) if v["judges"] else "-"
        out.append(f"- {md.text(v['name'])}{' (default)' if v['default'] else ''}: method "
                   f"{md.text(v['method'])}, rule/parameters {rule}, judges {judges}, relevance "
                   f"from grade {v['relevance_level']}, source {md.text(v['source'] or '-')}, "
                   "made "
                   f"{v['created_at'][:19]}; file `{v['file']}`"
                   + (f", sampled `{v['sampled_file']}`" if v["sampled_file"] else "")
                   + (f", subtopics (ndeval's four columns; plain rows the maximum over "
                      f"subtopics) `{v['subtopic_file']}`" if v.get("subtopic_file") else ""))
    return [*out, ""]


def _distribution(m: dict[str, Any]) -> list[str]:
    return ["## Distribution and maintenance", "",
            f"- Licence: {md.text(m['license'])}. Documents are released as {m['documents']['mode']}.",
            "- People who judged appear under stable pseudonyms that cannot be traced back "
            "from the release; automatic judges are named with backend, model and prompt hash "
            f"(`{layout.JUDGES}`).",
            f"- `sha256sum -c {layout.CHECKSUMS}` checks every file; cite it as "
            f"`{layout.CITATION}` says.", ""]


def _num(value: float) -> str:
    return "undefined" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.3f}"
