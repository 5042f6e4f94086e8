"""The judge backends by name, each declaring its parameters; `backend(name, ...)` builds one."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from pooling.judges.backends.base import Backend, BackendSpec, JudgeError
from pooling.judges.backends.command import CommandBackend
from pooling.judges.backends.learned import LearnedBackend
from pooling.judges.backends.lexical import LexicalBackend
from pooling.judges.backends.openai_chat import OpenAIChatBackend
from pooling.judges.backends.prompt import DEFAULT_MAX_GRADE
from pooling.strategies.params import Param


def _openai(prompt: str | None, training: pa.Table | None, **params: Any) -> Backend:
    return OpenAIChatBackend(prompt, **params)


def _command(prompt: str | None, training: pa.Table | None, **params: Any) -> Backend:
    return CommandBackend(**params)


def _lexical(prompt: str | None, training: pa.Table | None, **params: Any) -> Backend:
    return LexicalBackend(**params)


def _learned(prompt: str | None, training: pa.Table | None, **params: Any) -> Backend:
    return LearnedBackend(training, **params)


BACKENDS: dict[str, BackendSpec] = {spec.name: spec for spec in (
    BackendSpec(
        "openai",
        "a chat model behind any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, hosted "
        "APIs), asked with an UMBRELA-style prompt for a grade 0-3",
        (
            Param("base_url", str, None, "the endpoint up to /chat/completions, e.g. "
                  "http://127.0.0.1:8000/v1"),
            Param("model", str, None, "the model name the server knows"),
            Param("api_key_env", str, "OPENAI_API_KEY", "the environment variable holding the "
                  "API key (sent as a Bearer token; none is sent when it is unset)"),
            Param("concurrency", int, 4, "requests in flight at once"),
            Param("timeout", float, 60.0, "seconds to wait for the server at each step of a "
                  "request"),
            Param("max_retries", int, 5, "retries after a 429, a 5xx, a connection error or a "
                  "timeout"),
            Param("retry_wait", float, 1.0, "seconds before the first retry, doubled at each "
                  "next one (a Retry-After header wins)"),
            Param("temperature", float, 0.0, "sampling temperature"),
            Param("max_tokens", int, None, "longest answer, in tokens (the server's limit "
                  "when unset)"),
            Param("max_grade", int, DEFAULT_MAX_GRADE, "the top of the prompt's grade scale "
                  "(grades are 0..max_grade)"),
            Param("relevant_from", int, 1, "the lowest relevant grade, for the probability "
                  "of relevance read from logprobs"),
            Param("logprobs", bool, True, "ask for logprobs to estimate P(relevant) (dropped "
                  "by itself when the server refuses them)"),
        ),
        _openai,
        prompted=True,
    ),
    BackendSpec(
        "command",
        "any local program reading one JSON request per line on stdin and writing one JSON "
        "reply ({\"grade\": ...}) per line on stdout",
        (
            Param("command", str, None, "the program and its arguments, split like a shell "
                  "would but run without one"),
            Param("timeout", float, 60.0, "seconds to wait for each reply"),
            Param("needs", str, "text", "what each request carries: 'text' (the topic's and "
                  "the document's texts) or 'ids' (query_id and doc_id only: the program reads "
                  "the documents itself, e.g. from a licensed corpus the store does not hold)"),
        ),
        _command,
    ),
    BackendSpec(
        "learned",
        "per topic, TF-IDF and logistic regression trained on the human judgments so far "
        "(binary: grade 1 when P(relevant) >= 0.5); needs the extra `learned`",
        (
            Param("relevant_from", int, 1, "the lowest human grade that counts as relevant"),
            Param("min_per_class", int, 2, "judgments of each class a topic needs before the "
                  "judge grades it"),
        ),
        _learned,
        trains=True,
    ),
    BackendSpec(
        "lexical",
        "deterministic word overlap: the share of what is sought (a nugget, a subtopic, else "
        "the query) that the text says, graded top / top-1 / 0 at two thresholds; no model",
        (
            Param("support_from", float, 0.6, "overlap giving the top grade (support)"),
            Param("partial_from", float, 0.3, "overlap giving the grade below it (partial "
                  "support)"),
            Param("top", int, 2, "the top grade (2 on a nugget round's scale)"),
        ),
        _lexical,
    ),
)}


def backend(name: str, *, prompt: str | None = None, training: pa.Table | None = None,
            **params: Any) -> Backend:
    """A judge backend by registered name, with its parameters checked."""
    if name not in BACKENDS:
        raise JudgeError(f"unknown judge backend {name!r}; known: {', '.join(sorted(BACKENDS))}")
    return BACKENDS[name].build(prompt, training, **params)
