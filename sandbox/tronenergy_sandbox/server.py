"""Run the sandbox: in the foreground (CLI) or on a background thread (tests, demos)."""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType

import uvicorn

from tronenergy_protocol.serving import bind_socket, proxy_settings
from tronenergy_sandbox.app import create_app
from tronenergy_sandbox.state import SandboxConfig, SandboxState


def base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


class SandboxServer:
    """A sandbox on a background thread: ``with SandboxServer(SandboxConfig(port=0)) as s:``."""

    def __init__(self, config: SandboxConfig | None = None, *, log_level: str = "warning") -> None:
        self.config = config or SandboxConfig(port=0)
        self.state = SandboxState.build(self.config)
        self.socket = bind_socket(self.config.host, self.config.port)
        self.port: int = self.socket.getsockname()[1]
        self.url = base_url(self.config.host, self.port)
        self.root_url = self.url[: -len("/v1")]
        uv_config = uvicorn.Config(
            create_app(self.state), log_level=log_level, access_log=False, loop="asyncio",
            http="httptools", lifespan="on", timeout_graceful_shutdown=2,
            **proxy_settings(self.config.forwarded_allow_ips),
        )
        self._server = uvicorn.Server(uv_config)
        self._thread: threading.Thread | None = None

    @property
    def api_key(self) -> str:
        return self.state.credentials.api_key

    @property
    def api_secret(self) -> str:
        return self.state.credentials.api_secret

    @property
    def webhook_secret(self) -> str:
        return self.state.credentials.webhook_secret

    def start(self) -> SandboxServer:
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[self.socket])),
            name=f"tronenergy-sandbox-{self.port}", daemon=True,
        )
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("sandbox failed to start")
            self._thread.join(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.socket.close()
        self.state.world.close()

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"SandboxServer(url={self.url!r})"
