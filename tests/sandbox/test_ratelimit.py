"""The sandbox's node rate limit, as TronGrid keeps one: per key, over the clock (issue 45)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from support.sandbox import running_sandbox
from tronenergy_sandbox import SandboxServer


@pytest.fixture(scope="module")
def node() -> Iterator[SandboxServer]:
    with running_sandbox() as server:
        yield server


def control(node: SandboxServer, method: str, body: object = None) -> requests.Response:
    return requests.request(method, f"{node.root_url}/sandbox/rate-limit", json=body,
                            timeout=10)


def head(node: SandboxServer, key: str | None) -> requests.Response:
    headers = {} if key is None else {"TRON-PRO-API-KEY": key}
    return requests.post(f"{node.root_url}/wallet/getnowblock", json={}, headers=headers,
                         timeout=10)


def test_over_the_rate_a_key_is_answered_as_trongrid_answers(node: SandboxServer) -> None:
    """A bucket of 2 refilled at 1 a second (far slower than these requests): the third
    request of a key is refused with TronGrid's body; another key has its own bucket."""
    assert control(node, "POST", {"requests_per_second": "0.001", "burst": 2,
                                  "retry_after": 3}).ok
    answers = [head(node, "key-a") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2].headers["Retry-After"] == "3"
    assert answers[2].json() == {
        "Success": False, "StatusCode": 429,
        "Error": "The key exceeds the frequency limit(0.001), and the query server is "
                 "suspended for 3s"}
    assert head(node, "key-b").status_code == 200 and head(node, None).status_code == 200
    counts = control(node, "GET").json()["data"]
    assert (counts["requests"], counts["limited"]) == (5, 1)
    assert sum(s["requests"] for s in counts["per_second"]) == 5
    assert control(node, "DELETE").ok
    assert head(node, "key-a").status_code == 200  # lifted
    assert control(node, "GET").json()["data"]["limit"] is None


def test_no_retry_after_and_503_as_trongrid_sends_at_times(node: SandboxServer) -> None:
    assert control(node, "POST", {"requests_per_second": "0.001", "burst": 1,
                                  "retry_after": None, "status": 503}).ok
    assert head(node, "key-c").status_code == 200
    refused = head(node, "key-c")
    assert refused.status_code == 503 and "Retry-After" not in refused.headers
    assert control(node, "DELETE").ok


def test_a_limit_on_one_key_leaves_the_others_alone(node: SandboxServer) -> None:
    assert control(node, "POST", {"requests_per_second": "0.001", "burst": 1,
                                  "api_key": "key-d"}).ok
    assert [head(node, "key-d").status_code for _ in range(2)] == [200, 429]
    assert [head(node, None).status_code for _ in range(3)] == [200, 200, 200]
    counts = control(node, "GET").json()["data"]
    assert (counts["requests"], counts["limited"]) == (2, 1)  # key-d's only
    assert control(node, "DELETE").ok


@pytest.mark.parametrize("body", [{}, {"requests_per_second": 0},
                                  {"requests_per_second": 5, "burst": "0.5"},
                                  {"requests_per_second": 5, "status": 500},
                                  {"requests_per_second": 5, "retry_after": -1}])
def test_a_bad_limit_is_refused(node: SandboxServer, body: dict[str, object]) -> None:
    assert control(node, "POST", body).status_code == 400
