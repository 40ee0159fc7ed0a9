"""The receiver as an ASGI app: ``POST /callbacks`` and ``GET /health``.

A signed probe (``verify.probe_body``) posted to ``/callbacks`` is answered 200
``{"success": true, "probe": true}`` and stored nowhere: ``tronenergy-doctor`` proves
the route and the secret with it; unsigned or wrongly signed, it is a 403 like a transfer.

The signature is the only gate (the Airflow API server does not authenticate
plugin apps), and a 200 means "durably stored": the service has no backfill,
so acknowledging and then losing a transfer would lose it for good.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Final, Protocol

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from airflow_provider_tronenergy.callbacks.batcher import (
    CommitTimeout,
    GroupCommitter,
    Overloaded,
    Recorder,
)
from airflow_provider_tronenergy.callbacks.verify import (
    DEFAULT_MAX_BODY,
    DEFAULT_TOLERANCE,
    Probe,
    Rejection,
    SecretsSource,
    WebhookSecrets,
    secrets_source,
    verify_any,
)
from tronenergy_protocol.numbers import is_ascii_digits

log = logging.getLogger(__name__)

DEFAULT_COMMIT_TIMEOUT: Final = 4.0
"""Below the service's 5 s deadline: a late commit is answered 503, never a late 200."""
DEFAULT_BODY_TIMEOUT: Final = 10.0
"""Seconds a client has to send the body once its head arrived (408 past it)."""

NOT_CONFIGURED: Final = (
    "the callback receiver has no webhook secret: set the extra 'webhook_secret' on the "
    "tronenergy connection or the TRONENERGY_WEBHOOK_SECRET environment variable"
)


# Pre-encoded bodies; a fresh Response each time, since middlewares may edit its headers.
_STORED: Final = b'{"success":true,"duplicate":false}'
_DUPLICATE: Final = b'{"success":true,"duplicate":true}'
_OK: Final = b'{"success":true}'
_PROBED: Final = b'{"success":true,"probe":true}'


_CLOSE: Final = {"connection": "close"}
"""On answers given before the body was read: the rest of it is not wanted (see limits)."""


def _error(status: int, error: str, message: str,
           headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"success": False, "error": error, "message": message},
                        status_code=status, headers=headers)


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refused with 413 as soon as it exceeds ``limit`` (never buffered past it)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not is_ascii_digits(declared):
            raise Rejection(400, "invalid_body", "Content-Length is not a number")
        if int(declared) > limit:
            raise Rejection(413, "body_too_large", f"body is larger than {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise Rejection(413, "body_too_large", f"body is larger than {limit} bytes")
    return bytes(body)


class CallbackStoreLike(Recorder, Protocol):
    """What the app needs of a store: :class:`~.store.CallbackStore` is one."""

    def ping(self) -> None: ...


def create_app(
    store: CallbackStoreLike | None,
    secrets: WebhookSecrets | SecretsSource | str | Sequence[str] | None,
    *,
    address_secrets: Mapping[str, str | Iterable[str]] | None = None,
    tolerance: int = DEFAULT_TOLERANCE,
    max_body: int = DEFAULT_MAX_BODY,
    storage: bool = True,
    commit_timeout: float = DEFAULT_COMMIT_TIMEOUT,
    max_batch: int = 500,
    not_configured: str = NOT_CONFIGURED,
    body_timeout: float | None = None,
) -> Starlette:
    """Build the receiver.

    ``secrets``: the key-level webhook secret(s) (several while rotating), a
    :class:`WebhookSecrets`, or a :class:`SecretsSource` that is asked on every
    request (the plugin's reads the Airflow connection). With no secret the app
    answers 503 to everything rather than accept anything. ``address_secrets``
    maps a monitored address to its own secret(s). ``storage=False`` verifies
    and answers without storing: it exists only as the benchmark's ceiling.
    ``body_timeout`` bounds reading the body (408 past it) where the server does
    not: the plugin sets it; the standalone receiver's server enforces its own.
    A body refused as too large (413) or too slow (408) also closes the connection.
    """
    if storage and store is None:
        raise ValueError("a store is required unless storage=False")
    if tolerance < 0:
        raise ValueError("tolerance must be >= 0 (0 disables the check)")
    source = secrets_source(secrets, address_secrets)
    committer = (GroupCommitter(store, max_batch=max_batch, commit_timeout=commit_timeout)
                 if storage and store is not None else None)

    async def receive_callback(request: Request) -> Response:
        current = await source.get()
        if not current:
            return _error(503, "not_configured", not_configured)
        try:
            if body_timeout is None:
                body = await read_body(request, max_body)
            else:
                body = await asyncio.wait_for(read_body(request, max_body), body_timeout)
            event = verify_any(current, body, request.headers.get("x-signature"),
                               tolerance=tolerance)
        except Rejection as rejection:
            log.warning("callback rejected with %d (%s) from %s: %s", rejection.status,
                        rejection.error, request.client.host if request.client else "?",
                        rejection.message)
            return JSONResponse(rejection.to_json(), status_code=rejection.status,
                                headers=_CLOSE if rejection.status == 413 else None)
        except asyncio.TimeoutError:
            log.warning("callback body from %s not received within %g s; answered 408",
                        request.client.host if request.client else "?", body_timeout)
            return _error(408, "body_timeout", "request body not received in time", _CLOSE)
        except ClientDisconnect:  # the client left (or the server cut a slow body): nobody hears
            return Response(status_code=400)
        if isinstance(event, Probe):
            return Response(_PROBED, media_type="application/json")
        if committer is None:
            return Response(_OK, media_type="application/json")
        try:
            result = await committer.submit(event)
        except CommitTimeout:
            log.error("callback %s not committed within %.1f s; answered 503", event.tx_hash,
                      commit_timeout)
            return _error(503, "commit_timeout", "not stored in time; please retry")
        except Overloaded as exc:
            log.error("callback %s refused: %s", event.tx_hash, exc)
            return _error(503, "overloaded", "too many callbacks waiting; please retry")
        except Exception as exc:
            log.warning("callback %s not stored (%s); answered 503", event.tx_hash,
                        type(exc).__name__)
            return _error(503, "store_unavailable", "the callback store is unavailable; "
                          "please retry")
        if result.conflict:
            log.warning("callback %s CONFLICTS with the stored transfer of that tx_hash "
                        "(%s differ): not stored, kept in the conflicts table for inspection, "
                        "answered 409; a service bug or a leaked webhook secret", event.tx_hash,
                        ", ".join(result.conflict))
            return _error(409, "conflict", "a different transfer with this tx_hash is already "
                          f"stored ({', '.join(result.conflict)} differ)")
        log.info("callback %s %s: %s %s to %s (block %d)", event.tx_hash,
                 "duplicate" if result.duplicate else "stored", event.amount, event.token,
                 event.to_address, event.block_number)
        return Response(_DUPLICATE if result.duplicate else _STORED,
                        media_type="application/json")

    async def health(request: Request) -> JSONResponse:
        if not await source.get():
            return JSONResponse({"status": "unconfigured", "message": not_configured},
                                status_code=503)
        if store is not None and storage:
            try:
                await asyncio.to_thread(store.ping)
            except Exception:
                log.exception("callback store health check failed")
                return JSONResponse({"status": "store_unavailable"}, status_code=503)
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if committer is not None:
            await committer.aclose()

    app = Starlette(
        routes=[
            Route("/callbacks", receive_callback, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.store = store
    app.state.committer = committer
    app.state.secrets = source
    return app
