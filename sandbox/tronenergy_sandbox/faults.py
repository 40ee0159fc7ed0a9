"""Fault injection on /v1 and the node's API: errors, rate limits, latency, drops, lies.

The ``drop`` fault lets the request be fully processed and then closes the
connection without an answer: the case in which a blind client retry would buy
twice. The ``tamper`` fault lets it be processed too, then rewrites fields of the
answer (``patch``: a dotted path such as ``data.cost``, ``code`` or, into a list,
``data.addresses.0.address``, to the raw JSON text put there): a service that lies,
or a proxy that mangles. It is an
ASGI middleware so that it wraps real request handling.

A fault's path is relative to ``/v1`` (``*`` matches every service path); one
under ``/wallet`` or ``/walletsolidity`` applies to the node's API instead (a
``drop`` on ``/wallet/broadcasttransaction``: the transaction is accepted and the
answer lost). A fault with ``api_key`` meets only requests carrying that
``TRON-PRO-API-KEY``: one of two node connections to the same chain that lags or lies.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox.jsonout import dumps
from tronenergy_sandbox.ratelimit import NodeRateLimit

log = logging.getLogger("tronenergy.sandbox.faults")

KINDS = ("error", "rate_limit", "latency", "drop", "tamper")
NODE_PREFIXES = ("/wallet/", "/walletsolidity/")
"""The node's API: faults on these paths name them in full."""


def _is_node(path: str) -> bool:
    """A node path, or a fault's path for one (``/wallet*`` covers ``/walletsolidity`` too)."""
    return path.startswith("/wallet")
ERROR_CODES = {500: ErrorCode.INTERNAL_ERROR, 503: ErrorCode.UPSTREAM_UNAVAILABLE}


@dataclass
class Fault:
    id: int
    kind: str
    path: str = "*"
    method: str | None = None
    status: int = 500
    retry_after: int = 1
    latency_ms: int = 0
    after_processing: bool = False
    count: int | None = None
    probability: Decimal = Decimal(1)
    patch: dict[str, str] = field(default_factory=dict)
    api_key: str | None = None
    fired: int = field(default=0)

    def matches(self, method: str, path: str, api_key: str | None = None) -> bool:
        if self.method is not None and self.method != method:
            return False
        if self.api_key is not None and self.api_key != api_key:
            return False
        if _is_node(path) != _is_node(self.path):
            return False  # a node path only meets a node fault, a /v1 path only a /v1 one
        if self.path == "*":
            return True
        if self.path.endswith("*"):
            return path.startswith(self.path[:-1])
        return path == self.path

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class FaultRegistry:
    def __init__(self, seed: int | None = None) -> None:
        self._faults: list[Fault] = []
        self._ids = itertools.count(1)
        self._random = random.Random(seed)
        self.rate_limit = NodeRateLimit()
        """The node's requests per second per key, as TronGrid keeps them (:mod:`.ratelimit`)."""

    def add(self, **spec: Any) -> Fault:
        fault = Fault(id=next(self._ids), **spec)
        self._faults.append(fault)
        return fault

    def clear(self) -> None:
        self._faults.clear()

    def remove(self, fault_id: int) -> bool:
        before = len(self._faults)
        self._faults = [f for f in self._faults if f.id != fault_id]
        return len(self._faults) != before

    def list(self) -> list[Fault]:
        return list(self._faults)

    def take(self, method: str, path: str, api_key: str | None = None) -> Fault | None:
        """The first matching fault that fires for this request, consuming one of its count."""
        for fault in self._faults:
            if not fault.matches(method, path, api_key):
                continue
            if fault.probability < 1.0 and self._random.random() >= fault.probability:
                continue
            fault.fired += 1
            if fault.count is not None and fault.fired >= fault.count:
                self._faults.remove(fault)
            return fault
        return None


