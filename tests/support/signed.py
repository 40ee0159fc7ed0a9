"""Signed requests to the sandbox with nothing but requests and the protocol module.

Deliberately independent of the provider's client, so sandbox tests do not
depend on the code the sandbox is used to test. ``SignedSession`` makes plain signed
calls; ``Signed`` (the sandbox HTTP tests' helper) can override every part of a
request and answers a ``Reply`` that checks the envelope.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import pytest
import requests

from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_request
from tronenergy_sandbox import SandboxServer


class SignedSession:
    def __init__(self, root_url: str, api_key: str, api_secret: str, scheme: str = "v1") -> None:
        self.root_url = root_url.rstrip("/")
        self.api_key = api_key
        self.api_secret = api_secret
        self.scheme = scheme
        self.session = requests.Session()

    @classmethod
    def of(cls, sandbox: SandboxServer) -> SignedSession:
        """Signed calls with a running sandbox's own credentials."""
        return cls(sandbox.root_url, sandbox.api_key, sandbox.api_secret)

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: dict[str, Any] | None = None,
        *,
        raw_body: bytes | None = None,
        timestamp: int | None = None,
        timeout: float = 10,
    ) -> requests.Response:
        """``path`` is relative to the server root and starts with /v1."""
        data = raw_body if raw_body is not None else (
            b"" if body is None else json.dumps(body).encode()
        )
        path_and_query = path + ("?" + urlencode(params) if params else "")
        ts = str(int(time.time()) if timestamp is None else timestamp)
        headers = {
            "X-API-Key": self.api_key,
            "X-Timestamp": ts,
            "X-Signature": sign_request(self.api_secret, self.scheme, ts, method,
                                        path_and_query, data),
            "Content-Type": "application/json",
        }
        return self.session.request(method, self.root_url + path_and_query, data=data,
                                    headers=headers, timeout=timeout)

    def data(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        response = self.call(method, path, body, **kw)
        payload = json.loads(response.text, parse_float=Decimal)
        assert response.status_code == 200 and payload["success"], response.text
        return payload.get("data", payload)

    def control(self, method: str, path: str, body: Any = None) -> Any:
        response = self.session.request(method, f"{self.root_url}/sandbox{path}", json=body,
                                        timeout=10)
        payload = json.loads(response.text, parse_float=Decimal)
        assert response.status_code == 200, response.text
        return payload["data"]

    def watch(self, webhook_url: str, address: str | None = None, **extra: Any) -> str:
        """Monitor ``address`` (a fresh one by default) with callbacks to ``webhook_url``."""
        address = address or random_address()
        self.data("POST", "/v1/tron-monitor/addresses",
                  {"address": address, "webhook_url": webhook_url, **extra})
        return address

    def transfer(self, to: str, amount: str = "12.5", token: str = "TRX") -> str:
        """An on-chain transfer at the sandbox (its control API); returns the tx_hash."""
        result = self.control("POST", "/transfers", {"from": random_address(), "to": to,
                                                     "amount": amount, "token": token})
        return str(result["tx_hash"])

    def deliveries(self, count: int, status: str = "delivered",
                   timeout: float = 15) -> list[dict[str, Any]]:
        """Wait until at least ``count`` callback deliveries have ``status``; return them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.control("GET", f"/deliveries?status={status}")
            if len(found) >= count:
                return list(found)
            time.sleep(0.02)
        raise AssertionError(f"fewer than {count} deliveries {status}: "
                             f"{self.control('GET', '/deliveries')}")



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
    """A ``Signed`` helper with ``server``'s own credentials."""
    return Signed(server.root_url, server.api_key, server.api_secret, scheme)


@pytest.fixture
def api(sandbox: SandboxServer) -> SignedSession:
    """Signed calls to the test module's ``sandbox`` fixture."""
    return SignedSession.of(sandbox)
