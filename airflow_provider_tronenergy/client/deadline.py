"""One blocking HTTP exchange with an overall deadline and a capped body, over requests.

Per-read timeouts do not bound a call: a server that drips a byte every 50 ms
never lets a 1 s read timeout fire (seen: 9.3 s for 185 bytes). So each exchange
runs under a :class:`Deadline`: when the time is up, one watchdog thread shuts
the socket of the connection in use, wherever the exchange is blocked: in the head, in
the body, in a retry of urllib3. Redirects are never followed (a second host
would receive the credentials). The service's sync client and the node client
both send through :func:`exchange`.
"""

from __future__ import annotations

import contextlib
import heapq
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests
import urllib3.exceptions
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ReadTimeoutError
from urllib3.poolmanager import PoolManager

from airflow_provider_tronenergy.client.bounded import CHUNK, BodyError, BodyReader
from airflow_provider_tronenergy.errors import TronEnergyProviderError

_current = threading.local()
_owners_lock = threading.Lock()


class DeadlineExceeded(TronEnergyProviderError, TimeoutError):
    """The exchange did not complete within its overall deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within the overall deadline of {seconds:g} s")
        self.seconds = seconds


class Deadline:
    """Shuts the connections of the current thread's exchange once ``seconds`` have passed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._done = False
        self._connections: list[Any] = []

    def __enter__(self) -> Deadline:
        _current.deadline = self
        _WATCHDOG.watch(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with _owners_lock:
            self._done = True
            self._connections.clear()
        _current.deadline = None

    def attach(self, connection: Any) -> None:
        """Called as a request starts on ``connection``: it is this deadline's until the end."""
        with _owners_lock:
            if self.expired:
                raise DeadlineExceeded(self.seconds)
            connection.tronenergy_deadline = self
            self._connections.append(connection)

    def expire(self) -> None:
        """Time is up: shut the sockets this exchange still owns (the watchdog calls it)."""
        with _owners_lock:
            if self._done:
                return
            self.expired = True
            for connection in self._connections:
                # A connection back in the pool and taken by another call is not ours.
                if getattr(connection, "tronenergy_deadline", None) is not self:
                    continue
                sock = getattr(connection, "sock", None)
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread for every deadline of the process (no thread per call)."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, Deadline]] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: Deadline) -> None:
        with self._wake:
            heapq.heappush(self._due, (time.monotonic() + deadline.seconds, id(deadline),
                                       deadline))
            if self._thread is None or not self._thread.is_alive():  # first use, or a fork
                self._thread = threading.Thread(target=self._run, name="tronenergy-deadlines",
                                                daemon=True)
                self._thread.start()
            elif self._due[0][2] is deadline:
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._wake.wait(self._due[0][0] - time.monotonic() if self._due else None)
                _, _, deadline = heapq.heappop(self._due)
            deadline.expire()  # a finished exchange ignores it


_WATCHDOG = _Watchdog()


class _Watched:
    """Mixed into urllib3's connections: each request joins the thread's deadline."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        deadline: Deadline | None = getattr(_current, "deadline", None)
        if deadline is not None:
            deadline.attach(self)
        super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_Watched, HTTPConnection):
    pass


class _HTTPSConnection(_Watched, HTTPSConnection):
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
        """Pools of watched connections, also for proxies (below)."""
        super().init_poolmanager(*args, **kwargs)
        _watch(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        """The proxy's pool manager, with watched connections too."""
        return _watch(super().proxy_manager_for(proxy, **proxy_kwargs))


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
    answer like any other: never followed.
    """
    with Deadline(total) as deadline:
        try:
            response = adapter.send(request, stream=True, timeout=(connect, read),
                                    verify=verify, proxies=dict(proxies or {}))
            try:
                body = _read(response, limit)
                if deadline.expired:  # a head or body cut short by the shutdown reads as ended
                    raise DeadlineExceeded(total)
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
