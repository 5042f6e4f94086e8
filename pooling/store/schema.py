"""The store's schema, as numbered forward migrations applied in one transaction each.

A store records its schema version in `store_meta`; opening an older store upgrades it, and
opening a newer one is refused with a message to upgrade pooling.
"""

from __future__ import annotations

# Each entry upgrades the schema from version (index) to (index + 1). Never edit a shipped
# migration: add a new one.
MIGRATIONS: list[list[str]] = [
    [
        # Key/value facts about the store itself (schema_version, created_at).
        "CREATE TABLE store_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
        # Queries. extra: further fields of the source as a JSON object text.
        """CREATE TABLE topics (
            query_id VARCHAR NOT NULL, title VARCHAR, description VARCHAR, narrative VARCHAR,
            extra VARCHAR, source VARCHAR)""",
        """CREATE TABLE documents (
            doc_id VARCHAR NOT NULL, title VARCHAR, text VARCHAR, url VARCHAR,
            extra VARCHAR, source VARCHAR)""",
        # One row per imported file, so the same content is recognised when it comes again.
        """CREATE TABLE imports (
            sha256 VARCHAR NOT NULL, kind VARCHAR NOT NULL, source VARCHAR,
            target VARCHAR, imported_at TIMESTAMP NOT NULL)""",
        # Submitted systems. dedupe: how repeated (query_id, doc_id) lines were handled.
        """CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY, tag VARCHAR NOT NULL, team VARCHAR, description VARCHAR,
            source VARCHAR, sha256 VARCHAR, imported_at TIMESTAMP NOT NULL,
            n_rows BIGINT NOT NULL, n_topics INTEGER NOT NULL, pooled BOOLEAN,
            dedupe VARCHAR NOT NULL, duplicates_dropped BIGINT NOT NULL)""",
        # Retrieved documents; rank is as given in the file and never used for ordering.
        """CREATE TABLE run_results (
            run_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL,
            rank BIGINT, score DOUBLE NOT NULL)""",
        # Immutable qrels versions and their rows. grades: the grade scale of the version.
        """CREATE TABLE qrels_versions (
            name VARCHAR PRIMARY KEY, created_at TIMESTAMP NOT NULL, method VARCHAR NOT NULL,
            source VARCHAR, sha256 VARCHAR, grades BIGINT[] NOT NULL,
            relevance_level BIGINT NOT NULL, n_rows BIGINT NOT NULL, n_topics INTEGER NOT NULL,
            params VARCHAR)""",
        """CREATE TABLE qrels (
            version VARCHAR NOT NULL, query_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL,
            relevance BIGINT NOT NULL)""",
        # Named sets of topics (e.g. a track's old and new topics), selectable everywhere.
        """CREATE TABLE topic_subsets (
            name VARCHAR NOT NULL, query_id VARCHAR NOT NULL)""",
        # Judging: rounds snapshot a pooling strategy and its queue; judgments are append-only.
        """CREATE TABLE assessors (
            assessor_id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, contact VARCHAR,
            role VARCHAR NOT NULL, token_sha256 VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL)""",
        """CREATE TABLE rounds (
            round_id VARCHAR PRIMARY KEY, strategy VARCHAR NOT NULL, params VARCHAR,
            seed BIGINT, grades BIGINT[], pooled_runs VARCHAR[], created_at TIMESTAMP NOT NULL)""",
        """CREATE TABLE pool_entries (
            round_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL,
            position BIGINT NOT NULL)""",
        """CREATE TABLE judgments (
            submission_id VARCHAR PRIMARY KEY, round_id VARCHAR, query_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL, assessor_id VARCHAR, kind VARCHAR NOT NULL,
            grade BIGINT, seconds DOUBLE, note VARCHAR, judged_at TIMESTAMP NOT NULL)""",
    ],
    [
        # Rounds gain what a replay needs; assignments say who judges what.
        "ALTER TABLE rounds ADD COLUMN adaptive BOOLEAN DEFAULT false",
        "ALTER TABLE rounds ADD COLUMN candidate_depth BIGINT",
        "ALTER TABLE rounds ADD COLUMN topics VARCHAR[]",
        # doc_id NULL: the whole topic; role: primary | overlap (judged twice for agreement).
        """CREATE TABLE assignments (
            round_id VARCHAR NOT NULL, assessor_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL,
            doc_id VARCHAR, role VARCHAR NOT NULL, assigned_at TIMESTAMP NOT NULL)""",
        # A monotonically increasing sequence orders judgments made in the same instant.
        "CREATE SEQUENCE judgment_seq START 1",
        "ALTER TABLE judgments ADD COLUMN seq BIGINT DEFAULT nextval('judgment_seq')",
    ],
    [
        # Cached evaluation results per (run, qrels version, options, measure column);
        # query_id NULL holds the summary ("all") value. options: the JSON of every setting
        # that changes a value (topic policy, -l, -M, topic restriction).
        """CREATE TABLE eval_results (
            run_id VARCHAR NOT NULL, qrels_version VARCHAR NOT NULL, options VARCHAR NOT NULL,
            measure VARCHAR NOT NULL, query_id VARCHAR, value DOUBLE,
            computed_at TIMESTAMP NOT NULL)""",
    ],
    [
        # What was done to an input on its way in, as a JSON object text: a topic-id map that
        # was applied ({"topic_map": {...}}), the ir_datasets id it came from, format options.
        "ALTER TABLE imports ADD COLUMN details VARCHAR",
    ],
    [
        # Automatic judges are assessors of kind 'model' (people are 'person'): the backend,
        # model name, prompt text and its sha256, and parameters (JSON) are their identity.
        "ALTER TABLE assessors ADD COLUMN kind VARCHAR DEFAULT 'person'",
        "ALTER TABLE assessors ADD COLUMN backend VARCHAR",
        "ALTER TABLE assessors ADD COLUMN model VARCHAR",
        "ALTER TABLE assessors ADD COLUMN prompt VARCHAR",
        "ALTER TABLE assessors ADD COLUMN prompt_sha256 VARCHAR",
        "ALTER TABLE assessors ADD COLUMN params VARCHAR",
        # A judge's confidence in its grade (probability of relevance) and its raw answer.
        "ALTER TABLE judgments ADD COLUMN probability DOUBLE",
        "ALTER TABLE judgments ADD COLUMN rationale VARCHAR",
        # Which judges' judgments a qrels version was made from.
        "ALTER TABLE qrels_versions ADD COLUMN judges VARCHAR[]",
        # Every call a judge made: the answer cache (by model, prompt hash, query_id, doc_id),
        # failures with the text that could not be read, and token usage.
        """CREATE TABLE judge_calls (
            judge_id VARCHAR NOT NULL, model VARCHAR, prompt_sha256 VARCHAR,
            query_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, status VARCHAR NOT NULL,
            grade BIGINT, probability DOUBLE, answer VARCHAR, error VARCHAR,
            prompt_tokens BIGINT, completion_tokens BIGINT, seconds DOUBLE,
            called_at TIMESTAMP NOT NULL)""",
    ],
    [
        # The qrels version every command uses when none is named (`pooling qrels default`):
        # the first version stored, until changed. A store that already has versions starts
        # with its oldest one.
        "INSERT INTO store_meta SELECT 'default_qrels', name FROM qrels_versions "
        "ORDER BY created_at, name LIMIT 1",
        # Judged@k ranks in trec_eval's order (ties by doc_id descending, as pools do); values
        # cached under schema 5 broke ties by doc_id ascending, so they are computed again.
        "DELETE FROM eval_results WHERE measure LIKE 'Judged@%'",
    ],
    [
        # Submission ids are each assessor's own: the key is (assessor_id, submission_id), so
        # one person's id never hides another's judgment. DuckDB cannot change a primary key
        # in place, so the table is rebuilt with the same columns in the same order.
        """CREATE TABLE judgments_scoped (
            submission_id VARCHAR NOT NULL, round_id VARCHAR, query_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL, assessor_id VARCHAR NOT NULL, kind VARCHAR NOT NULL,
            grade BIGINT, seconds DOUBLE, note VARCHAR, judged_at TIMESTAMP NOT NULL,
            seq BIGINT DEFAULT nextval('judgment_seq'), probability DOUBLE, rationale VARCHAR,
            PRIMARY KEY (assessor_id, submission_id))""",
        "INSERT INTO judgments_scoped SELECT submission_id, round_id, query_id, doc_id, "
        "coalesce(assessor_id, ''), kind, grade, seconds, note, judged_at, seq, probability, "
        "rationale FROM judgments",
        "DROP TABLE judgments",
        "ALTER TABLE judgments_scoped RENAME TO judgments",
    ],
    [
        # Access taken back (`pooling assessors revoke`, or a new token issued): the sessions
        # a person began before revoked_at are over. A revoked token's hash is '' (no token
        # hashes to it) until a new token is issued.
        "ALTER TABLE assessors ADD COLUMN revoked_at TIMESTAMP",
        # Web sessions ended on the server (logged out), by the sha256 of their secret id; a
        # row outlives its session's longest possible life only until the next logout.
        """CREATE TABLE ended_sessions (
            session_sha256 VARCHAR PRIMARY KEY, assessor_id VARCHAR NOT NULL,
            ended_at TIMESTAMP NOT NULL)""",
    ],
    [
        # Sampled judging. A round pooled with strata records, for every pooled pair, judged
        # or not, its stratum (a token, compared as text, as sample_eval.pl does) and its
        # inclusion probability (the share of its stratum the round queues). A sampled qrels
        # version keeps every pooled pair's stratum beside its judged rows in `qrels`: a
        # pair with a stratum and no row there was pooled and not sampled (-1 in the file).
        """CREATE TABLE pool_strata (
            round_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL,
            stratum VARCHAR NOT NULL, inclusion_probability DOUBLE NOT NULL)""",
        """CREATE TABLE qrels_strata (
            version VARCHAR NOT NULL, query_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL,
            stratum VARCHAR NOT NULL)""",
    ],
    [
        # Subtopic (diversity) judging: a judgment may grade a document against one of its
        # topic's subtopics (NULL: the document as a whole), and a judge's call may be about
        # one subtopic. A subtopic qrels version keeps its rows in a sibling table, so every
        # reader of `qrels` keeps seeing one grade per pair (its plain rows: the maximum over
        # the topic's subtopics, "relevant to any subtopic").
        "ALTER TABLE judgments ADD COLUMN subtopic VARCHAR",
        "ALTER TABLE judge_calls ADD COLUMN subtopic VARCHAR",
        """CREATE TABLE subtopic_qrels (
            version VARCHAR NOT NULL, query_id VARCHAR NOT NULL, subtopic VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL, relevance BIGINT NOT NULL)""",
    ],
    [
        # Qrels versions derived by an aggregation model (`pooling qrels derive --rule
        # dawid-skene`): each pair's posterior probability of its derived grade, and each
        # worker's estimated confusion matrix (how likely they answer `grade` when the truth
        # is `true_grade`), as the model had them when the version was made.
        """CREATE TABLE qrels_posteriors (
            version VARCHAR NOT NULL, query_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL,
            posterior DOUBLE NOT NULL)""",
        """CREATE TABLE qrels_workers (
            version VARCHAR NOT NULL, assessor_id VARCHAR NOT NULL, true_grade BIGINT NOT NULL,
            grade BIGINT NOT NULL, probability DOUBLE NOT NULL)""",
    ],
    [
        # Crowd rounds: what the organiser decided about a worker of a round, append-only
        # (`flag`: marked below the bar, still judging; `withdraw`: flagged and their remaining
        # queue taken back; `clear`: both undone). The latest decision of a worker holds; the
        # judgments they made stay in the history whatever is decided. `measure`, `value` and
        # `bar` record the figure the decision was taken on (e.g. accuracy on gold 0.41 < 0.6).
        """CREATE TABLE worker_decisions (
            round_id VARCHAR NOT NULL, assessor_id VARCHAR NOT NULL, decision VARCHAR NOT NULL,
            reason VARCHAR, measure VARCHAR, value DOUBLE, bar DOUBLE, decided_by VARCHAR,
            decided_at TIMESTAMP NOT NULL, seq BIGINT DEFAULT nextval('judgment_seq'))""",
    ],
    [
        # Juries of model judges (`pooling judge --judge A --judge B --samples N`): a call's
        # sample number (NULL: a judge's first, its own answer), so the answer cache never
        # gives sample 1's answer to sample 2, and the round it was made for (NULL: outside a
        # round, or made before this version), so usage is counted per round. A judge's price
        # per million prompt and completion tokens, append-only: the latest one holds.
        "ALTER TABLE judge_calls ADD COLUMN sample BIGINT",
        "ALTER TABLE judge_calls ADD COLUMN round_id VARCHAR",
        """CREATE TABLE judge_prices (
            judge_id VARCHAR NOT NULL, price_in DOUBLE NOT NULL, price_out DOUBLE NOT NULL,
            set_at TIMESTAMP NOT NULL)""",
    ],
    [
        # Crowd rounds: every document handed to a worker (a page shown, an API `next`, a
        # batch exported) and until when its claim holds. A worker may answer only what they
        # were handed, also after a restart; a live claim counts toward the pair's K for the
        # others. Append-only: a worker's latest row of a document holds.
        """CREATE TABLE crowd_handouts (
            round_id VARCHAR NOT NULL, assessor_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL, handed_at TIMESTAMP NOT NULL,
            lease_until TIMESTAMP NOT NULL)""",
    ],
    [
        # What was done to stored runs after their import (`pooling runs remove|replace|
        # rename`), append-only: the action, the run before (`run_id`) and after
        # (`new_run_id`: a rename's new name, NULL after a removal), the old content's checksum,
        # source and size, the new content's (a replacement), who did it, when and why.
        """CREATE TABLE run_changes (
            run_id VARCHAR NOT NULL, action VARCHAR NOT NULL, new_run_id VARCHAR,
            old_sha256 VARCHAR, old_source VARCHAR, old_rows BIGINT, new_sha256 VARCHAR,
            new_source VARCHAR, pooled_in VARCHAR[], forced BOOLEAN NOT NULL, reason VARCHAR,
            changed_by VARCHAR, changed_at TIMESTAMP NOT NULL,
            seq BIGINT DEFAULT nextval('judgment_seq'))""",
    ],
    [
        # The judged item (`pooling.judging.item_types`): a round names its item type, and a
        # judgment grades its unit whole (part NULL) or one part of it. A round that recorded
        # subtopics judged them; every other round judged documents. The subtopic a judgment
        # or a judge's call graded is its part.
        "ALTER TABLE rounds ADD COLUMN item_type VARCHAR DEFAULT 'document'",
        "UPDATE rounds SET item_type = CASE WHEN json_extract(params, '$.subtopics') IS NOT NULL "
        "AND json_extract(params, '$.subtopics')::VARCHAR NOT IN ('null', '{}') "
        "THEN 'subtopic' ELSE 'document' END",
        "ALTER TABLE judgments RENAME COLUMN subtopic TO part",
        "ALTER TABLE judge_calls RENAME COLUMN subtopic TO part",
    ],
    [
        # Generated answers (`pooling import answers`): an answer run as imported (its form
        # and file), each answer as given (`raw`: its JSON line, or its response text) with
        # the segments it may cite (ranked as given, also stored as a ranked run of the same
        # run_id), and its sentences with the segments each cites (`cited`: their indexes
        # into reference_ids, as the 2024 form numbers them).
        """CREATE TABLE answer_runs (
            run_id VARCHAR PRIMARY KEY, format VARCHAR NOT NULL, source VARCHAR,
            sha256 VARCHAR NOT NULL, imported_at TIMESTAMP NOT NULL, n_answers BIGINT NOT NULL,
            n_topics INTEGER NOT NULL, team VARCHAR, description VARCHAR)""",
        """CREATE TABLE answers (
            run_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, topic VARCHAR,
            response_length BIGINT, reference_ids VARCHAR[] NOT NULL, line BIGINT,
            raw VARCHAR NOT NULL)""",
        """CREATE TABLE answer_sentences (
            run_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, sentence INTEGER NOT NULL,
            text VARCHAR NOT NULL, citations VARCHAR[] NOT NULL, cited INTEGER[])""",
        # Nugget banks (`pooling nuggets`): a bank is a named line of nugget lists (the
        # people's, a model's), one per topic. Every edit of it is kept, append-only: `add`,
        # `reword`, `grade` (importance), `merge` (the nugget folded into `merged_into`),
        # `delete`, `move` (to `position`), with who made it (`provenance`: person, model or
        # imported; `made_by`: the assessor, the judge or the file). A version is a frozen
        # snapshot of a bank (`nuggets`: each topic's nuggets in their order), made by a
        # freeze, the bank as of edit `last_seq`; a round judges one version.
        """CREATE TABLE nugget_edits (
            seq BIGINT DEFAULT nextval('judgment_seq'), bank VARCHAR NOT NULL,
            query_id VARCHAR NOT NULL, nugget_id VARCHAR NOT NULL, action VARCHAR NOT NULL,
            text VARCHAR, importance VARCHAR, position DOUBLE, merged_into VARCHAR,
            provenance VARCHAR NOT NULL, made_by VARCHAR, made_at TIMESTAMP NOT NULL,
            note VARCHAR)""",
        """CREATE TABLE nugget_versions (
            name VARCHAR PRIMARY KEY, bank VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL,
            method VARCHAR NOT NULL, source VARCHAR, sha256 VARCHAR, last_seq BIGINT,
            n_nuggets BIGINT NOT NULL, n_topics INTEGER NOT NULL, params VARCHAR)""",
        """CREATE TABLE nuggets (
            version VARCHAR NOT NULL, query_id VARCHAR NOT NULL, nugget_id VARCHAR NOT NULL,
            position INTEGER NOT NULL, text VARCHAR NOT NULL, importance VARCHAR NOT NULL,
            provenance VARCHAR NOT NULL, made_by VARCHAR)""",
        # Nugget assignments: immutable versions of each answer's support grade on each nugget
        # of the nugget version it was judged on (2 support, 1 partial support, 0 none),
        # derived from an assignment round by a recorded rule, or imported.
        """CREATE TABLE assignment_versions (
            name VARCHAR PRIMARY KEY, nugget_version VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL, method VARCHAR NOT NULL, source VARCHAR,
            grades BIGINT[] NOT NULL, n_rows BIGINT NOT NULL, n_answers BIGINT NOT NULL,
            n_topics INTEGER NOT NULL, params VARCHAR)""",
        """CREATE TABLE nugget_assignments (
            version VARCHAR NOT NULL, query_id VARCHAR NOT NULL, run_id VARCHAR NOT NULL,
            nugget_id VARCHAR NOT NULL, grade BIGINT NOT NULL)""",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)

# Tables whose content defines the store (used by checks that nothing changed).
DATA_TABLES = [
    "topics", "documents", "imports", "runs", "run_results", "qrels_versions", "qrels",
    "topic_subsets", "assessors", "rounds", "pool_entries", "judgments", "assignments",
    "eval_results", "judge_calls", "pool_strata", "qrels_strata", "subtopic_qrels",
    "qrels_posteriors",
    "qrels_workers", "worker_decisions", "judge_prices", "crowd_handouts", "run_changes",
    "answer_runs", "answers", "answer_sentences", "nugget_edits", "nugget_versions", "nuggets",
    "assignment_versions", "nugget_assignments",
]
