"""Serving an ASGI app: from a console script (the sandbox, the receiver), or lazily inside
Airflow's API server (the plugins' apps)."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from typing import Any

log = logging.getLogger(__name__)


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind before serving, so that port 0 works and the real port is known at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on such sockets, and without
    # it every keep-alive answer waits for a delayed ACK (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def proxy_settings(forwarded_allow_ips: str | None) -> dict[str, Any]:
    """uvicorn settings for ``X-Forwarded-For`` / ``-Proto``: honoured only when configured.

    uvicorn honours them by default, from the addresses in ``FORWARDED_ALLOW_IPS``
    (environment) or loopback. With ``FORWARDED_ALLOW_IPS=*`` anyone could then
    choose the client address the app sees: the sandbox's loopback-only control
    API would open to the world, and the receiver's logs would name whoever the
    client claims to be. So: off, unless a proxy's addresses are given explicitly.
    """
    return {"proxy_headers": forwarded_allow_ips is not None,
            "forwarded_allow_ips": forwarded_allow_ips or "127.0.0.1"}


def run_event_loop(coro: Coroutine[Any, Any, None]) -> None:
    """Serve until ``coro`` ends, in a process that does nothing else.

    uvloop where installed (it comes with uvicorn[standard]); asyncio otherwise.
    Everything built so far (imports, app, store) lives as long as the process,
    so it is frozen out of the garbage collector first: otherwise every full
    collection walks those ~60k objects again, and a server that holds requests
    across a commit triggers one several times a second, each stalling the loop
    for tens of milliseconds (the receiver's p99 went from 52 to 17 ms).
    """
    gc.collect()
    gc.freeze()
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
    else:
        uvloop.run(coro)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class LazyApp:
    """An ASGI app built on its first request, answering 503 (``unavailable``) until it can.

    For apps mounted in Airflow's API server by a plugin: importing the plugin must stay
    cheap and never fail, so the app (its store, its configuration) is built in a thread
    on first use; a failed build is logged and tried again after ``retry`` seconds.
    """

    def __init__(self, build: Callable[[], ASGIApp], *, what: str,
                 unavailable: dict[str, Any], retry: float = 5.0) -> None:
        self.build, self.what, self.retry = build, what, retry
        self.unavailable = json.dumps(unavailable).encode()
        self.app: ASGIApp | None = None
        self._failed_at: float | None = None
        self._lock: asyncio.Lock | None = None

    async def _get(self) -> ASGIApp | None:
        if self.app is not None:
            return self.app
        loop = asyncio.get_running_loop()
        if self._failed_at is not None and loop.time() - self._failed_at < self.retry:
            return None
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.app is None:
                try:
                    self.app = await asyncio.to_thread(self.build)
                    self._failed_at = None
                except Exception:
                    log.exception("%s could not be built", self.what)
                    self._failed_at = loop.time()
        return self.app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request through the built app, or 503; a lifespan when served alone."""
        if scope["type"] == "lifespan":  # only when served on its own; Airflow mounts it
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        app = await self._get()
        if app is not None:
            await app(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(self.unavailable)).encode())]})
        await send({"type": "http.response.body", "body": self.unavailable})
