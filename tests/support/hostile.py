"""Hostile clients for the receiver's hardening tests: a receiver process we can watch, slowloris.

Every connection goes to 127.0.0.1. The receiver runs as the real console
script (``python -m airflow_provider_tronenergy.callbacks``) so the tests see
the server it really runs, with its log in a file the test can read.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tronenergy_sandbox.process import stop_process

SECRET = "whsec_hardening"


@dataclass
class Receiver:
    process: subprocess.Popen[str]
    url: str
    banner: list[str]
    log_path: Path
    port: int = field(init=False)

    def __post_init__(self) -> None:
        self.port = int(self.url.rsplit(":", 1)[1].split("/", 1)[0])

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def rss_mib(self) -> float:
        """Resident memory of the receiver process, from /proc."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        assert match, status
        return int(match.group(1)) / 1024

    def nofile_limits(self) -> tuple[int, int]:
        """(soft, hard) RLIMIT_NOFILE of the receiver process, from /proc."""
        for line in Path(f"/proc/{self.pid}/limits").read_text().splitlines():
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return int(soft), int(hard)
        raise AssertionError("no 'Max open files' line")

    def stop(self) -> None:
        stop_process(self.process)


def start(tmp: Path, *args: str, env: dict[str, str] | None = None,
          nofile: tuple[int, int] | None = None, log_level: str = "warning") -> Receiver:
    """Start ``tronenergy-receiver`` on a free loopback port; ``nofile`` sets its fd limits."""

    def limit_descriptors() -> None:  # runs in the child, before exec
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)

    log_path = tmp / f"receiver-{time.monotonic_ns()}.log"
    log = log_path.open("w")
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("TRONENERGY_", "AIRFLOW_CONN_"))}
    environment.update({"PYTHONUNBUFFERED": "1", "TRONENERGY_WEBHOOK_SECRET": SECRET,
                        "AIRFLOW_HOME": str(tmp / "airflow_home"), **(env or {})})
    process = subprocess.Popen(
        [sys.executable, "-m", "airflow_provider_tronenergy.callbacks", "--port", "0",
         "--log-level", log_level, "--store", f"sqlite:///{tmp / 'callbacks.db'}", *args],
        stdout=subprocess.PIPE, stderr=log, text=True, env=environment,
        preexec_fn=limit_descriptors if nofile else None,
    )
    log.close()
    assert process.stdout is not None
    banner: list[str] = []
    for line in iter(process.stdout.readline, ""):
        if line.startswith(("tronenergy receiver", "  ")):
            banner.append(line)
        if line.startswith("  secrets:"):
            break
    match = re.search(r"listening on (\S+)", banner[0]) if banner else None
    if match is None:
        process.kill()
        process.wait(10)
        raise RuntimeError(f"receiver did not start: {banner!r} {log_path.read_text()[-2000:]}")
    receiver = Receiver(process, match.group(1), banner, log_path)
    threading.Thread(target=lambda: process.stdout.read() if process.stdout else None,
                     daemon=True).start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(receiver.url.replace("/callbacks", "/health"), timeout=1,
                         trust_env=False).status_code == 200:
                return receiver
        time.sleep(0.05)
    receiver.stop()
    raise RuntimeError("receiver did not become healthy")


def raw_request(port: int, head: bytes, body: bytes = b"", timeout: float = 5) -> bytes:
    """Send bytes on a fresh connection and read until the server closes or goes quiet."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head + body)
        return read_all(sock)


def read_all(sock: socket.socket) -> bytes:
    answer = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    """True once the peer closed (EOF or reset) within ``within`` seconds; data is discarded."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            if not sock.recv(65536):
                return True
        except TimeoutError:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def trickle_until_closed(sock: socket.socket, seconds: float,
                         interval: float = 0.25) -> tuple[bool, bytes]:
    """Send a byte every ``interval`` until the peer closes; ``(closed, what it answered)``."""
    received = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            sock.sendall(b"a")
        except OSError:
            return True, received
        sock.settimeout(interval)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return True, received
        if not chunk:
            return True, received
        received += chunk
    return False, received


def raise_nofile(needed: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE as far as the hard limit allows; return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return sys.maxsize if soft == resource.RLIM_INFINITY else soft


SLOWLORIS = r"""
import asyncio, sys, time

async def main(port, count, seconds, length, interval, reconnect):
    head = b"POST /callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: "
    if length:  # a complete head, then a body that never ends in time
        head += b"ab" * 32 + b"\r\nContent-Length: %d\r\n\r\n" % length
    opened = 0

    async def attacker(index):
        nonlocal opened
        while time.monotonic() < end:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.2)
                continue
            opened += 1
            closed = asyncio.ensure_future(reader.read())  # done when the server closes
            try:
                writer.write(head)
                while time.monotonic() < end:
                    await asyncio.wait([closed], timeout=interval)
                    if closed.done():
                        break
                    writer.write(b"a")  # one byte at a time: the head (or body) never ends
                    await writer.drain()
            except OSError:
                pass
            finally:
                closed.cancel()
                writer.close()
            await asyncio.sleep(reconnect)  # then come back with a new connection

    end = time.monotonic() + seconds
    tasks = [asyncio.create_task(attacker(i)) for i in range(count)]
    while opened < count and time.monotonic() < end:
        await asyncio.sleep(0.05)
    print(f"open {opened}", flush=True)
    await asyncio.gather(*tasks)
    print(f"opened {opened}", flush=True)

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]),
                 float(sys.argv[5]), float(sys.argv[6])))
"""


def start_slowloris(port: int, count: int, seconds: float, *, body_length: int = 0,
                    interval: float = 1.0, reconnect: float = 0.05) -> subprocess.Popen[str]:
    """``count`` connections that trickle a byte every ``interval``, reconnecting when closed.

    With ``body_length`` 0 the bytes are a head that never ends (a slowloris);
    otherwise each sends a complete head with that ``Content-Length`` and then
    trickles the body (a slow-body attack). A closed one comes back after
    ``reconnect`` seconds. A separate process, so that its
    event loop does not share the test's GIL. It prints ``open N`` once all
    connections were opened (or after ``seconds``), and ``opened N`` (every
    connection it made, reconnections included) when it ends.
    """
    return subprocess.Popen([sys.executable, "-c", SLOWLORIS, str(port), str(count), str(seconds),
                             str(body_length), str(interval), str(reconnect)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
