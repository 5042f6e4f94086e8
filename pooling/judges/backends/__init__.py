"""Automatic relevance judges: backends that grade (topic, document) pairs beside human
assessors. They take pairs with their texts and yield verdicts; they never touch the store.

Modules: `base` (Pair, Verdict, Backend, BackendSpec, JudgeError) → `prompt` (templates,
grade parsing) → one module per backend (`openai_chat`, `command`, `learned`) → `registry`.
"""

from pooling.judges.backends.base import (
    FAILED,
    OK,
    Backend,
    BackendSpec,
    JudgeError,
    Pair,
    Verdict,
)
from pooling.judges.backends.learned import cross_validated
from pooling.judges.backends.prompt import (
    DEFAULT_PROMPT,
    PLACEHOLDERS,
    check_template,
    parse_grade,
    prompt_sha256,
    read_prompt,
    render,
)
from pooling.judges.backends.registry import BACKENDS, backend

__all__ = [
    "BACKENDS",
    "DEFAULT_PROMPT",
    "FAILED",
    "OK",
    "PLACEHOLDERS",
    "Backend",
    "BackendSpec",
    "JudgeError",
    "Pair",
    "Verdict",
    "backend",
    "check_template",
    "cross_validated",
    "parse_grade",
    "prompt_sha256",
    "read_prompt",
    "render",
]
