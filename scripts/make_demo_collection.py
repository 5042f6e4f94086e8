"""Generate collections/demo: a small simulated TREC-style campaign, byte-identical every run.

50 topics (101-150), a few thousand documents, 20 runs from 8 teams of varied quality, the
hidden graded truth (0-2) of every topic's candidates, and a MANIFEST.json with checksums and
counts. Everything comes from one numpy Generator with a fixed seed and a built-in vocabulary.

Each document has a latent (subject, aspect, focus); topic t asks about one subject and one
aspect. Truth: 2 = the topic's subject and aspect, in focus; 1 = both, in passing; 0 = else.
Systems score documents by BM25 on the topic text plus a system-specific share of the truth
(a stand-in for better models) and of noise, so stronger systems agree more with the truth.

    python scripts/make_demo_collection.py [--out collections/demo]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SEED = 20240607
FIRST_TOPIC = 101
DOCS_PER_TOPIC = {"strong": (4, 12), "passing": (4, 14), "other_aspect": (8, 20)}
BACKGROUND_DOCS = 1500
DEPTH = 100
SUBTOPIC_TOPICS = 5  # topics 101-105 also come with subtopics, in subtopics.xml
MAX_SUBTOPICS = 4
REPO_ROOT = Path(__file__).resolve().parent.parent

# subject phrase | words documents about it use
SUBJECTS = """\
electric vehicles|battery charging car motor range automaker
wind turbines|turbine blade wind farm offshore rotor
coral reefs|coral reef ocean bleaching fish lagoon
honey bees|bee hive colony pollination beekeeper nectar
nuclear power|reactor uranium plant nuclear radiation fuel
space telescopes|telescope orbit galaxy mirror astronomers lens
antibiotic resistance|antibiotic bacteria infection resistance hospital drug
high speed rail|train rail railway station track passenger
plastic recycling|plastic recycling packaging bottle waste sorting
urban heat islands|heat city pavement temperature trees asphalt
desalination plants|desalination seawater membrane brine water plant
wildfire prevention|wildfire forest fire brush firefighters burn
self driving cars|autonomous driverless sensor lidar vehicle software
food stamps|food benefits households grocery assistance hunger
minimum wage|wage minimum workers hourly pay employers
rare earth mining|rare earth mining minerals ore magnet
tuberculosis vaccines|tuberculosis vaccine immunization trial infection doses
ocean shipping|shipping container port vessel cargo freight
hydroelectric dams|dam hydroelectric reservoir river turbine power
drinking water lead|lead pipes drinking water contamination utility
solar panels|solar panel photovoltaic rooftop silicon inverter
organic farming|organic farm crops pesticide soil farmers
bird migration|birds migration flyway wetlands songbirds nesting
cyber attacks|hackers cyber malware ransomware breach network
satellite internet|satellite broadband internet constellation launch antenna
obesity in children|obesity children diet school meals exercise
deep sea mining|seabed nodules mining deep ocean metals
glacier retreat|glacier ice melting retreat mountain meltwater
public libraries|library books librarians reading branch lending
airport noise|airport noise flights runway aircraft residents
micro loans|microcredit loans borrowers lenders villages microfinance
elephant poaching|elephant ivory poaching rangers tusks wildlife
carbon capture|carbon capture storage emissions co2 injection
pension reform|pension retirement benefits funds retirees contributions
opioid addiction|opioid addiction overdose painkillers treatment prescriptions
language extinction|languages speakers extinction dialect endangered linguists
tidal energy|tidal energy currents lagoon generators marine
bicycle commuting|bicycle cycling bike lanes commuters helmet
counterfeit medicines|counterfeit medicines fake pharmacies tablets drugs
hurricane forecasting|hurricane storm forecast landfall winds meteorologists
lithium batteries|lithium battery cells cathode cobalt charging
sugar taxes|sugar tax soda drinks beverages levy
volcano monitoring|volcano eruption lava seismic ash magma
fish farming|aquaculture salmon fish farms pens feed
noise pollution|noise decibels traffic sound pollution quiet
mobile banking|mobile banking phone payments accounts money
avalanche safety|avalanche snow slope skiers rescue beacon
malaria nets|malaria mosquito nets bednets insecticide parasite
smart meters|smart meter electricity readings utility grid
urban farming|rooftop gardens urban farming vegetables greenhouse hydroponic
"""

# title word | phrase used in descriptions | words documents about it use
ASPECTS = """\
Costs|the costs and funding of|cost budget funding price expense subsidy billion
Regulation|government regulation of|law regulation ban policy agency rules legislation
Health Effects|the health effects of|health risk disease exposure patients symptoms
Safety Incidents|accidents and safety incidents involving|accident injury failure incident investigation hazard
Research Advances|scientific advances in|research discovery scientists laboratory breakthrough experiment
Public Opinion|public opinion about|survey poll protest residents opposition support
International Cooperation|international cooperation on|treaty agreement countries summit partnership nations
Employment|the effect on jobs of|jobs workers employment unions wages layoffs
Environmental Impact|the environmental impact of|pollution emissions wildlife habitat damage climate
Legal Disputes|lawsuits and legal disputes over|lawsuit court judge ruling settlement damages
"""

FILLER = (
    "report officials week year region plans new local national recent group company "
    "government program project experts people market growth figures data changes area "
    "community system services committee council industry analysts statement month"
).split()
PLACES = "Ohio Texas Kenya Norway Chile Japan Brazil Ontario Bavaria Queensland Peru Wales".split()
WHEN = "on Monday|on Tuesday|last week|this year|in March|in the autumn|since 1998|recently".split(
    "|"
)

# Sentence templates: {S} subject phrase, {s}/{s2} subject words, {a}/{a2} aspect words,
# {f}/{f2} filler words, {P} a place, {w} a time.
ON_TOPIC = [
    "The {a} of {S} drew new attention {w}, {f} said.",
    "{P} {f} reported that {s} {a} rose sharply {w}.",
    "Critics say the {a} linked to {s} and {s2} was underestimated.",
    "A {f} study of {s} found clear evidence of {a} and {a2}.",
    "Officials in {P} discussed {a} tied to the {s} {f} {w}.",
    "The debate over {S} and {a2} continues in {P}.",
]
SUBJECT_ONLY = [
    "The {s} {f} in {P} expanded {w}.",
    "Engineers described how {s} and {s2} work in practice.",
    "Interest in {S} has grown among the {f} in {P}.",
    "A new {s} {f} opened {w}, with more {s2} planned.",
]
GENERIC = [
    "The {f} {f2} was announced {w} in {P}.",
    "Local {f} expect the {f2} to change next year.",
    "The {f} said more {f2} would follow.",
    "{P} {f} published new {f2} {w}.",
]


@dataclass(frozen=True)
class Topic:
    query_id: str
    subject: int
    aspect: int


@dataclass(frozen=True)
class Document:
    subject: int | None  # None: general news about no subject
    aspect: int
    focus: bool  # in focus (the document is about the aspect) or in passing
    title: str
    text: str


Lists = list[list[str]]
# name, team, description, pooled, model: (query, k1, b, truth weight, noise sd, depth, decimals)
System = tuple[str, str, str, bool, tuple[str, float, float, float, float, int, int]]
# fmt: off
SYSTEMS: list[System] = [
    ("sysA_neural", "teamA", "BM25 re-ranked by a fine-tuned cross-encoder", True, ("td", 1.2, 0.75, 1.0, 0.90, 100, 4)),
    ("sysA_rm3", "teamA", "BM25 with RM3 pseudo-relevance feedback", True, ("td", 1.2, 0.75, 0.5, 1.10, 100, 4)),
    ("sysA_bm25", "teamA", "BM25 baseline on titles", False, ("t", 1.2, 0.75, 0.2, 1.20, 100, 4)),
    ("sysB_rerank", "teamB", "query likelihood re-ranked with a dense encoder", True, ("td", 0.9, 0.4, 0.8, 1.00, 100, 3)),
    ("sysB_ql_desc", "teamB", "query likelihood on title and description", True, ("td", 0.9, 0.4, 0.3, 1.30, 100, 3)),
    ("sysB_ql", "teamB", "query likelihood on titles", False, ("t", 0.9, 0.4, 0.2, 1.40, 100, 3)),
    ("sysC_dfr_prf", "teamC", "DFR with query expansion", True, ("td", 1.5, 0.6, 0.4, 1.20, 100, 4)),
    ("sysC_dfr", "teamC", "DFR on title and description", True, ("td", 1.5, 0.6, 0.2, 1.30, 100, 4)),
    ("sysC_dfr_title", "teamC", "DFR on titles only", False, ("t", 1.5, 0.6, 0.1, 1.50, 100, 4)),
    ("sysD_tfidf", "teamD", "classic tf-idf vector space model", True, ("t", 2.0, 1.0, 0.0, 1.80, 100, 2)),
    ("sysD_boolean", "teamD", "coordination-level matching: many tied scores", True, ("td", 0.0, 0.0, 0.0, 0.00, 100, 0)),
    ("sysE_hybrid", "teamE", "sparse and dense fusion", True, ("td", 1.2, 0.75, 0.7, 1.10, 100, 4)),
    ("sysE_dense", "teamE", "bi-encoder dense retrieval", True, ("td", 0.6, 0.3, 0.6, 1.60, 100, 4)),
    ("sysE_dense_small", "teamE", "small bi-encoder, untuned", False, ("td", 0.6, 0.3, 0.3, 2.20, 100, 4)),
    ("sysF_lsi", "teamF", "latent semantic indexing, 100 dimensions", True, ("td", 1.0, 0.5, 0.1, 2.50, 100, 3)),
    ("sysF_random", "teamF", "near-random control run", True, ("t", 1.0, 0.5, 0.0, 20.00, 100, 3)),
    ("sysG_bm25", "teamG", "BM25 with stemming", True, ("t", 1.2, 0.75, 0.2, 1.30, 100, 4)),
    ("sysG_short", "teamG", "BM25, top 20 only", True, ("t", 1.2, 0.75, 0.2, 1.30, 20, 4)),
    ("sysH_baseline", "teamH", "out-of-the-box search engine", True, ("t", 1.2, 0.75, 0.0, 2.00, 100, 2)),
    ("sysH_noisy", "teamH", "student system with a tokenisation bug", True, ("td", 1.2, 0.75, 0.0, 4.00, 100, 2)),
]
# fmt: on


def _parse_lists(text: str) -> Lists:
    return [line.split("|") for line in text.strip().splitlines()]


def _aspects() -> Lists:
    """The aspects, their title words added to their document words so that titles match."""
    return [[t, p, f"{words} {t.lower()}"] for t, p, words in _parse_lists(ASPECTS)]


def make_topics(rng: np.random.Generator, subjects: Lists, aspects: Lists) -> list[Topic]:
    aspect_of = rng.permutation(np.arange(len(subjects)) % len(aspects))
    return [Topic(str(FIRST_TOPIC + i), i, int(aspect_of[i])) for i in range(len(subjects))]


def topic_record(
    topic: Topic, subjects: Lists, aspects: Lists, rng: np.random.Generator
) -> dict[str, str]:
    subject, words = subjects[topic.subject]
    title_word, phrase, aspect_words = aspects[topic.aspect]
    other = aspects[(topic.aspect + 1 + int(rng.integers(len(aspects) - 1))) % len(aspects)]
    examples = rng.choice(aspect_words.split(), size=3, replace=False)
    s_examples = rng.choice(words.split(), size=2, replace=False)
    return {
        "query_id": topic.query_id,
        "title": f"{subject.title()} {title_word}",
        "description": f"Find reports on {phrase} {subject}.",
        "narrative": (
            f"Relevant documents discuss {phrase} {subject}, for example {examples[0]}, "
            f"{examples[1]} or {examples[2]} involving {s_examples[0]} or {s_examples[1]}. "
            f"Highly relevant documents are mainly about this and give specific details. "
            f"Documents about {other[1]} {subject} alone, or that mention {subject} only in "
            f"passing, are not relevant."
        ),
    }


def make_document(
    rng: np.random.Generator,
    subject: int | None,
    aspect: int,
    focus: bool,
    subjects: Lists,
    aspects: Lists,
) -> Document:
    """Title and 3-6 sentences; on-topic sentences mix subject and aspect words."""
    a_words = aspects[aspect][2].split()
    s_phrase, s_words = (
        (subjects[subject][0], subjects[subject][1].split()) if subject is not None else ("", [])
    )

    def fill(template: str) -> str:
        def pick(words: list[str]) -> str:
            return str(words[int(rng.integers(len(words)))])

        out = template.format(
            S=s_phrase,
            s=pick(s_words) if s_words else "",
            s2=pick(s_words) if s_words else "",
            a=pick(a_words),
            a2=pick(a_words),
            f=pick(FILLER),
            f2=pick(FILLER),
            P=pick(PLACES),
            w=pick(WHEN),
        )
        return out[0].upper() + out[1:]

    n = int(rng.integers(3, 7))
    if subject is None:
        kinds = ["generic"] * n
    else:
        on = n - 1 if focus else 1
        kinds = ["on"] * on + ["subject"] * (n - on - 1) + ["generic"]
        rng.shuffle(kinds)
    pools = {"on": ON_TOPIC, "subject": SUBJECT_ONLY, "generic": GENERIC}
    sentences = [fill(pools[k][int(rng.integers(len(pools[k])))]) for k in kinds]
    if subject is None:
        title = fill("{P} {f} {f2} update")
    elif focus:
        title = fill("{S}: {a} and {a2} in {P}")
    else:
        title = fill("{P} {s} {f} news")
    return Document(subject, aspect, focus, title, " ".join(sentences))


def make_documents(
    rng: np.random.Generator, topics: list[Topic], subjects: Lists, aspects: Lists
) -> list[Document]:
    docs: list[Document] = []
    n_aspects = len(aspects)
    for topic in topics:
        for kind, (low, high) in DOCS_PER_TOPIC.items():
            for _ in range(int(rng.integers(low, high + 1))):
                if kind == "other_aspect":
                    aspect = (topic.aspect + 1 + int(rng.integers(n_aspects - 1))) % n_aspects
                    focus = bool(rng.random() < 0.7)
                else:
                    aspect, focus = topic.aspect, kind == "strong"
                docs.append(make_document(rng, topic.subject, aspect, focus, subjects, aspects))
    for _ in range(BACKGROUND_DOCS):
        subject = int(rng.integers(len(subjects))) if rng.random() < 0.5 else None
        aspect = int(rng.integers(n_aspects))
        docs.append(
            make_document(rng, subject, aspect, bool(rng.random() < 0.5), subjects, aspects)
        )
    order = rng.permutation(len(docs))
    return [docs[i] for i in order]


def truth_matrix(topics: list[Topic], docs: list[Document]) -> np.ndarray:
    """Graded truth, topics x documents: 2 in focus, 1 in passing, 0 otherwise."""
    truth = np.zeros((len(topics), len(docs)), dtype=np.int64)
    for j, doc in enumerate(docs):
        for i, topic in enumerate(topics):
            if doc.subject == topic.subject and doc.aspect == topic.aspect:
                truth[i, j] = 2 if doc.focus else 1
    return truth


TOKEN = re.compile(r"[a-z0-9]+")


def term_counts(texts: list[str]) -> tuple[dict[str, int], np.ndarray]:
    vocab: dict[str, int] = {}
    rows = []
    for text in texts:
        ids = [vocab.setdefault(tok, len(vocab)) for tok in TOKEN.findall(text.lower())]
        rows.append(ids)
    tf = np.zeros((len(texts), len(vocab)), dtype=np.float64)
    for i, ids in enumerate(rows):
        np.add.at(tf[i], ids, 1.0)
    return vocab, tf


def bm25(tf: np.ndarray, vocab: dict[str, int], query: str, k1: float, b: float) -> np.ndarray:
    """BM25 scores of every document; k1 = 0 gives coordination-level matching (terms matched)."""
    terms = sorted({vocab[t] for t in TOKEN.findall(query.lower()) if t in vocab})
    sub = tf[:, terms]
    if k1 == 0:
        return (sub > 0).sum(axis=1).astype(np.float64)
    df = (sub > 0).sum(axis=0)
    idf = np.log(1 + (len(tf) - df + 0.5) / (df + 0.5))
    length = tf.sum(axis=1, keepdims=True)
    norm = k1 * (1 - b + b * length / length.mean())
    return (idf * sub * (k1 + 1) / (sub + norm)).sum(axis=1)


def run_lines(
    rng: np.random.Generator,
    system: System,
    records: list[dict[str, str]],
    index: tuple[dict[str, int], np.ndarray],
    truth: np.ndarray,
    doc_ids: np.ndarray,
) -> list[str]:
    """One run's lines: per topic, the top `depth` matching documents by the system's score."""
    name, _, _, _, (query_fields, k1, b, truth_weight, noise, depth, decimals) = system
    vocab, tf = index
    lines: list[str] = []
    for i, record in enumerate(records):
        query = record["title"] + (" " + records[i]["description"] if query_fields == "td" else "")
        lexical = bm25(tf, vocab, query, k1, b)
        matched = lexical > 0
        scale = lexical[matched].std() if matched.any() else 1.0
        score = (
            lexical / (scale or 1.0)
            + truth_weight * truth[i]
            + noise * rng.standard_normal(len(lexical))
        )
        if k1 == 0:
            score = lexical  # coordination level: integer scores, many ties
        score = np.round(score, decimals)
        candidates = np.flatnonzero(matched)
        # Highest score first; ties written in doc_id order (trec_eval re-sorts them anyway).
        order = candidates[np.lexsort((doc_ids[candidates], -score[candidates]))][:depth]
        for rank, j in enumerate(order, start=1):
            lines.append(
                f"{record['query_id']} Q0 {doc_ids[j]} {rank} {score[j]:.{decimals}f} {name}\n"
            )
    return lines


README = """\
# demo: a simulated TREC-style campaign

