"""A hostile HTTP server on a loopback port: it redirects, floods, inflates and drips.

Raw sockets, so that each behaviour is exactly what a broken or malicious service
or node would send (a lying Content-Length, a body one byte at a time, a gzip
bomb). Every request it reads is recorded, headers included, so a test can show
what reached it (a redirect's target must receive nothing).

Run as a script (``python hostile_server.py SHAPE INTERVAL BODY``) it serves one
:class:`DripShape` in its own process and prints its port: a leak test then
counts only the client's threads and descriptors.
"""

from __future__ import annotations

import contextlib
import datetime
import gzip
import io
import ipaddress
import itertools
import json
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    connection: int = 0
    """The connection it came on, numbered by the server as it accepts them (a client's port
    may be given to its next connection once the first is gone)."""


Behaviour = Callable[[socket.socket, Seen], None]
T = TypeVar("T")
ANSWER_TRIES = 10


@dataclass
class HostileServer:
    """Answers every request with ``behave(sock, request)``; records what it received."""

    behave: Behaviour
    host: str = "127.0.0.1"
    received: list[Seen] = field(default_factory=list)
    tls: ssl.SSLContext | None = None  # serve https (a context from :func:`tls_context`)

    def __post_init__(self) -> None:
        self._listener = socket.create_server((self.host, 0))
        self.port = self._listener.getsockname()[1]
        self.root = f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._accepted = itertools.count(1)

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
            threading.Thread(target=self._one, args=(sock, next(self._accepted)),
                             daemon=True).start()

    def _one(self, raw: socket.socket, connection: int) -> None:
        with raw, contextlib.suppress(OSError):
            sock = self.tls.wrap_socket(raw, server_side=True) if self.tls else raw
            with sock:
                while True:  # keep-alive: one request after another on the connection
                    request = _read_request(sock, connection)
                    if request is None:
                        return
                    self.received.append(request)
                    self.behave(sock, request)


