"""Whether a judgment can be accepted: the one place every writer asks.

A submission (the judging page, the JSON API) is checked field by field as it arrives:
text the store can hold, a grade on the round's scale, seconds, a note, a submission id.
A judgment made in code or read from a file (`record`, batches, the served store's
judgments from organiser tools) is checked whole by `problem`. Each check raises
`JudgmentRefused` (the web answers 422) or returns why, so that the page, the API and the
CLI refuse the same fault with the same words. Who may judge what is
`pooling.judging.assignments`.
"""

from __future__ import annotations

import re
from numbers import Integral

from pooling.errors import StoreError
from pooling.judging.history import KINDS, UNJUDGEABLE, Judgment
from pooling.judging.rounds import Round
from pooling.judging.storable import unstorable

SUBMISSION_ID = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
MAX_NOTE = 2000
MAX_SECONDS = 86400

# A judgment's text fields: each must be text the store can hold (see `unstorable`).
TEXT_FIELDS = ("round_id", "assessor_id", "query_id", "doc_id", "kind", "note", "submission_id",
               "rationale", "part")
PART_MARK = "~"  # between a submission id and a part: never in a sent id


class JudgmentRefused(StoreError):
    """A judgment the judging core refuses (a grade off the scale, a note too long, a
    malformed id, text the store cannot hold, nothing to undo); nothing was stored."""


# -- the grade ---------------------------------------------------------------------------


def on_scale(rnd: Round, grade: object) -> bool:
    """Whether `grade` is one of the round's grades (an integer, never a boolean)."""
    whole = type(grade) is int or (isinstance(grade, Integral) and not isinstance(grade, bool))
    return whole and grade in rnd.grades


def scale_hint(rnd: Round) -> str:
    """What a grade must be, for an answer that does not repeat what was sent."""
    return f"grade must be one of {list(rnd.grades)}"


def off_scale(rnd: Round, grade: object) -> str:
    """Why a grade is refused, naming it (rows of a file, judgments made in code)."""
    return f"grade {grade!r} is not on the round's scale {list(rnd.grades)}"


def grade(rnd: Round, value: object) -> int:
    """A submitted grade, or `JudgmentRefused` when it is not on the round's scale."""
    if not on_scale(rnd, value):
        raise JudgmentRefused(scale_hint(rnd))
    return value  # type: ignore[return-value]


# -- the other fields of a submission ----------------------------------------------------


def texts(**fields: object) -> None:
    """Refuse an id that is not text (`JudgmentRefused`), as a JSON body may send."""
    for name, value in fields.items():
        if not isinstance(value, str):
            raise JudgmentRefused(f"{name} must be a string")


def storable(**fields: object) -> None:
    """Refuse text the store cannot keep (`JudgmentRefused`): asked before anything else, so
    such text never reaches a query or a commit shared with other people's judgments."""
    for name, value in fields.items():
        why = unstorable(value, name)
        if why:
            raise JudgmentRefused(why)


def submission_id(value: object) -> str:
    """A submission id as sent: 16-64 letters, digits, '-' or '_' (else `JudgmentRefused`)."""
    if not isinstance(value, str) or not SUBMISSION_ID.match(value):
        raise JudgmentRefused("submission_id must be 16-64 letters, digits, '-' or '_'")
    return value


def seconds(value: object) -> float | None:
    """Seconds spent judging, to the millisecond; None when not sent."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_SECONDS:
        raise JudgmentRefused(f"seconds must be a number between 0 and {MAX_SECONDS}")
    return round(float(value), 3)


def note(value: object) -> str | None:
    """A note as stored: stripped, None when empty (else `JudgmentRefused` when too long)."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_NOTE:
        raise JudgmentRefused(f"a note is text of at most {MAX_NOTE} characters")
    return value.strip() or None


def submission(rnd: Round, assessor_id: str, query_id: str, doc_id: str, *, grade_value: object,
               submission_id_value: object, seconds_value: object = None,
               note_value: object = None, unjudgeable_value: object = None) -> Judgment:
    """The judgment a page or API submission makes, every field checked (`JudgmentRefused`):
    a grade, or an unjudgeable answer (`answer`). Its text was checked with `storable`
    before the round and the assignment were looked up."""
    kind, value = answer(rnd, grade_value, unjudgeable_value)
    return Judgment(rnd.round_id, assessor_id, query_id, doc_id, value, kind=kind,
                    seconds=seconds(seconds_value), note=note(note_value),
                    submission_id=submission_id(submission_id_value))


# -- a submission grading a unit on its parts ---------------------------------------------


def part_ids(submission_id_value: str, part: str) -> str:
    """The stored submission id of one part's row of a submission: the id sent, the mark and
    the part. A sent id cannot hold the mark, so the two never meet."""
    return f"{submission_id_value}{PART_MARK}{part}"


def wrong_part(rnd: Round, query_id: str, part: object) -> str | None:
    """Why a judgment's part does not fit the round (a round judged on parts needs one of the
    topic's parts; a round grading units whole none), or None."""
    item = rnd.item
    if not item.has_parts:
        return None if part is None else (
            f"round {rnd.round_id} judges {item.unit.name}s as a whole, not subtopics; send "
            "no subtopic")
    numbers = rnd.parts_of(query_id)
    if part is None:
        return (f"round {rnd.round_id} judges {item.part}s: name one of topic {query_id}'s "
                f"{item.part}s {numbers}")
    if part not in numbers:
        return f"{item.part} {part!r} is not one of topic {query_id}'s {item.part}s {numbers}"
    return None


