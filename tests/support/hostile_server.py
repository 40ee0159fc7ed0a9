"""A hostile HTTP server on a loopback port: it redirects, floods, inflates and drips.

Raw sockets, so that each behaviour is exactly what a broken or malicious service
or node would send (a lying Content-Length, a body one byte at a time, a gzip
bomb). Every request it reads is recorded, headers included, so a test can show
what reached it (a redirect's target must receive nothing).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Behaviour = Callable[[socket.socket, Seen], None]


@dataclass
class HostileServer:
    """Answers every request with ``behave(sock, request)``; records what it received."""

    behave: Behaviour
    host: str = "127.0.0.1"
    received: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._listener = socket.create_server((self.host, 0))
        self.port = self._listener.getsockname()[1]
        self.root = f"http://{self.host}:{self.port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(sock,), daemon=True).start()

    def _one(self, sock: socket.socket) -> None:
        with sock, contextlib.suppress(OSError):
            while True:  # keep-alive: one request after another on the connection
                request = _read_request(sock)
                if request is None:
                    return
                self.received.append(request)
                self.behave(sock, request)


def _read_request(sock: socket.socket) -> Seen | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return Seen(method, path, headers, body)


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def answer(status: int, body: Any, headers: dict[str, str] | None = None) -> Behaviour:
    """A plain answer; ``body`` as bytes, or JSON of anything else."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()

    def behave(sock: socket.socket, request: Seen) -> None:
        sock.sendall(_head(status, {"Content-Type": "application/json",
                                    "Content-Length": str(len(raw)), **(headers or {})}) + raw)

    return behave


def redirect(status: int, location: str) -> Behaviour:
    return answer(status, b"", {"Location": location})


class Flood:
    """A ``total``-byte body of spaces, sent until the client stops reading; ``sent`` counts."""

    def __init__(self, total: int, chunk: int = 65536) -> None:
        self.total = total
        self.piece = b" " * chunk
        self.sent = 0

    def __call__(self, sock: socket.socket, request: Seen) -> None:
        sock.sendall(_head(200, {"Content-Type": "application/json",
                                 "Content-Length": str(self.total)}))
        while self.sent < self.total:
            sock.sendall(self.piece)
            self.sent += len(self.piece)


@cache
def gzip_bomb(inflated: int) -> bytes:
    """``inflated`` bytes of spaces, gzipped (about 1,000 to 1)."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as zipped:
        block = b" " * 1_048_576
        for _ in range(inflated // len(block)):
            zipped.write(block)
    return out.getvalue()


def inflating(inflated: int) -> Behaviour:
    bomb = gzip_bomb(inflated)
    return answer(200, bomb, {"Content-Encoding": "gzip"})


def drip(status: int, body: Any, interval: float, *, head_too: bool = False) -> Behaviour:
    """The answer one byte every ``interval`` seconds (the head too, if asked)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()

    def behave(sock: socket.socket, request: Seen) -> None:
        head = _head(status, {"Content-Type": "application/json",
                              "Content-Length": str(len(raw))})
        if not head_too:
            sock.sendall(head)
            head = b""
        for byte in head + raw:
            sock.sendall(bytes([byte]))
            time.sleep(interval)

    return behave


def truncated(sent: bytes, length: int) -> Behaviour:
    """A head promising ``length`` bytes, then ``sent`` and a closed connection."""

    def behave(sock: socket.socket, request: Seen) -> None:
        sock.sendall(_head(200, {"Content-Type": "application/json",
                                 "Content-Length": str(length)}) + sent)
        sock.shutdown(socket.SHUT_RDWR)

    return behave
