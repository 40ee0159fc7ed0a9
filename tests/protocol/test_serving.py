"""Serving an ASGI app from a console script: the bound socket, the proxy rule, the loop.

Real sockets, a real uvicorn and real subprocesses: what the sandbox's and the
receiver's command lines rely on.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

from tronenergy_protocol.serving import bind_socket, proxy_settings

SPOOFED = "203.0.113.9"


@pytest.fixture
def bound() -> Iterator[socket.socket]:
    sock = bind_socket("127.0.0.1", 0)
    yield sock
    sock.close()


def test_port_zero_is_bound_and_listening_before_serving(bound: socket.socket):
    """The real port is known at once, and a client can connect before any server runs."""
    host, port = bound.getsockname()
    assert host == "127.0.0.1" and port > 0
    with socket.create_connection((host, port), timeout=5):
        accepted, _ = bound.accept()
        accepted.close()


def test_the_socket_passes_to_a_worker_process(bound: socket.socket):
    """Inheritable, so a served process can hand it on (uvicorn's workers, a reloader)."""
    assert bound.get_inheritable()
    assert bound.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)


def test_an_ipv6_host_gets_an_ipv6_socket():
    try:
        sock = bind_socket("::1", 0)
    except OSError as exc:  # a host without IPv6 loopback
        pytest.skip(f"no IPv6 loopback here: {exc}")
    with sock:
        assert sock.family == socket.AF_INET6
        assert sock.getsockname()[0] == "::1"


def test_asyncio_turns_nagle_off_on_the_accepted_connections(bound: socket.socket):
    """Only sockets made with IPPROTO_TCP get TCP_NODELAY from asyncio: without it every
    keep-alive answer waits for the peer's delayed ACK."""
    port = bound.getsockname()[1]
    seen: list[int] = []

    async def main() -> None:
        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=bound)
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await reader.read()  # closed by the server once it has looked
            writer.close()

    asyncio.run(asyncio.wait_for(main(), 10))
    assert seen and seen[0] != 0


Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def echo_client(scope: Scope, receive: Receive, send: Send) -> None:
    """An ASGI app that answers with the client address and scheme it was given."""
    if scope["type"] != "http":
        return
    body = json.dumps({"client": scope["client"][0], "scheme": scope["scheme"]}).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


@contextmanager
def serving(settings: dict[str, Any]) -> Iterator[int]:
    """``echo_client`` served by uvicorn on a bound socket, with ``settings``."""
    sock = bind_socket("127.0.0.1", 0)
    config = uvicorn.Config(echo_client, log_level="warning", lifespan="off", loop="asyncio",
                            **settings)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            threading.Event().wait(0.01)
        assert server.started, "uvicorn did not start"
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def seen_by_app(port: int) -> dict[str, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/", headers={"X-Forwarded-For": SPOOFED,
                                          "X-Forwarded-Proto": "https"})
        answer = conn.getresponse()
        assert answer.status == 200
        return json.loads(answer.read())
    finally:
        conn.close()


def test_forwarded_headers_are_ignored_unless_a_proxy_is_named(
        monkeypatch: pytest.MonkeyPatch):
    """Even with ``FORWARDED_ALLOW_IPS=*`` in the environment, anyone's X-Forwarded-For
    is ignored until the command line names the proxy."""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    assert proxy_settings(None) == {"proxy_headers": False, "forwarded_allow_ips": "127.0.0.1"}
    with serving(proxy_settings(None)) as port:
        assert seen_by_app(port) == {"client": "127.0.0.1", "scheme": "http"}


def test_a_named_proxy_is_believed():
    settings = proxy_settings("127.0.0.1")
    assert settings == {"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1"}
    with serving(settings) as port:
        assert seen_by_app(port) == {"client": SPOOFED, "scheme": "https"}


def test_a_proxy_elsewhere_is_not_believed_from_loopback():
    """Only the named addresses are trusted: a loopback client is not one of them."""
    with serving(proxy_settings("192.0.2.1")) as port:
        assert seen_by_app(port) == {"client": "127.0.0.1", "scheme": "http"}


def test_served_processes_freeze_their_startup_objects_out_of_the_collector():
    code = ("import gc, asyncio\n"
            "from tronenergy_protocol.serving import run_event_loop\n"
            "async def serve(): print(gc.get_freeze_count())\n"
            "run_event_loop(serve())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert int(out.stdout) > 1000


def test_the_loop_runs_the_coroutine_to_its_end_on_uvloop_where_installed():
    """The served coroutine runs on uvloop when it is installed (it is, with
    uvicorn[standard]), and the process ends when the coroutine does."""
    pytest.importorskip("uvloop")
    code = ("import asyncio\n"
            "from tronenergy_protocol.serving import run_event_loop\n"
            "async def serve():\n"
            "    await asyncio.sleep(0.01)\n"
            "    print(type(asyncio.get_running_loop()).__module__.split('.')[0])\n"
            "run_event_loop(serve())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "uvloop"
