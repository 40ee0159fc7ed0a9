"""The node client against a node that redirects, floods, inflates or drips (issue 22, 1 and 3).

tronpy's own provider followed a 302/307/308 to another host with the
``TRON-PRO-API-KEY`` header, and read that host's answer as a valid account.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import USDT_MAINNET
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
    raised_within,
    redirect,
    tls_context,
)
from support.waiting import wait_until

API_KEY = "node-key-7c0ffee0-1111-4bd1-9a3e-abcdefabcdef"
ACCOUNT = {"address": "41" + "00" * 20, "balance": 0, "create_time": 1}


def client(server: HostileServer, **options: object) -> TronNodeClient:
    options.setdefault("max_retries", 0)
    return TronNodeClient(server.root, api_key=API_KEY, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_an_error_and_the_key_stays_home(status: int) -> None:
    with HostileServer(answer(200, ACCOUNT)) as elsewhere:
        location = f"http://localhost:{elsewhere.port}/wallet/getaccount"
        with HostileServer(redirect(status, location)) as node, client(node) as reader, \
                pytest.raises(NodeError) as info:
            reader.get_account(USDT_MAINNET)
    assert elsewhere.received == []  # tronpy's session would have sent the key there
    assert node.received[0].headers["tron-pro-api-key"] == API_KEY  # the configured host
    message = str(info.value)
    assert f"HTTP {status}" in message and "redirect to localhost" in message
    assert API_KEY not in message and API_KEY not in repr(info.value)
    assert info.value.status == status


def test_a_flood_is_cut_at_the_cap() -> None:
    flood = Flood(200_000_000)
    with HostileServer(flood) as node, client(node, max_answer_bytes=65_536) as reader, \
            pytest.raises(NodeError, match=r"larger than 65,536 bytes"):
        reader.get_account(USDT_MAINNET)
    assert flood.sent < flood.total


def test_a_gzip_bomb_is_cut_at_the_cap() -> None:
    with HostileServer(inflating(64_000_000)) as node, client(node) as reader, \
            pytest.raises(NodeError, match=r"larger than 16,777,216 bytes"):
        reader.get_account(USDT_MAINNET)


DEADLINE = 0.5
DRIP = 0.05  # a byte every 50 ms: each read well within the 1 s read timeout
SIGNED = {"txID": "ab" * 32, "raw_data_hex": "", "signature": ["00" * 65]}  # never checked here


@pytest.mark.parametrize("shape", DRIPS, ids=[shape.id for shape in DRIPS])
def test_a_dripped_answer_ends_at_the_overall_deadline(shape: DripShape) -> None:
    """Issue 36: a read and a broadcast are cut at the deadline however the answer drips.

    With the default resends (3): none starts after the deadline. A body framed by
    the connection's close was read to its end before (over 10 s). The server sees it:
    the client hangs up mid-drip, whatever the machine's load.
    """
    assert drip_seconds(shape, ACCOUNT, DRIP) >= 5 * DEADLINE
    dripping = Dripping(shape, ACCOUNT, DRIP)
    with HostileServer(dripping) as node, \
            client(node, timeout=(1.0, 1.0, DEADLINE), max_retries=3) as reader:
        if shape.pooled:  # its connection stays open
            assert answered(lambda: reader.get_account(USDT_MAINNET)) is not None
        read = raised(lambda: reader.get_account(USDT_MAINNET))
        if shape.pooled:  # a new connection: the cut one was dropped
            answered(lambda: reader.get_account(USDT_MAINNET))
        sent = raised(lambda: reader.broadcast(SIGNED))
        wait_until(dripping.ended, 30, "the server to see the drips end")
    for error in (read, sent):
        assert isinstance(error, NodeError), repr(error)
        assert "overall deadline of 0.5 s" in str(error)
    assert [drip.cut for drip in dripping.drips] == [True, True], dripping.drips
    if shape.pooled:  # the dripped answers came on kept-alive connections
        assert all(drip.kept_alive for drip in dripping.drips), dripping.drips


TLS_DRIPS = [shape for shape in DRIPS if shape.id in ("status-length", "body-close-gzip")]


@pytest.mark.parametrize("shape", TLS_DRIPS, ids=[shape.id for shape in TLS_DRIPS])
def test_a_dripped_answer_over_tls_ends_at_the_overall_deadline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: DripShape) -> None:
    context, certificate = tls_context(tmp_path)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate))
    dripping = Dripping(shape, ACCOUNT, DRIP)
    with HostileServer(dripping, tls=context) as node, \
            client(node, timeout=(1.0, 1.0, DEADLINE), max_retries=3) as reader:
        read = raised(lambda: reader.get_account(USDT_MAINNET))
        wait_until(dripping.ended, 30, "the server to see the drip end")
    assert isinstance(read, NodeError) and "overall deadline of 0.5 s" in str(read), repr(read)
    assert [drip.cut for drip in dripping.drips] == [True], dripping.drips


def test_a_resend_never_waits_past_the_deadline() -> None:
    """A node that answers 503 with a long Retry-After: urllib3 slept all of it (30 s)
    before resending; the wait is cut at the call's deadline and nothing is resent."""
    busy = answer(503, {"Error": "busy"}, {"Retry-After": "30"})
    with HostileServer(busy) as node, \
            client(node, timeout=(1.0, 1.0, DEADLINE), max_retries=3) as reader:
        error, took = raised_within(lambda: reader.get_account(USDT_MAINNET))
    assert isinstance(error, NodeError), repr(error)
    # not the 30 s Retry-After: a bound far from both, which a loaded machine cannot cross
    assert took < 10, f"{error} after {took:.2f} s"
    assert "deadline" in str(error) and len(node.received) == 1, repr(error)


class _BrokenPace:
    """A pace whose store cannot be reached (its error's text names the store's URL)."""

    def take(self, within: float) -> float:
        raise OSError("could not connect to postgresql://pace:secret@db/journal")

    def slow(self, seconds: float) -> None:
        raise AssertionError("nothing was answered")


def test_a_pace_that_cannot_say_sends_nothing() -> None:
    """Issue 45: the connection's pace unreadable: the call fails as a node error (retried
    as one), the node is never asked, and the store's text (its URL) is not repeated."""
    with HostileServer(answer(200, ACCOUNT)) as node, \
            client(node, pace=_BrokenPace()) as reader, pytest.raises(NodeError) as info:
        reader.get_account(USDT_MAINNET)
    assert node.received == []
    assert "not sent" in str(info.value) and "OSError" in str(info.value)
    assert "secret" not in str(info.value) and API_KEY not in str(info.value)
