"""Serve Airflow's own API-server app (``airflow.api_fastapi.app.create_app``) on a free port.

Run as a script in a child process whose environment sets ``AIRFLOW_HOME`` and
the metadata database: Airflow reads its configuration once, at import, so
this cannot share the test process. Prints ``listening on <port>``.
"""

from __future__ import annotations

import socket
import sys

import uvicorn


def main() -> None:
    from airflow.api_fastapi.app import create_app

    app = create_app()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=2))
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
