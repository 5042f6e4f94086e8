"""pooling: build, judge and evaluate information-retrieval test collections.

`evaluate` and `Store` load on first use (PEP 562), so importing the package, or running a
command that needs neither, does not pay for NumPy, PyArrow and DuckDB.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from pooling.evaluation import (
        evaluate,
        evaluate_diversity,
        evaluate_sampled,
        sampled_estimates,
    )
    from pooling.store import Store

__version__ = "0.1.0"

# Public names that live in heavier modules: name -> module that defines it.
_LAZY = {"evaluate": "pooling.evaluation", "evaluate_diversity": "pooling.evaluation",
         "evaluate_sampled": "pooling.evaluation", "sampled_estimates": "pooling.evaluation",
         "Store": "pooling.store"}

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
    "evaluate_diversity",
    "evaluate_sampled",
    "sampled_estimates",
]


def __getattr__(name: str) -> Any:
    """Load a public name of `_LAZY` from its module on first access (then cache it here)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pooling' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
