"""Assembles the sandbox's ASGI app: /v1, /sandbox, faults, access log, dispatcher."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox import api, control, node
from tronenergy_sandbox.chain import (
    attack_routes,
    parameter_routes,
    permission_routes,
    placed,
    range_routes,
    token_routes,
)
from tronenergy_sandbox.chain import control as chain_control
from tronenergy_sandbox.chain import routes as chain_routes
from tronenergy_sandbox.chain.producer import BlockProducer
from tronenergy_sandbox.dispatcher import Dispatcher
from tronenergy_sandbox.errors import WorldError
from tronenergy_sandbox.faults import FaultMiddleware
from tronenergy_sandbox.state import SandboxState

access_log = logging.getLogger("tronenergy.sandbox.access")
log = logging.getLogger("tronenergy.sandbox")


class AccessLogMiddleware:
    """One line per request: method, path, status, envelope code, milliseconds.

    The query string and headers are left out, so no secret can reach the log.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[int] = []
        state = scope.setdefault("state", {})

        async def logging_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, logging_send)
        finally:
            access_log.info(
                "%s %s %s code=%s %.1fms",
                scope["method"], scope["path"], status[0] if status else "dropped",
                state.get("code", "-"), (time.perf_counter() - started) * 1000,
            )


def _error(request: Request, code: ErrorCode, message: str, status: int | None = None,
           headers: dict[str, str] | None = None) -> Response:
    return api.json_response(request, api.error_payload(int(code), message), int(code),
                             status or code.http_status, headers)


def create_app(state: SandboxState) -> ASGIApp:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        dispatcher = Dispatcher(state.world, state.credentials,
                                timeout=state.config.callback_timeout)
        await dispatcher.start()
        state.dispatcher = dispatcher
        producer = BlockProducer(state.world, dispatcher.wake)
        producer.start()
        state.producer = producer
        try:
            yield
        finally:
            await producer.stop()
            state.producer = None
            await dispatcher.stop()
            state.dispatcher = None

    app = FastAPI(
        title="TRON energy service (sandbox)",
        version="1",
        description="Local emulator of the energy-rental and monitoring service. "
        "Signed requests: X-API-Key, X-Timestamp, X-Signature (see decisions.md).",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
        # The service never redirects: "/energy/account/" is an unknown path (40040),
        # not a 307 whose new path the request's signature no longer covers.
        redirect_slashes=False,
    )
    app.state.sandbox = state

    @app.exception_handler(WorldError)
    async def world_error(request: Request, exc: WorldError) -> Response:
        return _error(request, exc.code, exc.message)

    @app.exception_handler(control.ForbiddenError)
    async def forbidden(request: Request, exc: control.ForbiddenError) -> Response:
        return _error(request, ErrorCode.INVALID_PARAMETER, str(exc), status=403)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        fields = ", ".join(".".join(str(p) for p in err.get("loc", ())) for err in exc.errors())
        return _error(request, ErrorCode.INVALID_PARAMETER, f"invalid parameter: {fields}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return _error(request, ErrorCode.NOT_FOUND, f"no endpoint {request.url.path}")
        if exc.status_code == 405:
            return _error(request, ErrorCode.INVALID_PARAMETER,
                          f"method {request.method} not allowed on {request.url.path}", 405)
        return _error(request, ErrorCode.INVALID_PARAMETER, str(exc.detail), exc.status_code)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(request, ErrorCode.INTERNAL_ERROR, "internal error")

    app.include_router(api.router)
    app.include_router(control.router)
    app.include_router(node.router)
    app.include_router(chain_routes.router)
    app.include_router(chain_control.router)
    app.include_router(attack_routes.router)
    app.include_router(parameter_routes.router)
    app.include_router(parameter_routes.control_router)
    app.include_router(range_routes.router)
    app.include_router(placed.router)
    app.include_router(token_routes.router)
    app.include_router(permission_routes.router)
    app.include_router(permission_routes.control_router)
    wrapped: Any = FaultMiddleware(app, state.faults)
    return AccessLogMiddleware(wrapped)


def openapi_schema(state: SandboxState) -> dict[str, Any]:
    """The /openapi.json document, without starting a server."""
    app = create_app(state)
    inner: Any = app
    while not isinstance(inner, FastAPI):
        inner = inner.app
    schema: dict[str, Any] = inner.openapi()
    return schema
