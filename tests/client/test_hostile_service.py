"""Both clients against a service that redirects, floods, inflates, drips or says two things.

Issue 22, items 1, 3 and 4: a redirect is named and never followed (the second
host receives nothing, so never a key); an answer is read to a cap, decompressed
by the client; every attempt ends within its overall deadline; and a money-moving
call is settled as refused only on an answer that proves it, each row of the table
in docs/money-safety.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.client import (
    AmbiguousPurchaseError,
    AuthenticationError,
    InsufficientBalanceError,
    InvalidRequestError,
    NoResponseError,
    NotFoundError,
    RateLimitedError,
    RetryPolicy,
    TronEnergyAsyncClient,
    TronEnergyClient,
    TronEnergyError,
    UnexpectedResponseError,
)
from airflow_provider_tronenergy.node.models import USDT_MAINNET
from support.clients import API_KEY, API_SECRET, BlockingFacade
from support.hostile_server import (
    DRIPS,
    Dripping,
    DripShape,
    Flood,
    HostileServer,
    answer,
    answered,
    drip_seconds,
    inflating,
    raised,
    redirect,
    tls_context,
    truncated,
)
from support.waiting import wait_until

TARGET = USDT_MAINNET  # any valid address: the hostile server buys nothing
ONCE = RetryPolicy(max_attempts=1)
ACCOUNT = {"success": True, "code": 10000, "message": "",
           "data": {"user_id": 1, "username": "a@b.c", "balance": 10, "available_balance": 10,
                    "frozen_amount": 0, "pending_orders_count": 0,
                    "recharge_address": TARGET}}


def envelope(code: int, success: bool = False) -> dict[str, Any]:
    return {"success": success, "code": code, "message": "refused", "data": None}


def bought(**data: Any) -> dict[str, Any]:
    return {"success": True, "code": 10000, "message": "",
            "data": {"order_id": "ord-1", "tx_hash": "", "cost": "2.925", **data}}


@pytest.fixture(params=["sync", "async"])
def connect(request: pytest.FixtureRequest) -> Iterator[Any]:
    """``connect(server, **options)``: the sync client, or the async one behind a facade."""
    made: list[Any] = []

    def make(server: HostileServer, **options: Any) -> Any:
        options.setdefault("retry", ONCE)
        url = f"{server.root}/v1"
        if request.param == "sync":
            client: Any = TronEnergyClient(url, API_KEY, API_SECRET, **options)
        else:
            client = BlockingFacade(TronEnergyAsyncClient(url, API_KEY, API_SECRET, **options))
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def no_secret(error: BaseException) -> None:
    for text in (str(error), repr(error)):
        assert API_KEY not in text and API_SECRET not in text


# -- 1. redirects ------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_named_never_followed(connect: Any, status: int) -> None:
    with HostileServer(answer(200, ACCOUNT), host="127.0.0.1") as elsewhere:
        location = f"http://localhost:{elsewhere.port}/v1/energy/account"
        with HostileServer(redirect(status, location)) as service:
            client = connect(service)
            with pytest.raises(UnexpectedResponseError) as read:
                client.get_account()
            with pytest.raises(AmbiguousPurchaseError) as buy:
                client.buy_energy(TARGET)
    assert elsewhere.received == []  # so no key, no signature reached it
    for error in (read.value, buy.value):
        assert f"HTTP {status}" in str(error) and "redirect to localhost" in str(error)
        no_secret(error)


# -- 3. unbounded answers ----------------------------------------------------------------


def test_a_flood_is_cut_at_the_cap(connect: Any) -> None:
    flood = Flood(200_000_000)
    with HostileServer(flood) as service:
        client = connect(service, max_answer_bytes=65_536)
        with pytest.raises(UnexpectedResponseError, match=r"larger than 65,536 bytes"):
            client.get_account()
        with pytest.raises(AmbiguousPurchaseError, match=r"larger than 65,536 bytes"):
            client.buy_energy(TARGET)
    assert flood.sent < flood.total  # the client stopped reading: the rest never came


def test_a_gzip_bomb_is_cut_at_the_cap(connect: Any) -> None:
    with HostileServer(inflating(64_000_000)) as service:
        client = connect(service)  # the default cap: 1 MiB
        with pytest.raises(UnexpectedResponseError, match=r"larger than 1,048,576 bytes"):
            client.get_account()
        with pytest.raises(AmbiguousPurchaseError, match=r"larger than 1,048,576 bytes"):
            client.buy_energy(TARGET)


def test_a_gzipped_answer_within_the_cap_is_read(connect: Any) -> None:
    import gzip
    import json

    body = gzip.compress(json.dumps(ACCOUNT).encode())
    with HostileServer(answer(200, body, {"Content-Encoding": "gzip"})) as service:
        assert connect(service).get_account().username == "a@b.c"


def test_an_encoding_never_asked_for_is_refused(connect: Any) -> None:
    with HostileServer(answer(200, b"\x00\x01", {"Content-Encoding": "br"})) as service, \
            pytest.raises(UnexpectedResponseError, match="did not ask for"):
        connect(service).get_account()


DEADLINE = 0.5
DRIP = 0.05  # a byte every 50 ms: each read well within the 1 s read timeout


@pytest.mark.parametrize("shape", DRIPS, ids=[shape.id for shape in DRIPS])
def test_a_dripped_answer_ends_at_the_overall_deadline(connect: Any, shape: DripShape) -> None:
    """Issue 36: a drip lasting over 5x the deadline is cut by the client at the deadline.

    Wherever it drips (status line, headers, body), however the body is framed,
    gzipped or not, on a fresh or a kept-alive connection. The sync client read a
    body framed by the connection's close to its end (11.8 s for 237 bytes).
    The server sees it: the client hangs up mid-drip, whatever the machine's load.
    """
    assert drip_seconds(shape, ACCOUNT, DRIP) >= 5 * DEADLINE
    dripping = Dripping(shape, ACCOUNT, DRIP)
    with HostileServer(dripping) as service:
        client = connect(service, timeout=(1.0, 1.0, DEADLINE))
        if shape.pooled:
            assert answered(client.get_account).username == "a@b.c"  # its connection stays open
        read = raised(client.get_account)
        if shape.pooled:
            answered(client.get_account)  # a new connection: the cut one was dropped
        buy = raised(lambda: client.buy_energy(TARGET))
        wait_until(dripping.ended, 30, "the server to see the drips end")
    assert isinstance(read, NoResponseError), repr(read)
    assert isinstance(buy, AmbiguousPurchaseError), repr(buy)  # an unknown outcome
    for error in (read, buy):
        assert "overall deadline of 0.5 s" in str(error)
    assert [drip.cut for drip in dripping.drips] == [True, True], dripping.drips
    if shape.pooled:  # the dripped answers came on kept-alive connections
        assert all(drip.kept_alive for drip in dripping.drips), dripping.drips


TLS_DRIPS = [shape for shape in DRIPS if shape.id in (
    "status-length", "headers-length-pooled", "body-close-gzip", "body-chunked-gzip-pooled")]


@pytest.mark.parametrize("shape", TLS_DRIPS, ids=[shape.id for shape in TLS_DRIPS])
def test_a_dripped_answer_over_tls_ends_at_the_overall_deadline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: DripShape) -> None:
    """The same over https: the sync client's reads go through the TLS socket."""
    context, certificate = tls_context(tmp_path)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate))
    dripping = Dripping(shape, ACCOUNT, DRIP)
    with HostileServer(dripping, tls=context) as service, \
            TronEnergyClient(f"{service.root}/v1", API_KEY, API_SECRET, retry=ONCE,
                             timeout=(1.0, 1.0, DEADLINE)) as client:
        if shape.pooled:
            assert answered(client.get_account).username == "a@b.c"
        read = raised(client.get_account)
        wait_until(dripping.ended, 30, "the server to see the drip end")
    assert isinstance(read, NoResponseError), repr(read)
    assert "overall deadline of 0.5 s" in str(read)
    assert [drip.cut for drip in dripping.drips] == [True], dripping.drips
    if shape.pooled:
        assert dripping.drips[0].kept_alive


