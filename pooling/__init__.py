"""pooling: build, judge and evaluate information-retrieval test collections."""

from pooling.errors import (
    EvaluationError,
    FormatError,
    MeasureError,
    PoolingError,
    Problem,
    SchemaError,
    StoreError,
    StoreLockedError,
)
from pooling.evaluation import evaluate
from pooling.store import Store

__version__ = "0.1.0"

__all__ = [
    "EvaluationError",
    "FormatError",
    "MeasureError",
    "PoolingError",
    "Problem",
    "SchemaError",
    "StoreError",
    "Store",
    "StoreLockedError",
    "__version__",
    "evaluate",
]
