"""uvicorn's server, telling the app as soon as it begins to stop (SIGTERM, Ctrl-C).

uvicorn stops gracefully: it waits for the requests in flight, up to a timeout, before it
cancels them. A page in the middle of a long computation would hold the shutdown to that
timeout; told at once, the app gives such pages up (they answer 503) and the server stops
as soon as the judgments in flight are stored.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn


class StoppingServer(uvicorn.Server):
    """`uvicorn.Server` calling `on_stop()` when its shutdown begins."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]):
        super().__init__(config)
        self._on_stop = on_stop

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._on_stop()
        await super().shutdown(sockets=sockets)
