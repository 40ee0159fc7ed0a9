"""One blocking HTTP exchange with an overall deadline and a capped body, over requests.

Per-read timeouts do not bound a call: a server that drips a byte every 50 ms
never lets a 1 s read timeout fire. So each exchange runs under a :class:`Deadline`
and every blocking step of it is given at most the time left:

* connecting (a TLS handshake and a proxy's CONNECT included): min(connect timeout, left);
* sending the request: min(its timeout, left);
* every socket read of the answer (status line, headers, chunk sizes, body): the
  socket's timeout is set to min(read timeout, left) just before the read, by
  :class:`_DeadlineReads` under http.client's buffered file, through which every
  byte of an answer passes. A drip ends at the deadline wherever it is, whatever
  the framing (Content-Length, chunked, read to the close), compressed or not;
* urllib3's own resends (the node client's) start only before it and never wait past it.

Why not a watchdog thread that shuts the socket when the time is up (what this
module did before issue 36): it must find the socket from outside, and
http.client drops the connection's reference to it when the answer ends the
connection (``Connection: close``), so a drip in such a body ran to its end; a
shutdown from another thread also races the reading thread's close (the
descriptor number may be reused by then). Here the thread that reads bounds its
own reads: no thread, no shared state, nothing to find or leave behind.

Not bounded: resolving the host name (the resolver takes no timeout), and over an
HTTPS proxy to an HTTPS host (TLS inside TLS) one TLS record, read by urllib3 in
several socket reads each bounded by the time left when the record began.
Redirects are never followed (a second host would receive the credentials). The
service's sync client and the node client both send through :func:`exchange`.
"""

from __future__ import annotations

import http.client
import io
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

import requests
import urllib3.exceptions
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import ConnectionPool, HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import MaxRetryError, ReadTimeoutError, ResponseError
from urllib3.poolmanager import PoolManager
from urllib3.response import BaseHTTPResponse
from urllib3.util.retry import Retry

from airflow_provider_tronenergy.client.bounded import CHUNK, BodyError, BodyReader
from airflow_provider_tronenergy.errors import TronEnergyProviderError

if TYPE_CHECKING:
    from typing_extensions import Self

_current = threading.local()


class DeadlineExceeded(TronEnergyProviderError, TimeoutError):
    """The exchange did not complete within its overall deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within the overall deadline of {seconds:g} s")
        self.seconds = seconds


class Deadline:
    """``seconds`` from now, for the exchange the current thread runs (see the module)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.passed = False  # set once a step was refused, or cut, for lack of time

    def __enter__(self) -> Deadline:
        self._outer: Deadline | None = getattr(_current, "deadline", None)
        _current.deadline = self
        return self

    def __exit__(self, *exc: object) -> None:
        _current.deadline = self._outer

    @property
    def expired(self) -> bool:
        return self.passed or time.monotonic() >= self.end

    def left(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self.end - time.monotonic())

    def bound(self, timeout: float | None) -> float:
        """``timeout`` for the next blocking step, cut to the time left.

        Raises ``TimeoutError`` (what a socket raises) when no time is left, so that
        urllib3 and requests report it as they report any timeout; :func:`exchange`
        then reads :attr:`expired`.
        """
        left = self.end - time.monotonic()
        if left <= 0:
            self.passed = True
            raise TimeoutError(f"the overall deadline of {self.seconds:g} s passed")
        return left if timeout is None or timeout > left else timeout


def current_deadline() -> Deadline | None:
    """The deadline of the exchange this thread is running, if any."""
    return getattr(_current, "deadline", None)


class _DeadlineReads(io.RawIOBase):
    """An answer's socket reads, each given at most the time its exchange has left."""

    def __init__(self, raw: Any, sock: Any, deadline: Deadline, per_read: float | None) -> None:
        super().__init__()
        self._raw = raw  # the SocketIO http.client made (nothing read from it yet)
        self._sock = sock
        self._deadline = deadline
        self._per_read = per_read  # the read timeout urllib3 set on the socket

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        wait = self._deadline.bound(self._per_read)
        self._sock.settimeout(wait)
        try:
            n: int | None = self._raw.readinto(buffer)
        except TimeoutError:
            if self._per_read is None or wait < self._per_read:
                self._deadline.passed = True  # cut by the deadline, not by the read timeout
            raise
        return n

    def fileno(self) -> int:
        return int(self._raw.fileno())

    def close(self) -> None:
        if not self.closed:
            self._raw.close()  # releases http.client's reference to the socket
        super().close()


class _BoundedResponse(http.client.HTTPResponse):
    """http.client's response, reading through :class:`_DeadlineReads` under a deadline.

    http.client builds one for every answer (the proxy's answer to CONNECT too)
    and reads all of it, head and body, through ``self.fp``; urllib3 reads the
    chunked framing through the same file.
    """

    def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        deadline = current_deadline()
        if deadline is not None:
            # Nothing is buffered yet: the file is rebuilt over the same socket reads.
            raw = self.fp.detach()
            self.fp = io.BufferedReader(_DeadlineReads(raw, sock, deadline, sock.gettimeout()))