Generated by `scripts/make_demo_collection.py` (fixed seed; rerun it to get the same bytes).
Not real data: the topics, documents and runs are made up from a small built-in vocabulary.

| file | what |
|---|---|
| `topics.jsonl` | 50 topics, ids 101-150: query_id, title, description, narrative |
| `documents.jsonl` | the documents: doc_id, title, text |
| `runs/<run_id>.run` | 20 runs in TREC format (`query_id Q0 doc_id rank score run_id`), up to 100 documents a topic; tied scores are written in doc_id order |
| `runs.tsv` | file, run_id, team, description, pooled (yes/no) of each run |
| `subtopics.xml` | topics 101-105 again as TREC Web topics with subtopics (each an aspect of the topic's subject), for a diversity round in a store of their own |
| `subtopics.qrels` | the hidden truth of those five topics per subtopic, in ndeval's format (`query_id subtopic doc_id grade`): a document of the topic's subject is graded on the subtopic of its aspect; other retrieved documents 0 on subtopic 1 |
| `truth.qrels` | hidden graded truth (0-2) of every retrieved or relevant document, TREC qrels format; for simulating assessors, not for pooling |
| `answers.jsonl` | three answer runs over topics 101-110 in the TREC 2024 RAG format (`run_id, topic_id, references, response_length, answer` of cited sentences): ragA writes from documents of grade 2, ragB of grade 1, ragC from retrieved documents of grade 0 |
| `MANIFEST.json` | sha256, size and counts of every file |

Truth: 2 = about the topic's subject and aspect, 1 = mentions both in passing, 0 = otherwise.
"""


ANSWER_TOPICS = 10  # topics 101-110 are answered by the answer runs
# (run_id, grade of the documents it writes from, documents it cites per topic)
ANSWER_RUNS = (("ragA_grounded", 2, 4), ("ragB_brief", 1, 2), ("ragC_offtopic", 0, 3))


def answer_runs(records: list[dict], docs: list[Document], doc_ids: np.ndarray,
                truth: np.ndarray, retrieved: np.ndarray) -> str:
    """Three answer runs in the TREC 2024 RAG format over the first topics: each answer a
    sentence per document it draws from (the document's first sentence), citing it among
    its references; ragA draws from documents of grade 2, ragB from grade 1, ragC from
    retrieved documents of grade 0. Deterministic: no random draw."""
    lines = []
    for run_id, grade, n in ANSWER_RUNS:
        for i, record in enumerate(records[:ANSWER_TOPICS]):
            pool = np.flatnonzero((truth[i] == grade) & (retrieved[i] | (grade > 0)))[:n]
            refs = [str(doc_ids[j]) for j in pool]
            sentences = [{"text": docs[j].text.split(". ")[0].rstrip(".") + ".", "citations": [k]}
                         for k, j in enumerate(pool)]
            words = sum(len(x["text"].split()) for x in sentences)
            lines.append(json.dumps({"run_id": run_id, "topic_id": record["query_id"],
                                     "topic": record["title"], "references": refs,
                                     "response_length": words, "answer": sentences}))
    return "".join(line + "\n" for line in lines)


def subtopic_aspects(topic: Topic, docs: list[Document], n_aspects: int) -> list[int]:
    """A topic's subtopics as aspects of its subject, drawing nothing from the generator:
    the topic's own aspect first, then the aspects its subject's other documents are about,
    most documents first (ties in the aspects' order), up to MAX_SUBTOPICS in all."""
    counts = [0] * n_aspects
    for d in docs:
        if d.subject == topic.subject and d.aspect != topic.aspect:
            counts[d.aspect] += 1
    others = sorted((a for a in range(n_aspects) if counts[a]), key=lambda a: (-counts[a], a))
    return [topic.aspect, *others][:MAX_SUBTOPICS]


def subtopic_topics(topics: list[Topic], docs: list[Document], subjects: Lists,
                    aspects: Lists) -> str:
    """The first SUBTOPIC_TOPICS topics again as TREC Web topics with subtopics (faceted: the
    query is the subject alone, each subtopic one of its aspects), for a diversity round in a
    store of their own (stored topics are never replaced)."""
    from xml.sax.saxutils import escape

    lines = ["<webtrack>"]
    for topic in topics[:SUBTOPIC_TOPICS]:
        subject = subjects[topic.subject][0]
        lines.append(f'<topic number="{topic.query_id}" type="faceted">')
        lines.append(f"  <query>{escape(subject)}</query>")
        lines.append(f"  <description>Find reports on {escape(subject)}, on any of its "
                     "aspects.</description>")
        for n, a in enumerate(subtopic_aspects(topic, docs, len(aspects)), start=1):
            lines.append(f'  <subtopic number="{n}" type="inf">Find reports on '
                         f"{escape(aspects[a][1])} {escape(subject)}.</subtopic>")
        lines.append("</topic>")
    lines.append("</webtrack>")
    return "\n".join(lines) + "\n"


def subtopic_truth(topics: list[Topic], docs: list[Document], doc_ids: np.ndarray,
                   retrieved: np.ndarray, n_aspects: int) -> str:
    """The hidden truth of subtopics.xml's topics per subtopic, in ndeval's format (`query_id
    subtopic doc_id grade`): a document of the topic's subject is graded on the subtopic of
    its aspect, 2 in focus and 1 in passing; every other document some run retrieved is
    graded 0 on subtopic 1, so it counts as judged."""
    lines = []
    for i, topic in enumerate(topics[:SUBTOPIC_TOPICS]):
        number = {a: n for n, a in enumerate(subtopic_aspects(topic, docs, n_aspects), start=1)}
        rows = []
        for j, d in enumerate(docs):
            if d.subject == topic.subject and d.aspect in number:
                rows.append((number[d.aspect], str(doc_ids[j]), 2 if d.focus else 1))
            elif retrieved[i, j]:
                rows.append((1, str(doc_ids[j]), 0))
        lines += [f"{topic.query_id} {n} {doc} {grade}\n" for n, doc, grade in sorted(rows)]
    return "".join(lines)


def build(out: Path) -> None:
    """Write the whole collection into `out` (which must not exist)."""
    rng = np.random.default_rng(SEED)
    subjects, aspects = _parse_lists(SUBJECTS), _aspects()
    topics = make_topics(rng, subjects, aspects)
    records = [topic_record(t, subjects, aspects, rng) for t in topics]
    docs = make_documents(rng, topics, subjects, aspects)
    doc_ids = np.array([f"D{j + 1:05d}" for j in range(len(docs))])
    truth = truth_matrix(topics, docs)
    index = term_counts([f"{d.title} {d.text}" for d in docs])

    files: dict[str, bytes] = {}
    files["topics.jsonl"] = "".join(json.dumps(r) + "\n" for r in records).encode()
    files["documents.jsonl"] = "".join(
        json.dumps({"doc_id": str(doc_ids[j]), "title": d.title, "text": d.text}) + "\n"
        for j, d in enumerate(docs)
    ).encode()
    meta = ["file\trun_id\tteam\tdescription\tpooled\n"]
    retrieved = np.zeros_like(truth, dtype=bool)
    topic_row = {t.query_id: i for i, t in enumerate(topics)}
    doc_col = {str(d): j for j, d in enumerate(doc_ids)}
    for system in SYSTEMS:
        name, team, description, pooled, _ = system
        lines = run_lines(rng, system, records, index, truth, doc_ids)
        files[f"runs/{name}.run"] = "".join(lines).encode()
        for line in lines:
            qid, _, doc_id, *_ = line.split()
            retrieved[topic_row[qid], doc_col[doc_id]] = True
        meta.append(
            f"runs/{name}.run\t{name}\t{team}\t{description}\t{'yes' if pooled else 'no'}\n"
        )
    files["runs.tsv"] = "".join(meta).encode()
    # The truth covers every document some run retrieved and every relevant document.
    qrels = [
        f"{t.query_id} 0 {doc_ids[j]} {truth[i, j]}\n"
        for i, t in enumerate(topics)
        for j in np.flatnonzero(retrieved[i] | (truth[i] > 0))
    ]
    files["truth.qrels"] = "".join(qrels).encode()
    files["subtopics.xml"] = subtopic_topics(topics, docs, subjects, aspects).encode()
    files["subtopics.qrels"] = subtopic_truth(topics, docs, doc_ids, retrieved,
                                              len(aspects)).encode()
    files["answers.jsonl"] = answer_runs(records, docs, doc_ids, truth, retrieved).encode()
    files["README.md"] = README.encode()
    files["MANIFEST.json"] = manifest(files, topics, docs, truth).encode()

    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def manifest(
    files: dict[str, bytes], topics: list[Topic], docs: list[Document], truth: np.ndarray
) -> str:
    """MANIFEST.json: sha256, size and line count of every file, plus what each holds."""
    entries: dict[str, dict[str, object]] = {}
    for rel, data in sorted(files.items()):
        lines = data.decode().splitlines()
        entry: dict[str, object] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "lines": len(lines),
        }
        if rel == "topics.jsonl":
            entry["topics"] = len(lines)
        elif rel == "documents.jsonl":
            entry["documents"] = len(lines)
        elif rel == "runs.tsv":
            entry["runs"] = len(lines) - 1
        elif rel.startswith("runs/"):
            fields = [line.split() for line in lines]
            entry.update(run_id=fields[0][5], topics=len({f[0] for f in fields}))
        elif rel == "subtopics.xml":
            entry.update(topics=sum("<topic " in line for line in lines),
                         subtopics=sum("<subtopic " in line for line in lines))
        elif rel == "subtopics.qrels":
            fields = [line.split() for line in lines]
            entry.update(topics=len({f[0] for f in fields}),
                         relevant=sum(int(f[3]) > 0 for f in fields))
        elif rel == "truth.qrels":
            fields = [line.split() for line in lines]
            entry.update(
                qrels_rows=len(fields),
                topics=len({f[0] for f in fields}),
                relevant=sum(int(f[3]) > 0 for f in fields),
            )
        entries[rel] = entry
    counts = {
        "topics": len(topics),
        "documents": len(docs),
        "runs": sum(rel.startswith("runs/") for rel in files),
        "teams": len({team for _, team, *_ in SYSTEMS}),
        "pooled_runs": sum(pooled for *_, pooled, _ in SYSTEMS),
        "qrels_rows": entries["truth.qrels"]["qrels_rows"],
        "relevant": int((truth > 0).sum()),
    }
    body = {
        "name": "demo",
        "description": "Simulated TREC-style campaign for tutorials and tests; not real data.",
        "generator": "scripts/make_demo_collection.py",
        "seed": SEED,
        "counts": counts,
        "files": entries,
    }
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def generate(out: Path) -> None:
    """Regenerate `out` atomically: build beside it, then swap the folders."""
    out = out.resolve()
    tmp = out.with_name(f".{out.name}.tmp")
    old = out.with_name(f".{out.name}.old")
    for stale in (tmp, old):
        shutil.rmtree(stale, ignore_errors=True)
    build(tmp)
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "collections" / "demo")
    args = parser.parse_args()
    generate(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
