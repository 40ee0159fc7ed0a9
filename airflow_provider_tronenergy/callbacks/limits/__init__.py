"""Connection limits for the standalone receiver: what uvicorn's HTTP protocols leave out.

The receiver faces the internet. uvicorn with httptools reads a request head
of any size (64 MB of small headers cost it about 1 GB), with no deadline; a
connection that never sends a request stays open for ever; there is no
connection cap that keeps room for the service's callbacks; and after an early
413 it reads and discards the rest of the body. So the receiver serves with
its own protocol classes, thin subclasses of uvicorn's (:mod:`.httptools`,
and :mod:`.h11` where httptools is missing) sharing
:class:`.conn.LimitedProtocol`, which add per connection:

* **a bounded head**: at most ``max_header_bytes`` of request line and headers
  (at most one read past it is ever parsed) and ``max_headers`` fields, else
  431 and the connection is closed, before the app runs;
* **deadlines**: the head must be complete ``header_timeout`` seconds after the
  connection opened (or after its first byte, on a kept-alive one), the body
  ``body_timeout`` seconds after the head, however its bytes trickle (a total
  deadline, never extended by a read); otherwise 408 and close;
* **keep-alive limits**: uvicorn's idle timeout, plus at most
  ``keep_alive_requests`` requests per connection;
* **a connection cap** that fits the descriptor limit: a new connection over
  ``max_connections`` evicts the *slowest* one whose request is not with the
  app (idle, or still sending its head or body; :mod:`.cap` says how it
  is chosen). A slowloris or a slow body holds only such connections, so it
  evicts itself while a callback, whose bytes come at network speed, goes
  through. When every connection has a request with the app, the new one gets
  503;
* **a bounded close** after an early answer (the app's 413): the connection
  stops sending, reads at most ``LINGER_BYTES`` or ``LINGER_SECONDS`` more so
  the client can see the answer, then is closed.

Inside the Airflow API server the server is Airflow's, so none of this
applies there; docs/callbacks.md says what to put in front of it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Final

from airflow_provider_tronenergy.callbacks.limits.cap import ConnectionGuard, ConnectionLimits
from airflow_provider_tronenergy.callbacks.limits.conn import LimitedProtocol

__all__ = ["FD_RESERVE", "ConnectionLimits", "default_http", "fit_to_descriptors",
           "protocol_class", "raise_descriptor_limit"]

log = logging.getLogger(__name__)

FD_RESERVE: Final = 128
"""Descriptors kept free of connections: the listening socket, the store, logs, imports."""


def raise_descriptor_limit(wanted: int) -> int:
    """Raise the soft RLIMIT_NOFILE towards ``wanted`` (never past the hard limit); return it.

    A default soft limit of 1,024 lets a thousand idle connections starve the
    receiver of descriptors: accepting then fails and callbacks are dropped.
    """
    try:
        import resource
    except ImportError:  # not POSIX: nothing to ask for
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    infinite = resource.RLIM_INFINITY
    target = wanted if hard == infinite else min(wanted, hard)
    if soft != infinite and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("could not raise the descriptor limit to %d: %s", target, exc)
    return wanted if soft == infinite else soft


def fit_to_descriptors(limits: ConnectionLimits) -> tuple[ConnectionLimits, int]:
    """``limits`` with a connection cap the descriptor limit can hold, and that limit."""
    descriptors = raise_descriptor_limit(limits.max_connections + FD_RESERVE)
    room = max(1, descriptors - FD_RESERVE if descriptors > 2 * FD_RESERVE else descriptors // 2)
    if room < limits.max_connections:
        log.warning("only %d descriptors: at most %d connections instead of %d (raise the "
                    "hard limit, e.g. LimitNOFILE in systemd)", descriptors, room,
                    limits.max_connections)
        limits = replace(limits, max_connections=room)
    return limits, descriptors


def protocol_class(limits: ConnectionLimits, http: str = "httptools") -> type[asyncio.Protocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` enforcing ``limits``.

    ``httptools`` when it is installed (fast; uvicorn[standard] brings it),
    else ``h11`` (pure Python, always there with uvicorn).
    """
    guard = ConnectionGuard(limits)
    if http == "httptools":
        from airflow_provider_tronenergy.callbacks.limits.httptools import (
            LimitedHttpToolsProtocol,
        )

        base: type[LimitedProtocol] = LimitedHttpToolsProtocol
    elif http == "h11":
        from airflow_provider_tronenergy.callbacks.limits.h11 import LimitedH11Protocol

        base = LimitedH11Protocol
    else:
        raise ValueError(f"unknown HTTP implementation {http!r}")
    return type(f"Guarded{base.__name__}", (base,), {"guard": guard})


def default_http() -> str:
    """``httptools`` when it is installed, else ``h11``."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"
