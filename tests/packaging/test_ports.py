"""The ports the tests' servers are told to bind are theirs, and the server answering on
one is the test's own (``tests/support/ports.py``, ``tests/support/own_api.py``).

A port found by ``bind(0)`` and closed (what the tests did before) is in the kernel's
ephemeral range, where any later ``bind(0)`` may be given it: a deployment's api-server
then found its port taken by another test's server, and the deployment talked to that one.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jwt
import pytest

from support.own_api import ForeignServer, own_token, wait_for_own_api_server
from support.ports import EPHEMERAL, closed_port, release_port, reserve_port, reserved_ports

TESTS = Path(__file__).resolve().parents[1]
SECRET = "the-deployments-own-jwt-secret-" + "x" * 40


def ephemeral() -> range:
    low, high = (int(part) for part in EPHEMERAL.read_text().split())
    return range(low, high + 1)


def grab_by_bind_zero(count: int) -> set[int]:
    """The ports ``count`` sockets bound to port 0 get, all open at once (then closed)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return {sock.getsockname()[1] for sock in sockets}
    finally:
        for sock in sockets:
            sock.close()


def test_a_reserved_port_is_one_bind_zero_never_hands_out():
    with reserved_ports(2) as ports:
        assert len(set(ports)) == 2
        assert not set(ports) & set(ephemeral()), (ports, ephemeral())
        grabbed: set[int] = set()
        others = [threading.Thread(target=lambda: grabbed.update(grab_by_bind_zero(500)))
                  for _ in range(4)]
        for thread in others:
            thread.start()
        for thread in others:
            thread.join()
        assert grabbed and not grabbed & set(ports)
        for port in ports:  # the server told to bind it can
            with socket.create_server(("127.0.0.1", port)):
                pass


def in_another_process(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30, env={"PYTHONPATH": str(TESTS)})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_another_process_cannot_reserve_a_held_port_until_it_is_released():
    port = reserve_port()
    try_it = ("from support.ports import reserve_port\n"
              f"try:\n    print(reserve_port(within=range({port}, {port + 1})))\n"
              "except RuntimeError as exc:\n    print('refused:', exc)\n")
    try:
        assert in_another_process(try_it).startswith("refused:")
    finally:
        release_port(port)
    assert in_another_process(try_it) == str(port)


def test_a_closed_port_refuses_connections_and_is_nobody_elses():
    port = closed_port()
    assert port not in ephemeral() and closed_port() == port
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


@contextmanager
def server_answering(token_body: dict[str, str], status: int = 200) -> Iterator[str]:
    """An HTTP server on a reserved port answering ``/auth/token`` ``status`` with
    ``token_body``."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            raw = json.dumps(token_body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    with reserved_ports() as (port,), ThreadingHTTPServer(("127.0.0.1", port), Handler) as server:
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.shutdown()
            thread.join(5)


@pytest.mark.parametrize("body", [
    {},  # 200 without a token: what a deployment once took for its own server
    {"access_token": "not-a-jwt"},
    {"access_token": jwt.encode({"sub": "admin"}, "another-deployments-secret" + "y" * 40,
                                algorithm="HS512")},
], ids=["no-token", "not-a-token", "another-secret"])
def test_another_server_on_the_port_is_refused(body: dict[str, str]):
    with server_answering(body) as base:
        with pytest.raises(ForeignServer, match="another server holds the port"):
            own_token(base, SECRET)
        with pytest.raises(ForeignServer):
            wait_for_own_api_server(base, SECRET, alive=lambda: True, log_tail=lambda: "",
                                    timeout=5)


@pytest.mark.parametrize("status", [200, 201])  # Airflow 3.3.2 answers 201
def test_the_deployments_own_server_is_recognised_by_its_token(status: int):
    token = jwt.encode({"sub": "admin"}, SECRET, algorithm="HS512")
    with server_answering({"access_token": token}, status) as base:
        assert own_token(base, SECRET) == token
        assert wait_for_own_api_server(base, SECRET, alive=lambda: True,
                                       log_tail=lambda: "", timeout=5) == token


def test_a_server_that_exited_fails_the_wait_at_once_with_its_log():
    base = f"http://127.0.0.1:{closed_port()}"
    tail = "OSError: [Errno 98] address in use"
    with pytest.raises(AssertionError, match=re.escape(f"exited:\n{tail}")):
        wait_for_own_api_server(base, SECRET, alive=lambda: False, log_tail=lambda: tail,
                                timeout=60)
