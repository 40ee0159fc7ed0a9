"""One connection of the standalone receiver under its limits: :class:`LimitedProtocol`.

Mixed in before uvicorn's HTTP protocol (:mod:`.httptools`, :mod:`.h11`);
:mod:`.limits` says what the limits are and builds the protocol classes. Per
connection it bounds the head, arms the head and body deadlines, counts keep-alive
requests, takes part in the cap (:mod:`.cap`), and closes after an early
answer with a bounded linger.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Final, cast

from airflow_provider_tronenergy.callbacks.limits.cap import ConnectionGuard

LINGER_BYTES: Final = 256 * 1024
LINGER_SECONDS: Final = 2.0

HEAD, BODY, WAIT = 0, 1, 2
"""Where a connection's current request is: reading its head, its body, or with the app."""


class _GuardedTransport(asyncio.Transport):
    """The transport uvicorn sees: a close after an early answer becomes a bounded linger."""

    __slots__ = ("_owner", "_raw")

    def __init__(self, raw: asyncio.Transport, owner: LimitedProtocol) -> None:
        super().__init__()
        self._raw = raw
        self._owner = owner

    def write(self, data: Any) -> None:
        self._raw.write(data)

    def writelines(self, data: Any) -> None:
        self._raw.writelines(data)

    def close(self) -> None:
        self._owner._close_after_answer()

    def abort(self) -> None:
        self._raw.abort()

    def is_closing(self) -> bool:
        return self._owner._lingering or self._raw.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._raw.get_extra_info(name, default)

    def pause_reading(self) -> None:
        if not self._owner._lingering:
            self._raw.pause_reading()

    def resume_reading(self) -> None:
        self._raw.resume_reading()

    def is_reading(self) -> bool:
        return self._raw.is_reading()

    def write_eof(self) -> None:
        self._raw.write_eof()

    def can_write_eof(self) -> bool:
        return self._raw.can_write_eof()

    def get_write_buffer_size(self) -> int:
        return self._raw.get_write_buffer_size()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._raw.set_write_buffer_limits(high, low)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._raw.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._raw.get_protocol()


def _answer(status: int, reason: str, message: str) -> bytes:
    body = message.encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


