"""The OpenAPI 3.1 description of the assessors' JSON API (`pooling.web.api_views`).

Written by hand, in one place, and served at /api/v1/openapi.json; a test checks that it
names exactly the routes the API has, and that its structure is sound.
"""

from __future__ import annotations

from typing import Any

API_ROOT = "/api/v1"
VERSION = "1"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _object(properties: dict[str, Any], required: list[str] | None = None, *,
            optional: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    """An object schema; every property is required unless `required` names them or it is
    `optional`."""
    needed = required or [p for p in properties if p not in optional]
    return {"type": "object", "properties": properties, "required": needed, **extra}


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
NULLABLE_STRING = {"type": ["string", "null"]}
NULLABLE_INTEGER = {"type": ["integer", "null"]}
SUBMISSION_ID = {"type": "string", "pattern": "^[A-Za-z0-9_-]{16,64}$",
                 "description": "Unique per submission: a retry with the same id is stored once."}
HANDOUT = {"type": "string", "description": "A crowd round's worker only: the token that proves "
           "this document was handed to the caller. Send it back with the judgment: it keeps "
           "the answer acceptable even when the server restarted before recording the handout."}

SCHEMAS: dict[str, dict[str, Any]] = {
    "Error": _object({"error": STRING}),
    "Topic": _object({"query_id": STRING, "title": NULLABLE_STRING,
                      "description": NULLABLE_STRING, "narrative": NULLABLE_STRING}),
    "Grade": _object({"grade": INTEGER, "label": STRING,
                      "key": {"type": "string", "description": "The judging page's shortcut key."}}),
    "TopicProgress": _object({
        "query_id": STRING, "title": NULLABLE_STRING,
        "assigned": {"type": "integer", "description": "Documents this caller may judge."},
        "judged": {"type": "integer", "description": "Of those, judged (for an organiser: "
                                                      "judged by anyone)."},
        "done": BOOLEAN,
    }),
    "RoundProgress": _object({
        "round_id": STRING, "adaptive": BOOLEAN, "assigned": INTEGER, "judged": INTEGER,
        "withdrawn": {"type": "boolean", "description": "A crowd round's worker the organiser "
                      "withdrew: nothing more is handed to them; their judgments are kept."},
        "topics": {"type": "array", "items": _ref("TopicProgress")},
    }, optional=("withdrawn",)),
    "Rounds": _object({"rounds": {"type": "array", "items": _ref("RoundProgress")}}),
    "Document": _object({
        "done": {"const": False},
        "round_id": STRING, "adaptive": BOOLEAN, "topic": _ref("Topic"),
        "doc_id": STRING,
        "title": NULLABLE_STRING, "text": NULLABLE_STRING,
        "title_html": {"type": "string", "description": "The title escaped as HTML, query terms "
                                                        "in <mark>."},
        "text_html": {"type": "string", "description": "The text escaped as HTML, query terms "
                                                       "in <mark>."},
        "doc_missing": {"type": "boolean", "description": "The collection has no text for it."},
        "grades": {"type": "array", "items": _ref("Grade")},
        "current_grade": NULLABLE_INTEGER,
        "position": {"type": "integer", "description": "1-based place in the caller's queue."},
        "total": INTEGER, "judged": INTEGER,
        "prev_doc": NULLABLE_STRING, "next_doc": NULLABLE_STRING, "skip_doc": NULLABLE_STRING,
        "can_undo": BOOLEAN,
        "can_answer_unjudgeable": {"type": "boolean", "description": "Whether the round takes "
                                   "`unjudgeable: true` (a static round judging documents whole)."},
        "current_unjudgeable": {"type": "boolean", "description": "The caller's current answer "
                                "of this document is unjudgeable."},
        "subtopics": {"type": "array", "items": _ref("Subtopic"),
                      "description": "In a subtopic round only: the topic's subtopics, each "
                                     "graded with `grades` in one submission."},
        "submission_id": {**SUBMISSION_ID, "description": "A fresh id to send with the judgment "
                                                          "of this document."},
        "handout": HANDOUT,
    }, optional=("subtopics", "handout")),
    "TopicDone": _object({
        "done": {"const": True}, "round_id": STRING, "topic": _ref("Topic"),
        "judged": INTEGER, "total": INTEGER,
        "first_doc": {"type": ["string", "null"], "description": "To review the judgments made."},
    }),
    "Subtopic": _object({
        "subtopic": {"type": "string", "description": "The subtopic's number in its topic."},
        "text": STRING, "current_grade": NULLABLE_INTEGER,
    }),
    "JudgmentRequest": _object({
        "doc_id": STRING, "grade": {"type": "integer", "description": "One of the round's grades "
                                                                     "(a plain round)."},
        "grades": {"type": "object", "additionalProperties": {"type": "integer"},
                   "description": "A subtopic round: a grade on the round's scale for every "
                                  "subtopic of the topic, by subtopic number; stored together."},
        "submission_id": SUBMISSION_ID,
        "seconds": {"type": ["number", "null"], "minimum": 0, "maximum": 86400,
                    "description": "Time spent judging the document."},
        "note": {"type": ["string", "null"], "maxLength": 2000},
        "unjudgeable": {"type": "boolean", "description": "true instead of a grade: the "
                        "document cannot be judged (a broken link, say). An answer of its own: "
                        "it counts toward a crowd round's answers per pair and enters no "
                        "qrels grade; undone like a grade."},
        "handout": HANDOUT,
    }, required=["doc_id", "submission_id"], additionalProperties=False,
        oneOf=[{"required": ["grade"]}, {"required": ["grades"]}, {"required": ["unjudgeable"]}]),
    "JudgmentStored": _object({
        "stored": BOOLEAN,
        "duplicate": {"type": "boolean", "description": "The submission id was stored before: "
                                                        "nothing new was stored."},
        "doc_id": STRING,
    }),
    "UndoRequest": _object({"submission_id": SUBMISSION_ID}, additionalProperties=False),
    "Undone": _object({"undone": {"type": "string", "description": "The document whose latest "
                                                                   "judgment was retracted."},
                       "duplicate": BOOLEAN}),
    "SubmissionConflict": _object({
        "error": {"type": "string"},
        "stored_grade": {"type": ["integer", "null"], "description": "The grade stored under "
                         "this submission id."},
        "sent_grade": {"type": ["integer", "null"], "description": "The grade just sent, not "
                       "stored."}}),
}

_ERROR = _ref("Error")
UNAUTHORIZED = _json("No `Authorization: Bearer` token, or an unknown one.", _ERROR)
NOT_FOUND = _json("No such item, or not the caller's: both answer the same.", _ERROR)
CONFLICT = _json("The caller sent this submission id before with other content; nothing "
                 "was stored now. Send a new judgment with a fresh id.", _ref("SubmissionConflict"))
UNPROCESSABLE = _json("The body is not the JSON object expected, a value is out of range, or "
                      "a text holds what cannot be stored (a lone surrogate).", _ERROR)
TOO_LARGE = _json("The body is larger than 1 MB.", _ERROR)
TOO_MANY = _json("Too many unknown tokens from the caller's address lately: wait the "
                 "Retry-After header's seconds.", _ERROR)


def _param(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "string"}}