def test_an_answer_cut_short_is_no_answer(connect: Any) -> None:
    """The connection closes mid-body: maybe processed, never a raw transport exception."""
    with HostileServer(truncated(b'{"success": true, "co', 1000)) as service:
        client = connect(service)
        with pytest.raises(NoResponseError):
            client.get_account()
        with pytest.raises(AmbiguousPurchaseError) as info:
            client.buy_energy(TARGET)
    assert isinstance(info.value.cause, NoResponseError)


# -- 4. answers that say both things: the table of docs/money-safety.md --------------------

REFUSED = [
    (400, envelope(40010), InvalidRequestError),
    (400, envelope(40011), InvalidRequestError),
    (401, envelope(40002), AuthenticationError),
    (402, envelope(40020), InsufficientBalanceError),
    (403, b"<html>forbidden</html>", AuthenticationError),
    (404, b"", NotFoundError),
    (409, envelope(40090), TronEnergyError),
    (422, envelope(12345), InvalidRequestError),
    (429, envelope(40290), RateLimitedError),
    (200, envelope(40020), InsufficientBalanceError),  # HTTP 200 with success: false
]
UNKNOWN = [
    (499, envelope(40010)),  # a proxy's "client closed": it may have forwarded the request
    (408, envelope(40010)),
    (418, envelope(40010)),  # a 4xx that proves nothing
    (460, b""),
    (200, envelope(40020, success=True)),  # success and a refusal code
    (200, envelope(40010, success=True)),
    (400, {"success": True, "code": 10000, "data": None}),  # an error status, a success body
    (409, envelope(50000)),  # a refusal status, a failure code
    (200, envelope(50300)),  # success: false with a failure code
    (200, envelope(77777)),  # success: false with a code nobody knows
    (500, envelope(50000)),
    (502, b"<html>bad gateway</html>"),
    (503, envelope(50300)),
    (200, b"<html>ok</html>"),
    (200, {"code": 10000, "data": {}}),  # no success flag
    (302, b""),
    (200, bought(cost="-5")),  # item 2: an invalid answer after sending
    (200, bought(cost=0)),
    (200, bought(energy_amount=-65000)),
    (200, bought(order_id="")),
    (200, bought(order_id="x" * 10_000)),
    (200, bought(order_id="ord 1; drop")),
]


@pytest.mark.parametrize(("status", "body", "expected"), REFUSED,
                         ids=[f"{s}-{i}" for i, (s, _, _) in enumerate(REFUSED)])
def test_answers_that_prove_a_refusal(connect: Any, status: int, body: Any,
                                      expected: type[Exception]) -> None:
    with HostileServer(answer(status, body)) as service, pytest.raises(TronEnergyError) as info:
        connect(service).buy_energy(TARGET)
    assert isinstance(info.value, expected)
    assert not isinstance(info.value, AmbiguousPurchaseError)


@pytest.mark.parametrize(("status", "body"), UNKNOWN,
                         ids=[f"{s}-{i}" for i, (s, _) in enumerate(UNKNOWN)])
def test_answers_that_prove_nothing_are_unknown_outcomes(connect: Any, status: int,
                                                         body: Any) -> None:
    with HostileServer(answer(status, body)) as service, \
            pytest.raises(AmbiguousPurchaseError) as info:
        connect(service).buy_energy(TARGET)
    assert len(service.received) == 1  # never resent
    no_secret(info.value)
