"""The standalone receiver against hostile clients, over real sockets to the real process.

Huge and endless request heads, idle and slow connections, slow bodies, a 413
whose sender goes on sending, keep-alive abuse, a 2,000-connection slowloris on
a small descriptor limit, and spoofed proxy headers. Every test starts
``tronenergy-receiver`` as a process and talks to it on 127.0.0.1 only. The
only time bounds are functional: the service's 5 s callback deadline, and
"this connection gets closed" well after the configured timeout.
"""

from __future__ import annotations

import re
import resource
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from airflow_provider_tronenergy.callbacks.limits import ConnectionLimits
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from support.callbacks import callback_body, signed_headers
from support.hostile import (
    SECRET,
    Receiver,
    closed_by_peer,
    raise_nofile,
    raw_request,
    read_all,
    start,
    start_slowloris,
    trickle_until_closed,
)

HTTP_IMPLEMENTATIONS = ["httptools", "h11"]


@pytest.fixture(params=HTTP_IMPLEMENTATIONS)
def receiver(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Receiver]:
    """The receiver on httptools (what uvicorn[standard] brings) and on its h11 fallback."""
    process = start(tmp_path, "--http", request.param)
    yield process
    process.stop()


def signed_post(port: int, body: bytes, extra: str = "") -> bytes:
    headers = signed_headers(SECRET, body)
    head = "POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return raw_request(port, head.encode(), body)


def assert_still_serves(receiver: Receiver) -> None:
    body = callback_body()
    response = httpx.post(receiver.url, content=body, headers=signed_headers(SECRET, body),
                          timeout=5, trust_env=False)
    assert response.status_code == 200, response.text


# -- request heads: bounded size and count, 431 before the app runs ---------------------------


@pytest.mark.parametrize("line", [b"X-A: b\r\n", b"a"], ids=["many-headers", "one-long-header"])
def test_64_mb_of_headers_is_refused_and_memory_stays_flat(receiver: Receiver, line: bytes):
    before = receiver.rss_mib()
    sent = 0
    chunk = line * (1024 * 1024 // len(line))
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=10) as sock:
        try:
            sock.sendall(b"POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: a\r\n"
                         + (b"X-Long: " if line == b"a" else b""))
            while sent < 64 * 1024 * 1024:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = read_all(sock)
        closed = closed_by_peer(sock, 5)
    grown = receiver.rss_mib() - before
    assert grown < 100, f"the receiver grew by {grown:.0f} MiB reading {sent >> 20} MiB of head"
    assert sent < 64 * 1024 * 1024 or closed, "the connection outlived 64 MiB of head"
    assert answer == b"" or answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert_still_serves(receiver)


def test_too_many_headers_is_431(receiver: Receiver):
    body = callback_body()
    many = "".join(f"X-Padding-{i}: 1\r\n" for i in range(150))  # 2.6 KiB: under the size cap
    answer = signed_post(receiver.port, body, many)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    store = CallbackStore(f"sqlite:///{receiver.log_path.parent / 'callbacks.db'}")
    try:
        assert store.max_id() == 0, "the app ran on a refused head"
    finally:
        store.close()
    # An ordinary callback with a handful of headers is untouched.
    assert signed_post(receiver.port, callback_body()).startswith(b"HTTP/1.1 200")


# -- slow and idle connections are closed -------------------------------------------------------


@pytest.mark.parametrize("http", HTTP_IMPLEMENTATIONS)
def test_idle_and_slow_heads_and_slow_bodies_are_closed(tmp_path: Path, http: str):
    receiver = start(tmp_path, "--http", http, "--header-timeout", "1", "--body-timeout", "1")
    try:
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as idle, \
                socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as slow_head, \
                socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as slow_body:
            slow_head.sendall(b"POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            slow_body.sendall(b"POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              b"X-Signature: " + b"ab" * 32 + b"\r\n"
                              b"Content-Length: 1000\r\n\r\n{")
            closed: dict[str, bool] = {}
            deadline = time.monotonic() + 10  # ten times the configured timeouts
            for _ in range(40):  # a byte every 0.25 s: never idle, never done
                for name, sock in (("head", slow_head), ("body", slow_body)):
                    if name not in closed:
                        try:
                            sock.sendall(b"a")
                        except OSError:
                            closed[name] = True
                if len(closed) == 2 or time.monotonic() > deadline:
                    break
                time.sleep(0.25)
            closed["idle"] = closed_by_peer(idle, max(0.1, deadline - time.monotonic()))
            for name, sock in (("head", slow_head), ("body", slow_body)):
                if name not in closed:
                    closed[name] = closed_by_peer(sock, 1)
        assert closed == {"idle": True, "head": True, "body": True}, closed
        assert_still_serves(receiver)
    finally:
        receiver.stop()


