"""Test support for the callback receiver: serve an app on loopback, sign bodies, run the CLI."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback
from tronenergy_sandbox.process import stop_process


def transfer_data(**overrides: Any) -> dict[str, Any]:
    data = {
        "tx_hash": secrets.token_hex(32),
        "from": random_address(),
        "to": random_address(),
        "amount": "12.5",
        "token": "TRX",
        "block_number": 68_000_001,
        "block_timestamp": int(time.time() * 1000),
    }
    data.update(overrides)
    return data


def callback_body(data: dict[str, Any] | None = None, *, timestamp: int | None = None,
                  event: str = "tron.transfer") -> bytes:
    """Serialised as the sandbox's dispatcher does (compact separators)."""
    payload = {"event": event, "timestamp": int(time.time()) if timestamp is None else timestamp,
               "data": transfer_data() if data is None else data}
    return json.dumps(payload, separators=(",", ":")).encode()


_block = itertools.count(70_000_000)


def verified_transfer(to: str, amount: str = "12.5", token: str = "TRX",
                      sender: str | None = None,
                      secret: str = "whsec_test") -> VerifiedTransfer:
    """A verified ``tron.transfer`` callback, parsed exactly as the receiver parses one:
    what a store records."""
    from airflow_provider_tronenergy.callbacks.verify import parse_transfer

    body = callback_body(transfer_data(to=to, amount=amount, token=token,
                                       block_number=next(_block),
                                       **({"from": sender} if sender else {})))
    return parse_transfer(body, signature=sign_callback(secret, body), verified_by="key")


def signed_headers(secret: str, body: bytes) -> dict[str, str]:
    return {"Content-Type": "application/json", "X-Signature": sign_callback(secret, body),
            "X-Timestamp": str(int(time.time()))}


class ServedApp:
    """An ASGI app under uvicorn on a free loopback port, on a background thread."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1024)
        self.port = self.sock.getsockname()[1]
        self.root_url = f"http://127.0.0.1:{self.port}"
        self.callback_url = f"{self.root_url}/callbacks"
        self.server = uvicorn.Server(uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="on", loop="asyncio",
            http="httptools", timeout_graceful_shutdown=2,
        ))
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[self.sock])), daemon=True,
        )

    def __enter__(self) -> ServedApp:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert self._thread.is_alive() and time.monotonic() < deadline, "app did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(10)
        self.sock.close()


def post(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, content=body, headers=headers, timeout=10, trust_env=False)


@dataclass
class ReceiverProcess:
    """``tronenergy-receiver`` as a child process (killed with SIGKILL in the crash drill)."""

    process: subprocess.Popen[str]
    url: str
    banner: list[str]

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        stop_process(self.process)


def start_receiver(*args: str, env: dict[str, str] | None = None) -> ReceiverProcess:
    """Start the CLI (``python -m ...callbacks``) and wait until it answers /health."""
    # A file, not a pipe: a pipe nobody reads could block the child. It lives as long as it.
    stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "airflow_provider_tronenergy.callbacks", "--log-level", "warning",
         *args],
        stdout=subprocess.PIPE, stderr=stderr, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    assert process.stdout is not None
    banner: list[str] = []
    for line in iter(process.stdout.readline, ""):  # Airflow's logging may write here too
        if line.startswith(("tronenergy receiver", "  store:", "  secrets:")):
            banner.append(line)
        if len(banner) == 3:
            break
    match = re.search(r"listening on (\S+)", banner[0]) if banner else None
    if match is None:
        process.kill()
        process.wait(10)
        stderr.seek(0)
        raise RuntimeError(f"receiver did not start: {banner!r} {stderr.read()[-2000:]}")
    receiver = ReceiverProcess(process, match.group(1), banner)
    threading.Thread(target=lambda: process.stdout.read() if process.stdout else None,
                     daemon=True).start()  # keep draining: a full pipe would block the child
    health = receiver.url.replace("/callbacks", "/health")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            if httpx.get(health, timeout=1, trust_env=False).status_code == 200:
                return receiver
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    receiver.stop()
    raise RuntimeError("receiver did not become healthy")


class RawConnection:
    """A minimal keep-alive HTTP/1.1 POST client on asyncio streams.

    httpx spends more CPU per request than the receiver does, which would make
    load tests and the benchmark measure the client; this does almost nothing.
    """

    def __init__(self, url: str) -> None:
        rest = url.split("://", 1)[1]
        hostport, _, path = rest.partition("/")
        host, _, port = hostport.rpartition(":")
        self.host, self.port, self.path = host, int(port), "/" + path
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, body: bytes, headers: dict[str, str],
                   timeout: float = 5.0) -> tuple[int, bytes]:
        """``(status, body)``; raises ``ConnectionError`` when the exchange broke."""
        try:
            return await asyncio.wait_for(self._exchange(body, headers), timeout)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as exc:
            self.close()
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc

    async def _exchange(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        head = f"POST {self.path} HTTP/1.1\r\nHost: {self.host}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head += f"Content-Length: {len(body)}\r\n\r\n"
        self._writer.write(head.encode() + body)
        raw_head = await self._reader.readuntil(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        fields = {k.strip().lower(): v.strip()
                  for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        payload = await self._reader.readexactly(int(fields.get("content-length", "0")))
        if fields.get("connection", "").lower() == "close":
            self.close()
        return status, payload

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
