"""The one exception the leaderboard package raises on purpose."""

from __future__ import annotations

from pooling.errors import PoolingError


class LeaderboardError(PoolingError):
    """A leaderboard, test or report cannot be built as asked (bad option, too few topics, ...)."""
