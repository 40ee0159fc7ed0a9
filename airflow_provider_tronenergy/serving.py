"""Serving an ASGI app from a console script: shared by the sandbox and the receiver."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import Coroutine
from typing import Any


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