def tls_context(directory: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context with a fresh self-signed certificate for 127.0.0.1, and the
    certificate's file (what a client is told to trust)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256()))
    cert_file, key_file = directory / "hostile.crt", directory / "hostile.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context, cert_file


def _read_request(sock: socket.socket, connection: int = 0) -> Seen | None:
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
    return Seen(method, path, headers, body, connection)


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


def truncated(sent: bytes, length: int) -> Behaviour:
    """A head promising ``length`` bytes, then ``sent`` and a closed connection."""

    def behave(sock: socket.socket, request: Seen) -> None:
        sock.sendall(_head(200, {"Content-Type": "application/json",
                                 "Content-Length": str(length)}) + sent)
        sock.shutdown(socket.SHUT_RDWR)

    return behave


@dataclass(frozen=True)
class DripShape:
    """Where an answer starts to drip, how its body is framed, and on which connection.

    ``phase``: ``status`` (from the first byte), ``headers`` (after the status line)
    or ``body`` (after the whole head). ``framing``: ``length`` (Content-Length),
    ``chunked``, or ``close`` (no length: the body ends when the server closes).
    ``pooled``: the connection's first request is answered at once and kept alive;
    the next one, on the same connection, drips.
    """

    phase: str
    framing: str = "length"
    gzip: bool = False
    pooled: bool = False

    @property
    def id(self) -> str:
        return "-".join([self.phase, self.framing] + ["gzip"] * self.gzip
                        + ["pooled"] * self.pooled)


DRIPS = [
    DripShape("status"), DripShape("status", pooled=True),
    DripShape("headers"), DripShape("headers", pooled=True),
    DripShape("body"), DripShape("body", gzip=True),
    DripShape("body", "chunked"), DripShape("body", "chunked", gzip=True),
    DripShape("body", "close"), DripShape("body", "close", gzip=True),
    DripShape("body", pooled=True), DripShape("body", "chunked", gzip=True, pooled=True),
]
"""Every way an answer can be dripped that the clients read differently."""


def drip_parts(shape: DripShape, body: Any) -> tuple[bytes, bytes]:
    """``shape``'s answer as (sent at once, dripped a byte at a time)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if shape.gzip:
        raw = gzip.compress(raw)
        headers["Content-Encoding"] = "gzip"
    if shape.framing == "length":
        headers["Content-Length"] = str(len(raw))
    elif shape.framing == "chunked":
        headers["Transfer-Encoding"] = "chunked"
        pieces = [raw[i:i + 16] for i in range(0, len(raw), 16)]
        raw = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
    else:
        headers["Connection"] = "close"
    head = _head(200, headers)
    status_line = head.index(b"\r\n") + 2
    start = {"status": 0, "headers": status_line, "body": len(head)}[shape.phase]
    whole = head + raw
    return whole[:start], whole[start:]


@dataclass
class Drip:
    """One dripped answer, as the server saw it."""

    connection: int
    kept_alive: bool  # its connection had answered a request at once before
    length: int  # bytes to drip
    sent: int = 0
    ended: bool = False  # dripped to the end, or cut by the client hanging up

    @property
    def cut(self) -> bool:
        """The client hung up before the drip's end (what a deadline does)."""
        return self.ended and self.sent < self.length


class Dripping:
    """Answers ``body`` in ``shape``, a byte every ``interval`` s; each drip in ``drips``."""

    def __init__(self, shape: DripShape, body: Any, interval: float) -> None:
        self.shape = shape
        self.body = body
        self.interval = interval
        self.prompt = answer(200, body)
        self.answered: set[int] = set()  # connections that answered a request at once
        self.drips: list[Drip] = []

    def __call__(self, sock: socket.socket, request: Seen) -> None:
        kept_alive = request.connection in self.answered
        if self.shape.pooled and not kept_alive:
            self.prompt(sock, request)  # kept alive: the next request comes on it
            self.answered.add(request.connection)
            return
        at_once, dripped = drip_parts(self.shape, self.body)
        drip = Drip(request.connection, kept_alive, len(dripped))
        self.drips.append(drip)
        try:
            sock.sendall(at_once)
            for byte in dripped:
                time.sleep(self.interval)
                sock.sendall(bytes([byte]))
                drip.sent += 1
            if self.shape.framing == "close":
                sock.shutdown(socket.SHUT_RDWR)
        finally:
            drip.ended = True

    def ended(self) -> bool:
        """Every drip ended (a client's hang-up shows at the server's next write)."""
        return all(drip.ended for drip in self.drips)


def _serve_forever() -> None:
    """``python hostile_server.py SHAPE INTERVAL BODY``: serve until stdin closes."""
    shape = next(shape for shape in DRIPS if shape.id == sys.argv[1])
    with HostileServer(Dripping(shape, json.loads(sys.argv[3]), float(sys.argv[2]))) as server:
        print(server.port, flush=True)
        sys.stdin.read()


def drip_seconds(shape: DripShape, body: Any, interval: float) -> float:
    """How long ``shape``'s drip of ``body`` lasts."""
    return len(drip_parts(shape, body)[1]) * interval


def raised_within(call: Callable[[], object]) -> tuple[Exception, float]:
    """What ``call`` raised, and after how many seconds; an answer fails the test."""
    started = time.monotonic()
    error = raised(call)
    return error, time.monotonic() - started


def raised(call: Callable[[], object]) -> Exception:
    """What ``call`` raised; an answer fails the test."""
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError("the call returned an answer: the drip was not dripped")


def answered(call: Callable[[], T]) -> T:
    """The answer to ``call`` on a connection answered at once, kept alive for a drip.

    Its time is not what is tested: on a loaded machine the deadline may pass before even
    a prompt answer is read, and then it is asked again on a new connection.
    """
    for _ in range(ANSWER_TRIES - 1):
        try:
            return call()
        except Exception as exc:
            if "overall deadline" not in str(exc):
                raise
    return call()


if __name__ == "__main__":
    _serve_forever()
