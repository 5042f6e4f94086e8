"""The collection store: one DuckDB file holding topics, documents, runs, qrels and judgments."""

from pooling.store.core import Store

__all__ = ["Store"]