ROUND = _param("round_id", "The judging round.")
TOPIC = _param("query_id", "The topic.")
DOC = _param("doc_id", "The document (may contain '/').")


def _operation(operation_id: str, summary: str, answers: dict[str, Any], *,
               parameters: list[dict[str, Any]] | None = None, body: str | None = None,
               public: bool = False) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": operation_id, "summary": summary}
    if parameters:
        op["parameters"] = parameters
    if body:
        op["requestBody"] = {"required": True,
                             "content": {"application/json": {"schema": _ref(body)}}}
    if public:
        op["security"] = []
    else:
        answers = {**answers, "401": UNAUTHORIZED, "429": TOO_MANY}
    if body:
        answers = {**answers, "413": TOO_LARGE}
    op["responses"] = answers
    return op


PATHS: dict[str, dict[str, Any]] = {
    "/openapi.json": {"get": _operation(
        "openapi", "This description of the API.",
        {"200": {"description": "The OpenAPI 3.1 document.",
                 "content": {"application/json": {"schema": {"type": "object"}}}}},
        public=True)},
    "/rounds": {"get": _operation(
        "listRounds", "The caller's rounds and topics with progress (an organiser: every round).",
        {"200": _json("The rounds.", _ref("Rounds"))})},
    "/rounds/{round_id}/progress": {"get": _operation(
        "roundProgress", "The caller's progress in one round.",
        {"200": _json("Progress per topic.", _ref("RoundProgress")), "404": NOT_FOUND},
        parameters=[ROUND])},
    "/rounds/{round_id}/topics/{query_id}/next": {"get": _operation(
        "nextDocument", "The next document of an assigned topic to judge, or done.",
        {"200": _json("A document, or `done: true` when nothing is left.",
                      {"oneOf": [_ref("Document"), _ref("TopicDone")]}),
         "404": NOT_FOUND},
        parameters=[ROUND, TOPIC])},
    "/rounds/{round_id}/topics/{query_id}/docs/{doc_id}": {"get": _operation(
        "getDocument", "One document the caller may judge (to go back, skip, or adjudicate); "
        "in a crowd round, one handed to the caller already.",
        {"200": _json("The document.", _ref("Document")), "404": NOT_FOUND},
        parameters=[ROUND, TOPIC, DOC])},
    "/rounds/{round_id}/topics/{query_id}/judgments": {"post": _operation(
        "judge", "Judge one document; a retried submission id stores nothing new. In a crowd "
        "round, only a document handed to the caller (by `next`) may be judged.",
        {"200": _json("Stored, or a duplicate of a stored submission.", _ref("JudgmentStored")),
         "404": NOT_FOUND, "409": CONFLICT,
         "422": _json("Refused: a bad grade, note, seconds or id, or in a crowd round a document "
                      "never handed to the caller.", _ERROR)},
        parameters=[ROUND, TOPIC], body="JudgmentRequest")},
    "/rounds/{round_id}/topics/{query_id}/undo": {"post": _operation(
        "undo", "Retract the caller's latest current judgment of the topic.",
        {"200": _json("The document undone.", _ref("Undone")), "404": NOT_FOUND,
         "409": _json("There is no judgment of this topic to undo, or the submission id was "
                      "used for a judgment.", {"oneOf": [_ERROR, _ref("SubmissionConflict")]}),
         "422": UNPROCESSABLE},
        parameters=[ROUND, TOPIC], body="UndoRequest")},
}

DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "pooling judging API",
        "version": VERSION,
        "description": (
            "The operations of an assessor in the judging web app, for scripts and "
            "crowdsourcing front-ends. Authenticate with the token `pooling assessors add` "
            "printed: `Authorization: Bearer <token>`. Anything not the caller's answers "
            "exactly like a missing item (404). Organisers may open and judge every "
            "document of a round's pool by id."),
    },
    "servers": [{"url": API_ROOT}],
    "security": [{"bearer": []}],
    "paths": PATHS,
    "components": {
        "schemas": SCHEMAS,
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                       "description": "An assessor's or organiser's token."}},
    },
}
