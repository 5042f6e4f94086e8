"""The per-topic text classifier that `cal` and the learned judge share: TF-IDF (sublinear tf)
then logistic regression, over a document's title and text. scikit-learn is the optional
extra `learned`, imported on first use."""

from __future__ import annotations

from typing import Any

from pooling.errors import PoolingError
from pooling.strategies.base import StrategyError

SEED = 0


def sklearn_parts(error: type[PoolingError] = StrategyError) -> tuple[Any, Any, Any]:
    """scikit-learn's text, linear-model and pipeline modules; without the extra, `error`
    naming it (a judge raises its own kind of error, a strategy its own)."""
    try:
        import sklearn.feature_extraction.text as text
        import sklearn.linear_model as linear
        import sklearn.pipeline as pipeline
    except ImportError as exc:
        raise error("the learned judge needs scikit-learn; install the extra with "
                    "`pip install 'pooling[learned]'`") from exc
    return text, linear, pipeline


def model(error: type[PoolingError] = StrategyError) -> Any:
    """An unfitted per-topic classifier: TF-IDF (sublinear tf) then logistic regression."""
    text, linear, pipeline = sklearn_parts(error)
    return pipeline.make_pipeline(
        text.TfidfVectorizer(sublinear_tf=True, strip_accents="unicode"),
        linear.LogisticRegression(class_weight="balanced", max_iter=1000, random_state=SEED))


def document_text(title: str | None, text: str | None) -> str:
    """What the classifier reads of a document: its title and text."""
    return "\n".join(t for t in (title, text) if t)
