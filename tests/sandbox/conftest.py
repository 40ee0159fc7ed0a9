"""Fixtures for the sandbox's HTTP tests: running sandboxes and a tiny signed-request helper.

Everything here talks real HTTP over loopback sockets, with nothing but ``requests``
and ``protocol.signing``: the provider's own client is deliberately not used, so the
sandbox is tested independently of the code it exists to test.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import pytest
import requests

from airflow_provider_tronenergy.protocol.address import random_address
from airflow_provider_tronenergy.protocol.signing import sign_request
from airflow_provider_tronenergy.sandbox import SandboxServer
from support.sandbox import sandbox_config, sandbox_fixture
from support.signed import SignedSession

_UNSET: Any = object()


class Reply:
    """One HTTP answer, its body parsed with exact decimals (never floats)."""

    def __init__(self, response: requests.Response) -> None:
        self.status = response.status_code
        self.headers = response.headers
        self.text = response.text
        try:
            self.json: Any = json.loads(self.text, parse_float=Decimal)
        except ValueError:
            self.json = None

    @property
    def code(self) -> Any:
        return self.json["code"]

    @property
    def data(self) -> Any:
        return self.json["data"]

    @property
    def message(self) -> str:
        message: str = self.json["message"]
        return message

    def ok(self, code: int = 10000) -> Any:
        """Assert a success envelope with ``code`` and return its ``data``."""
        assert self.status == 200, (self.status, self.text)
        assert set(self.json) == {"success", "code", "message", "data"}, self.text
        assert self.json["success"] is True
        assert self.json["code"] == code and type(self.json["code"]) is int
        assert isinstance(self.json["message"], str)
        return self.json["data"]

    def error(self, code: int, status: int) -> str:
        """Assert an error envelope (decisions.md section 2) and return its message."""
        assert (self.status, self.json and self.json.get("code")) == (status, code), (
            self.status, self.text)
        assert set(self.json) == {"success", "code", "message", "data"}, self.text
        assert self.json["success"] is False
        assert self.json["data"] is None
        assert isinstance(self.json["message"], str) and self.json["message"]
        return self.message

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.text[:300]!r})"


class Signed(SignedSession):
    """Signed requests to one sandbox (decisions.md section 1), every part overridable.

    ``path`` starts at the server root (``/v1/...``) and may carry a query string; the
    URL goes on the wire exactly as given, so the signature covers what is sent. The
    ``sign_*`` overrides sign something other than what is sent (negative tests).
    """

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        query: dict[str, Any] | None = None,
        ts: int | str | None = None,
        key: str | None = _UNSET,
        secret: str | None = None,
        scheme: str | None = None,
        sign_method: str | None = None,
        sign_path: str | None = None,
        sign_body: bytes | None = None,
        signature: str | None = _UNSET,
        unsigned: bool = False,
        timeout: float | tuple[float, float] = 10,
    ) -> Reply:
        data = raw if raw is not None else b"" if body is None else json.dumps(body).encode()
        if query:
            path = f"{path}{'&' if '?' in path else '?'}{urlencode(query)}"
        stamp = str(int(time.time()) if ts is None else ts)
        headers = {"Content-Type": "application/json"}
        api_key = self.api_key if key is _UNSET else key
        if api_key is not None:
            headers["X-API-Key"] = api_key
        if not unsigned:
            headers["X-Timestamp"] = stamp
            if signature is _UNSET:
                signature = sign_request(
                    self.api_secret if secret is None else secret,
                    scheme or self.scheme,
                    stamp,
                    sign_method or method,
                    path if sign_path is None else sign_path,
                    data if sign_body is None else sign_body,
                )
            if signature is not None:
                headers["X-Signature"] = signature
        prepared = self.session.prepare_request(
            requests.Request(method, self.root_url + path, data=data, headers=headers)
        )
        prepared.url = self.root_url + path  # no re-quoting: sent as signed
        return Reply(self.session.send(prepared, timeout=timeout, allow_redirects=False))

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.request("POST", path, body, **kw)

    def delete(self, path: str, **kw: Any) -> Reply:
        return self.request("DELETE", path, **kw)

    # -- the /sandbox control API (no auth) -------------------------------------------

    def control(self, method: str, path: str, body: Any = None, *, status: int = 200) -> Any:
        response = self.session.request(method, f"{self.root_url}/sandbox{path}",
                                        json=body, timeout=10)
        assert response.status_code == status, response.text
        return json.loads(response.text, parse_float=Decimal)["data"]

    def activated(self, address: str | None = None) -> str:
        """A (fresh) address the chain knows as activated."""
        address = address or random_address()
        self.control("POST", f"/addresses/{address}/activate")
        return address

    def holder(self, address: str | None = None) -> str:
        """A (fresh) activated address that already holds the token (65,000-energy case)."""
        address = self.activated(address)
        self.control("POST", f"/addresses/{address}/holder")
        return address

    def orders(self) -> list[dict[str, Any]]:
        orders: list[dict[str, Any]] = self.control("GET", "/orders")
        return orders

    def account(self) -> dict[str, Any]:
        account: dict[str, Any] = self.get("/v1/energy/account").ok()
        return account

    def add_fault(self, **spec: Any) -> dict[str, Any]:
        fault: dict[str, Any] = self.control("POST", "/faults", spec)
        return fault

    def clear_faults(self) -> None:
        self.control("DELETE", "/faults")


def signed_for(server: SandboxServer, scheme: str = "v1") -> Signed:
    return Signed(server.root_url, server.api_key, server.api_secret, scheme)


# One shared sandbox; tests on it use fresh addresses and relative balance checks.
sandbox_server = sandbox_fixture(scope="session", balance=Decimal("1000000"))


@pytest.fixture(scope="session")
def signed(sandbox_server: SandboxServer) -> Signed:
    return signed_for(sandbox_server)


@pytest.fixture
def faults(signed: Signed) -> Iterator[Signed]:
    """The shared sandbox's client, with every injected fault cleared afterwards."""
    signed.clear_faults()
    yield signed
    signed.clear_faults()


@pytest.fixture(scope="module")
def start_sandbox() -> Iterator[Callable[..., SandboxServer]]:
    """Start extra sandboxes (own config) that live until the end of the module."""
    started: list[SandboxServer] = []

    def start(**config: Any) -> SandboxServer:
        server = SandboxServer(sandbox_config(**config)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def signer() -> Callable[..., Signed]:
    """``signer(server, scheme="v1")``: a signed-request helper for any sandbox."""
    return signed_for
