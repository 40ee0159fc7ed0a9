"""Signed requests to the sandbox with nothing but requests and the protocol module.

Deliberately independent of the provider's client, so sandbox tests do not
depend on the code the sandbox is used to test.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import pytest
import requests

from airflow_provider_tronenergy.protocol.address import random_address
from airflow_provider_tronenergy.protocol.signing import sign_request
from airflow_provider_tronenergy.sandbox import SandboxServer


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


@pytest.fixture
def api(sandbox: SandboxServer) -> SignedSession:
    """Signed calls to the test module's ``sandbox`` fixture."""
    return SignedSession.of(sandbox)