class LimitedProtocol(asyncio.Protocol):
    """The limits, on top of a uvicorn HTTP protocol (mixed in before it)."""

    guard: ConnectionGuard
    # Set by uvicorn's protocol classes.
    transport: asyncio.Transport
    connections: set[Any]
    loop: asyncio.AbstractEventLoop
    cycle: Any
    logger: logging.Logger

    _phase = HEAD
    _head_bytes = 0
    _requests = 0
    _began = 0.0  # when the current request's first byte came, or when it began waiting for it
    _got = 0  # bytes of the current request received so far (head and body)
    _timer: asyncio.TimerHandle | None = None
    _timer_phase = -1
    _lingering = False
    _linger_left = 0
    _raw: asyncio.Transport

    # -- connection life ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but they are one.
        self._raw = cast(asyncio.Transport, transport)
        super().connection_made(_GuardedTransport(self._raw, self))
        guard = self.guard
        if len(self.connections) > guard.limits.max_connections and not guard.make_room():
            guard.stats.refused += 1
            guard._note("connection limit (%d) reached with every connection busy: new "
                        "connections get 503", guard.limits.max_connections)
            self._refuse(503, "Service Unavailable", "too many connections")
            return
        self._began = time.monotonic()
        guard.candidates[self] = None
        self._arm(HEAD, guard.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.candidates.pop(self, None)
        self._disarm()
        super().connection_lost(exc)

    def _evict(self) -> None:
        """Closed to make room (a slowloris's connection, most likely): no answer."""
        self._disarm()
        self.connections.discard(self)
        self._raw.abort()

    def _refuse(self, status: int, reason: str, message: str) -> None:
        """Answer without the app and close (nothing more of this connection is read)."""
        if not self._raw.is_closing():
            self._raw.write(_answer(status, reason, message))
        self._close_quietly()

    def _close_quietly(self) -> None:
        self.guard.candidates.pop(self, None)
        self._disarm()
        self.connections.discard(self)
        self._raw.close()

    # -- reading ----------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            self._linger_left -= len(data)
            if self._linger_left < 0:
                self._raw.close()
            return
        if not self._got:
            self._began = time.monotonic()
        self._got += len(data)
        limit = self.guard.limits.max_header_bytes
        while self._phase != BODY:
            room = limit - self._head_bytes
            if len(data) <= room:
                self._head_bytes += len(data)
                break
            # Parse only what fits: whatever completes in there moves the request on.
            head, data = data[:room], data[room:]
            self._head_bytes = limit
            if head:
                super().data_received(head)
                self._sync_phase()
                if self._raw.is_closing():
                    return
            if self._phase != BODY and self._head_bytes >= limit:
                self.guard.stats.head_too_large += 1
                self._refuse(431, "Request Header Fields Too Large",
                             f"request head larger than {limit} bytes")
                return
        super().data_received(data)
        self._sync_phase()
        if self._raw.is_closing():
            return
        phase = self._phase
        if phase == WAIT:
            self.guard.candidates.pop(self, None)  # received in full: with the app, not evicted
            if self._timer is not None:
                self._disarm()
        elif phase == BODY:
            if self._timer_phase != BODY:
                self._arm(BODY, self.guard.limits.body_timeout)
        elif self._head_bytes and self._timer is None:
            self._arm(HEAD, self.guard.limits.header_timeout)

    def _sync_phase(self) -> None:
        """Bring ``_phase`` up to date after parsing (httptools does it in its callbacks)."""

    def _request_started(self) -> None:
        """The head is complete: the request goes to the app (a new cycle exists)."""
        self._phase = BODY  # still a candidate for eviction until the body is in
        self._head_bytes = 0
        self._requests += 1
        if self._requests >= self.guard.limits.keep_alive_requests and self.cycle is not None:
            self.cycle.keep_alive = False

    def _enter_head(self) -> None:
        """The request is over (received and answered): the connection waits for the next."""
        self._phase = HEAD
        self._began = time.monotonic()
        self._got = self._head_bytes
        self.guard.candidates[self] = None
        if self._head_bytes:  # the next head began while this request was with the app
            self._arm(HEAD, self.guard.limits.header_timeout)

    def _has_pipelined(self) -> bool:
        return False

    def on_response_complete(self) -> None:
        pipelined = self._has_pipelined()
        super().on_response_complete()  # type: ignore[misc]
        if self._raw.is_closing() or self._lingering:
            return
        self._sync_phase()
        # Still reading the body (the app answered early): the body deadline stays.
        if self._phase == WAIT and not pipelined:
            self._enter_head()

    # -- deadlines --------------------------------------------------------------------------

    def _arm(self, phase: int, seconds: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_phase = phase
        self._timer = self.loop.call_later(seconds, self._expired, phase)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_phase = -1

    def _expired(self, phase: int) -> None:
        self._timer = None
        self._timer_phase = -1
        if self._raw.is_closing() or self._phase != phase:
            return
        stats = self.guard.stats
        if phase == HEAD:
            stats.head_timeouts += 1
            if not self._head_bytes:  # never said anything: no answer, just close
                self._close_quietly()
                return
            self._refuse(408, "Request Timeout", "request head not received in time")
            return
        stats.body_timeouts += 1
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            self._raw.write(_answer(408, "Request Timeout", "request body not received in time"))
            # The app is waiting for body: it is told the client left, and answers nobody.
            cycle.disconnected = True
            cycle.message_event.set()
        self._raw.close()

    # -- closing after an early answer ------------------------------------------------------

    def _close_after_answer(self) -> None:
        """uvicorn closes after a ``Connection: close`` answer: linger if the body still comes.

        Closing with unread data makes the kernel send a reset, which can destroy
        the answer before the client reads it; reading everything that follows
        (a 100 MB body after a 413) is what must not happen. So: stop sending,
        discard at most ``LINGER_BYTES`` or ``LINGER_SECONDS`` of it, then close.
        """
        raw = self._raw
        if self._lingering or raw.is_closing():
            raw.close()
            return
        if self._phase != BODY or not raw.can_write_eof():
            raw.close()
            return
        self._lingering = True
        self._linger_left = LINGER_BYTES
        self.guard.candidates.pop(self, None)
        raw.write_eof()
        raw.resume_reading()
        self._disarm()
        self._timer = self.loop.call_later(LINGER_SECONDS, raw.close)

    def eof_received(self) -> None:
        if self._lingering:
            self._raw.close()