class FaultMiddleware:
    def __init__(self, app: ASGIApp, registry: FaultRegistry, prefix: str = "/v1") -> None:
        self.app = app
        self.registry = registry
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith((self.prefix + "/", *NODE_PREFIXES)):
            await self.app(scope, receive, send)
            return
        relative = path if path.startswith(NODE_PREFIXES) else path[len(self.prefix):]
        raw_key = dict(scope.get("headers") or []).get(b"tron-pro-api-key")
        key = None if raw_key is None else raw_key.decode("latin-1")
        if _is_node(relative):
            over = self.registry.rate_limit.admit(key)
            if over is not None:
                await _send_json(send, over.status, over.body(), {} if over.retry_after is None
                                 else {"retry-after": str(over.retry_after)})
                return
        fault = self.registry.take(scope["method"], relative, key)
        if fault is None:
            await self.app(scope, receive, send)
            return
        log.info("fault %s (%s) on %s %s", fault.id, fault.kind, scope["method"], path)
        if fault.kind == "latency":
            await self.app(scope, receive, _delayed(send, fault.latency_ms / 1000))
        elif fault.kind == "rate_limit":
            await _send_error(scope, send, ErrorCode.RATE_LIMITED, "rate limited (injected)",
                              {"retry-after": str(fault.retry_after)})
        elif fault.kind == "error":
            code = ERROR_CODES.get(fault.status, ErrorCode.INTERNAL_ERROR)
            if fault.after_processing:
                await self.app(scope, receive, _swallow)
            await _send_error(scope, send, code, f"injected {fault.status}", {},
                              status=fault.status)
        elif fault.kind == "drop":
            await self.app(scope, receive, _swallow)
            _drop_connection(receive)
        elif fault.kind == "tamper":
            await self.app(scope, receive, _tampered(send, fault.patch))


async def _swallow(message: Message) -> None:
    """Discard the processed request's answer."""


def _tampered(send: Send, patch: dict[str, str]) -> Send:
    """Send the processed answer with ``patch`` applied to its JSON."""
    start: dict[str, Any] = {}
    body: list[bytes] = []

    async def tampered_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
            return
        body.append(message.get("body", b""))
        if message.get("more_body"):
            return
        raw = rewrite(b"".join(body), patch)
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(raw)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": raw})

    return tampered_send


def rewrite(body: bytes, patch: dict[str, str]) -> bytes:
    """``body`` (JSON) with each dotted path set to its raw JSON text, verbatim. A number
    in the path indexes a list (it must be within it); a missing object is made."""
    payload = json.loads(body, parse_float=Decimal)
    for index, (path, _) in enumerate(patch.items()):
        *parents, leaf = path.split(".")
        node = payload
        for name in parents:
            if isinstance(node, list):
                node = node[int(name)]
                continue
            if not isinstance(node.get(name), dict | list):
                node[name] = {}
            node = node[name]
        if isinstance(node, list):
            node[int(leaf)] = f"@@tamper{index}@@"
        else:
            node[leaf] = f"@@tamper{index}@@"
    text = dumps(payload)
    for index, raw in enumerate(patch.values()):
        text = text.replace(f'"@@tamper{index}@@"', raw)
    return text.encode()


def _delayed(send: Send, seconds: float) -> Send:
    async def delayed_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            await asyncio.sleep(seconds)
        await send(message)

    return delayed_send


async def _send_error(scope: Scope, send: Send, code: ErrorCode, message: str,
                      headers: dict[str, str], status: int | None = None) -> None:
    scope.setdefault("state", {})["code"] = int(code)
    body = dumps({"success": False, "code": int(code), "message": message, "data": None}).encode()
    raw_headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status or code.http_status,
                "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


async def _send_json(send: Send, status: int, payload: dict[str, Any],
                     headers: dict[str, str]) -> None:
    """An answer that is not the service's envelope (the node's rate limit: TronGrid's)."""
    body = dumps(payload).encode()
    raw_headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


def _drop_connection(receive: Receive) -> None:
    """Close the socket with no answer at all (uvicorn keeps the transport on its cycle)."""
    cycle = getattr(receive, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if cycle is None or transport is None:
        raise RuntimeError("drop fault needs uvicorn: no transport found")
    cycle.keep_alive = False
    cycle.disconnected = True  # stops uvicorn from writing a 500 to the closed socket
    transport.abort()