def test_keep_alive_requests_per_connection_are_capped(tmp_path: Path):
    receiver = start(tmp_path, "--keep-alive-requests", "2")
    try:
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as sock:
            answers = []
            for _ in range(2):
                body = callback_body()
                head = "POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                head += "".join(f"{k}: {v}\r\n" for k, v in signed_headers(SECRET, body).items())
                head += f"Content-Length: {len(body)}\r\n\r\n"
                sock.sendall(head.encode() + body)
                answer = b""
                while b"}" not in answer:
                    answer += sock.recv(65536)
                answers.append(answer)
            assert all(a.startswith(b"HTTP/1.1 200") for a in answers), answers
            assert b"connection: close" not in answers[0].lower()
            assert b"connection: close" in answers[1].lower()
            assert closed_by_peer(sock, 5)
    finally:
        receiver.stop()


# -- after a 413 the connection is closed, not drained -----------------------------------------


def test_after_413_the_rest_of_a_100_mb_body_is_not_read(receiver: Receiver):
    total = 100 * 1024 * 1024
    sent = 0
    answer = b""
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=10) as sock:
        sock.sendall(b"POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: "
                     + b"ab" * 32 + f"\r\nContent-Length: {total}\r\n\r\n".encode())
        sock.settimeout(5)
        answer = sock.recv(65536)  # refused on the declared length, before any body
        chunk = b"x" * (1024 * 1024)
        try:
            while sent < total:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"connection: close" in answer.lower()
    assert sent < total, "the receiver read and discarded the whole 100 MB body"
    assert_still_serves(receiver)


# -- descriptors, connection cap and a slowloris --------------------------------------------------


def test_descriptor_limit_is_raised_to_fit_the_connection_cap(tmp_path: Path):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the hard RLIMIT_NOFILE is {hard}: nothing to raise the receiver's to")
    receiver = start(tmp_path, nofile=(1024, hard))
    try:
        soft, _ = receiver.nofile_limits()
        assert soft > 1024, "the receiver kept a 1,024 descriptor limit"
        banner = "".join(receiver.banner)
        match = re.search(r"limits:.*?(\d+) connections.*?(\d+) descriptors", banner)
        assert match, banner
        assert int(match.group(1)) < int(match.group(2)) == soft
    finally:
        receiver.stop()


@pytest.mark.slow
def test_a_callback_is_answered_within_5_s_during_a_2000_connection_slowloris(tmp_path: Path):
    """The receiver has only 1,024 descriptors (soft and hard): idle heads must make way."""
    attackers = 2000
    if raise_nofile(attackers + 256) < attackers + 256:
        pytest.skip(f"cannot raise RLIMIT_NOFILE to {attackers + 256} for the attacking process")
    receiver = start(tmp_path, nofile=(1024, 1024))
    slowloris = start_slowloris(receiver.port, attackers, 40)
    try:
        assert slowloris.stdout is not None
        line = slowloris.stdout.readline()
        assert line.startswith("open"), line
        answered: list[tuple[object, float]] = []
        for _ in range(5):
            body = callback_body()
            started = time.monotonic()
            try:
                response = httpx.post(receiver.url, content=body,
                                      headers=signed_headers(SECRET, body), timeout=5,
                                      trust_env=False)
                answered.append((response.status_code, time.monotonic() - started))
            except httpx.HTTPError as exc:
                answered.append((type(exc).__name__, time.monotonic() - started))
            time.sleep(0.5)
        assert all(status == 200 for status, _ in answered), answered
        assert all(elapsed < 5 for _, elapsed in answered), answered  # the service's deadline
        assert receiver.process.poll() is None
    finally:
        slowloris.kill()
        slowloris.wait(10)
        receiver.stop()


# -- a slow-body attack: a total body deadline, and the slowest bodies make way ------------------


