"""A real HTTP callback receiver on a loopback port that records every delivery."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class RecordingReceiver:
    """``respond(n)`` gives the HTTP status for the n-th delivery (0-based)."""

    respond: Callable[[int], int] = lambda n: 200
    received: list[Delivery] = field(default_factory=list)
    hold: threading.Event | None = None

    def __post_init__(self) -> None:
        receiver = self
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    index = len(receiver.received)
                    receiver.received.append(
                        Delivery(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    receiver._arrived.notify_all()
                if receiver.hold is not None:
                    receiver.hold.wait(10)
                status = receiver.respond(index)
                payload = b'{"success": true}' if status == 200 else b'{"error": "nope"}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/callbacks"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count: int, timeout: float = 15.0) -> list[Delivery]:
        with self._arrived:
            ok = self._arrived.wait_for(lambda: len(self.received) >= count, timeout)
        assert ok, f"expected {count} deliveries, got {len(self.received)}"
        return list(self.received)