def part_grades(rnd: Round, query_id: str, value: object) -> dict[str, int]:
    """A round judged on parts: the grades of one unit, {part: grade} with a grade on the
    round's scale for every part of the topic, in the topic's order (`JudgmentRefused`)."""
    numbers, part = rnd.parts_of(query_id), rnd.item.part
    if not isinstance(value, dict):
        raise JudgmentRefused(f"this round judges {part}s: send grades as an object of a grade "
                              f"per {part} {numbers}")
    unknown = [k for k in value if k not in numbers]
    if unknown:
        raise JudgmentRefused(f"{part} {unknown[0]!r} is not one of topic {query_id}'s "
                              f"{part}s {numbers}")
    missing = [n for n in numbers if n not in value]
    if missing:
        raise JudgmentRefused(f"grades need a grade for every {part} {numbers}; missing "
                              f"{missing}")
    return {n: grade(rnd, value[n]) for n in numbers}


def part_submission(rnd: Round, assessor_id: str, query_id: str, doc_id: str, *,
                    grades_value: object, submission_id_value: object,
                    seconds_value: object = None, note_value: object = None) -> list[Judgment]:
    """The judgments one submission of a round judged on parts makes (a grade per part of
    the unit, stored together), every field checked (`JudgmentRefused`)."""
    sid = submission_id(submission_id_value)
    graded = part_grades(rnd, query_id, grades_value)
    spent, said = seconds(seconds_value), note(note_value)
    return [Judgment(rnd.round_id, assessor_id, query_id, doc_id, g, seconds=spent, note=said,
                     submission_id=part_ids(sid, n), part=n) for n, g in graded.items()]


def grades_sent(rnd: Round, query_id: str, grade_value: object, grades_value: object) -> None:
    """Refuse a submission that sends one `grade` to a round judged on parts, or `grades` per
    part to one grading units whole, saying what to send (`JudgmentRefused`)."""
    item = rnd.item
    if item.has_parts and grade_value is not None:
        raise JudgmentRefused(f"round {rnd.round_id} judges {item.part}s: send `grades`, an "
                              f"object of a grade per {item.part} {rnd.parts_of(query_id)}, "
                              "not `grade`")
    if not item.has_parts and grades_value is not None:
        raise JudgmentRefused(f"round {rnd.round_id} judges {item.unit.name}s as a whole: send "
                              "one `grade`, not `grades`")


# -- a whole judgment --------------------------------------------------------------------


def unstorable_text(j: Judgment) -> str | None:
    """Why one of a judgment's text fields cannot be stored (`unstorable`), or None."""
    return next((why for name in TEXT_FIELDS if (why := unstorable(getattr(j, name), name))), None)


def incomplete(j: Judgment, n: int) -> str | None:
    """Why judgment number `n` of a stream lacks what every stored one has (ids, a kind, a
    grade, storable text), or None; the round's rules are not asked (an automatic judge's)."""
    missing = [f for f in ("assessor_id", "query_id", "doc_id", "submission_id") if not getattr(j, f)]
    if missing:
        return f"judgment {n} has no {', '.join(missing)}"
    if j.kind not in KINDS:
        return f"judgment {n}: kind must be one of {', '.join(KINDS)}, got {j.kind!r}"
    if j.kind == "judge" and j.grade is None:
        return f"judgment {n} has no grade"
    why = unstorable_text(j)
    return f"judgment {n}: {why}" if why else None


def problem(j: Judgment, rnd: Round) -> str | None:
    """Why a judgment of round `rnd` cannot be accepted, leaving out who may judge it
    (`pooling.judging.assignments`), or None when it can."""
    why = unstorable_text(j)  # first: the store cannot even look such text up
    if why:
        return why
    if j.kind not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}"
    if j.kind == "judge" and not on_scale(rnd, j.grade):
        return off_scale(rnd, j.grade)
    if j.kind == UNJUDGEABLE:
        return unjudgeable_refused(rnd)
    return wrong_part(rnd, j.query_id, j.part)


def unjudgeable_refused(rnd: Round) -> str | None:
    """Why the round takes no unjudgeable answer, or None: an adaptive round learns from
    grades and a round judged on parts grades each part, so both need a grade."""
    if rnd.adaptive or rnd.item.has_parts:
        what = "adaptive" if rnd.adaptive else f"judged on {rnd.item.part}s"
        return (f"round {rnd.round_id} is {what} and needs a grade for every document; answer "
                "unjudgeable in a static round, or give the lowest grade with a note")
    return None


def unjudgeable_sent(value: object) -> bool:
    """Whether `unjudgeable` was sent true: JSON true or false, or a form's "1"/"true"/"on"
    or ""/"0"/"false"; anything else (the number 1 included: in Python `1 == True`) is
    `JudgmentRefused`, so a client's mistake is never read as an answer."""
    if value is None or value is False or (isinstance(value, str) and value in ("", "0", "false")):
        return False
    if value is True or (isinstance(value, str) and value in ("1", "true", "on")):
        return True
    raise JudgmentRefused(f"unjudgeable must be true or false, found {str(value)[:40]!r}"
                          + (" (a number: send the JSON boolean true or false)"
                             if isinstance(value, (int, float)) else ""))


def answer(rnd: Round, grade_value: object, unjudgeable_value: object) -> tuple[str, int | None]:
    """A submission's answer, (kind, grade): a grade on the round's scale, or `unjudgeable`
    ("broken link / can't judge", no grade) when `unjudgeable` is sent true; both, or an
    unjudgeable answer in a round that needs grades, is `JudgmentRefused`."""
    if not unjudgeable_sent(unjudgeable_value):
        return "judge", grade(rnd, grade_value)
    if grade_value not in (None, ""):
        raise JudgmentRefused("send a grade or unjudgeable, not both")
    why = unjudgeable_refused(rnd)
    if why:
        raise JudgmentRefused(why)
    return UNJUDGEABLE, None