@pytest.mark.parametrize("http", HTTP_IMPLEMENTATIONS)
def test_a_trickling_body_is_cut_at_its_total_deadline(tmp_path: Path, http: str):
    """A byte every 0.2 s never leaves the connection quiet: the deadline counts from the head."""
    receiver = start(tmp_path, "--http", http, "--body-timeout", "1")
    try:
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as sock:
            sock.sendall(b"POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: "
                         + b"ab" * 32 + b"\r\nContent-Length: 60000\r\n\r\n{")
            closed, answer = trickle_until_closed(sock, 10, interval=0.2)  # ten times the deadline
        assert closed, "a body trickled for ten times its deadline was not cut"
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert_still_serves(receiver)
    finally:
        receiver.stop()


def send_in_pieces(port: int, body: bytes, pieces: int, pause: float) -> bytes:
    """A signed callback whose body arrives in ``pieces`` parts ``pause`` apart (a slow link)."""
    headers = signed_headers(SECRET, body)
    head = "POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    size = -(-len(body) // pieces)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(head.encode())
            for start_at in range(0, len(body), size):
                time.sleep(pause)
                sock.sendall(body[start_at:start_at + size])
            return read_all(sock)
    except OSError as exc:
        return type(exc).__name__.encode()


@pytest.mark.parametrize("http", HTTP_IMPLEMENTATIONS)
def test_callbacks_are_served_during_a_slow_body_attack(tmp_path: Path, http: str):
    """Issue 22's attack, scaled down: 30 connections trickle 60,000-byte bodies at a cap of 20.

    Each sends a complete head, then a byte every 0.3 s, and reconnects at
    once when closed. Callbacks must still get 200 (the service does not wait),
    including one whose 30 KB body takes half a second to arrive: it is never
    the slowest, so never the one evicted.
    """
    receiver = start(tmp_path, "--http", http, "--max-connections", "20", "--body-timeout", "2")
    attack = start_slowloris(receiver.port, 30, 60, body_length=60000, interval=0.3)
    try:
        assert attack.stdout is not None
        line = attack.stdout.readline()
        assert line.startswith("open"), line
        statuses: Counter[object] = Counter()
        for _ in range(200):
            body = callback_body()
            try:
                response = httpx.post(receiver.url, content=body,
                                      headers=signed_headers(SECRET, body), timeout=5,
                                      trust_env=False)
                statuses[response.status_code] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
        assert statuses[200] >= 0.99 * statuses.total(), statuses
        padded = callback_body() + b" " * 30_000  # JSON allows trailing blanks; signed as is
        for _ in range(3):
            answer = send_in_pieces(receiver.port, padded, pieces=10, pause=0.05)
            assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        assert attack.poll() is None, "the attack ended before the callbacks did"
        assert receiver.process.poll() is None
    finally:
        attack.kill()
        attack.wait(10)
        receiver.stop()


# -- proxy headers are not trusted unless configured --------------------------------------------


def test_forwarded_headers_are_ignored_unless_configured(tmp_path: Path):
    spoofed = "203.0.113.77"
    forged = callback_body()
    head = ("POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: " + "ab" * 32
            + f"\r\nX-Forwarded-For: {spoofed}\r\nContent-Length: {len(forged)}\r\n"
            "Connection: close\r\n\r\n").encode()
    receiver = start(tmp_path, env={"FORWARDED_ALLOW_IPS": "*"})
    try:
        assert raw_request(receiver.port, head, forged).startswith(b"HTTP/1.1 403")
        log = receiver.log()
        assert "callback rejected with 403" in log
        assert spoofed not in log, "the receiver believed X-Forwarded-For from anyone"
        assert "from 127.0.0.1" in log
    finally:
        receiver.stop()
    # Configured on purpose (a proxy on loopback): then the header names the client.
    trusted = start(tmp_path, "--forwarded-allow-ips", "127.0.0.1")
    try:
        assert raw_request(trusted.port, head, forged).startswith(b"HTTP/1.1 403")
        assert f"from {spoofed}" in trusted.log()
    finally:
        trusted.stop()


def test_limits_are_shown_and_validated(tmp_path: Path):
    receiver = start(tmp_path, "--max-header-bytes", "8192", "--max-connections", "300")
    try:
        banner = "".join(receiver.banner)
        assert "head <= 8192 bytes" in banner and "300 connections" in banner
        assert SECRET not in banner
    finally:
        receiver.stop()
    with pytest.raises(ValueError, match="max_headers"):
        ConnectionLimits(max_headers=0)
    with pytest.raises(ValueError, match="timeouts"):
        ConnectionLimits(header_timeout=0)