def _bounded(timeout: Any) -> Any:
    deadline = current_deadline()
    if deadline is None:
        return timeout
    return deadline.bound(timeout if isinstance(timeout, (int, float)) else None)


class _Bounded:
    """Mixed into urllib3's connections: connecting and sending within the time left."""

    response_class: type[http.client.HTTPResponse] = _BoundedResponse
    timeout: Any

    def connect(self) -> None:
        self.timeout = _bounded(self.timeout)
        super().connect()  # type: ignore[misc]

    def request(self, *args: Any, **kwargs: Any) -> None:
        # Also where a request on a kept-alive connection starts: none after the deadline.
        self.timeout = _bounded(self.timeout)
        super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_Bounded, HTTPConnection):
    pass


class _HTTPSConnection(_Bounded, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def _watch(manager: PoolManager) -> PoolManager:
    manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
    return manager


class DeadlineAdapter(HTTPAdapter):
    """An adapter whose connections obey the calling thread's :class:`Deadline`."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """Pools of bounded connections, also for proxies (below)."""
        super().init_poolmanager(*args, **kwargs)
        _watch(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        """The proxy's pool manager, with bounded connections too."""
        return _watch(super().proxy_manager_for(proxy, **proxy_kwargs))

    def close(self) -> None:
        """Close the pooled connections now: urllib3 2's ``PoolManager.clear`` only drops
        its pools, whose sockets then wait for the garbage collector."""
        for manager in (self.poolmanager, *self.proxy_manager.values()):
            for key in manager.pools.keys():  # noqa: SIM118  # it refuses iteration
                pool = manager.pools.get(key)
                if pool is not None:
                    pool.close()
        super().close()


class DeadlineRetry(Retry):
    """urllib3's resends under the calling exchange's deadline (the node client's).

    None is made once the deadline has passed (the last failure is reported as
    urllib3 reports retries run out), and no wait (backoff or ``Retry-After``)
    outlasts the time left.
    """

    def increment(self, method: str | None = None, url: str | None = None,
                  response: BaseHTTPResponse | None = None, error: Exception | None = None,
                  _pool: ConnectionPool | None = None,
                  _stacktrace: TracebackType | None = None) -> Self:
        deadline = current_deadline()
        if deadline is not None and deadline.expired:
            reason = error or ResponseError(f"the overall deadline of {deadline.seconds:g} s "
                                            "passed")
            raise MaxRetryError(_pool, url, reason) from reason  # type: ignore[arg-type]
        return super().increment(method, url, response, error, _pool, _stacktrace)

    def sleep_for_retry(self, response: BaseHTTPResponse) -> bool:
        retry_after = self.get_retry_after(response)
        if retry_after:
            _pause(retry_after)
            return True
        return False

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        if self.respect_retry_after_header and response and self.sleep_for_retry(response):
            return
        _pause(self.get_backoff_time())


def _pause(seconds: float) -> None:
    deadline = current_deadline()
    if deadline is not None:
        seconds = min(seconds, deadline.left())
    if seconds > 0:
        time.sleep(seconds)


def _read(response: requests.Response, limit: int) -> bytes:
    """The raw body through a :class:`BodyReader`; a broken read as requests reports it."""
    reader = BodyReader(limit, response.headers.get("Content-Encoding", ""))
    try:
        for chunk in response.raw.stream(CHUNK, decode_content=False):
            reader.feed(chunk)
    except ReadTimeoutError as exc:
        raise requests.ReadTimeout(exc) from exc
    except urllib3.exceptions.HTTPError as exc:  # e.g. the connection closed mid-body
        raise requests.ConnectionError(exc) from exc
    return reader.finish()


@dataclass(frozen=True)
class Answer:
    """One HTTP answer, its body read to the cap and decompressed."""

    status: int
    headers: Mapping[str, str]
    body: bytes


def exchange(adapter: HTTPAdapter, request: requests.PreparedRequest, *, connect: float,
             read: float, total: float, limit: int, verify: bool | str = True,
             proxies: Mapping[str, str] | None = None) -> Answer:
    """Send ``request`` once and read its answer, all within ``total`` seconds.

    Raises :class:`DeadlineExceeded` past the deadline, a ``BodyError`` (with the
    answer's status) for a body over ``limit`` or one it cannot inflate, and
    requests' own exceptions for everything else. A redirect is returned as an
    answer like any other: never followed. An answer read whole is returned even
    if the deadline passes just after its last byte: every read was bounded by it.
    """
    with Deadline(total) as deadline:
        try:
            response = adapter.send(request, stream=True, timeout=(connect, read),
                                    verify=verify, proxies=dict(proxies or {}))
            try:
                body = _read(response, limit)
            except BaseException as exc:
                if isinstance(exc, BodyError):
                    exc.status = response.status_code
                response.close()  # a half-read or hostile answer: drop the connection
                raise
        except (requests.RequestException, OSError) as exc:
            if deadline.expired:
                raise DeadlineExceeded(total) from exc
            raise
    response.raw.release_conn()
    return Answer(response.status_code, response.headers, body)
