"""The server's own time per request, in a `Server-Timing` header of every response.

A client's latency mixes the server's work with its own scheduling, the network and the
queue in front of the server; load figures need the server's share apart. `Server-Timing:
app;dur=12.3` (milliseconds, the W3C header browsers' developer tools show) is the time
from the request reaching the app to its response starting.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class ServerTiming:
    """Adds `server-timing: app;dur=<ms>` to every HTTP response of the app it wraps."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()

        async def send_with_timing(message: Message) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - began) * 1000
                headers = [*message.get("headers", []), (b"server-timing", f"app;dur={ms:.2f}".encode())]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_timing)


def server_ms(value: str) -> float | None:
    """The `app` duration (ms) of a Server-Timing header's value, None without one."""
    for metric in value.split(","):
        name, *params = (part.strip() for part in metric.split(";"))
        if name == "app":
            for param in params:
                key, _, number = param.partition("=")
                if key.strip() == "dur":
                    try:
                        return float(number)
                    except ValueError:
                        return None
    return None
