"""The one exception the agreement package raises on purpose."""

from __future__ import annotations

from pooling.errors import PoolingError


class AgreementError(PoolingError):
    """Agreement cannot be measured on these inputs (bad columns, too few assessors, ...)."""
