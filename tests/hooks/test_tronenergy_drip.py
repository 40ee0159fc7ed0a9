"""TronEnergyHook's client against a service that drips its answers (issue 36).

The hook builds the sync client from the connection's extras; its ``timeout``
total must bound each call however the answer drips, as for a client built by
hand (tests/client/test_hostile_service.py).
"""

from __future__ import annotations

import json

import pytest

from airflow_provider_tronenergy.client import AmbiguousPurchaseError, NoResponseError
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.node.models import USDT_MAINNET
from support.clients import API_KEY, API_SECRET
from support.hostile_server import (
    DRIPS,
    Dripping,
    DripShape,
    HostileServer,
    answered,
    drip_seconds,
    raised,
)
from support.waiting import wait_until

DEADLINE = 0.5
DRIP = 0.05  # a byte every 50 ms: each read well within the 1 s read timeout
ACCOUNT = {"success": True, "code": 10000, "message": "",
           "data": {"user_id": 1, "username": "a@b.c", "balance": 10, "available_balance": 10,
                    "frozen_amount": 0, "pending_orders_count": 0,
                    "recharge_address": USDT_MAINNET}}


@pytest.mark.parametrize("shape", DRIPS, ids=[shape.id for shape in DRIPS])
def test_a_dripped_answer_ends_at_the_connections_deadline(
        monkeypatch: pytest.MonkeyPatch, shape: DripShape) -> None:
    """A read and a purchase are cut at the deadline; the purchase is an unknown outcome.

    A body framed by the connection's close was read to its end before (over 10 s). The
    server sees it: the client hangs up mid-drip, whatever the machine's load.
    """
    assert drip_seconds(shape, ACCOUNT, DRIP) >= 5 * DEADLINE
    dripping = Dripping(shape, ACCOUNT, DRIP)
    with HostileServer(dripping) as service:
        monkeypatch.setenv("AIRFLOW_CONN_DRIPPING", json.dumps({
            "conn_type": "tronenergy", "host": f"{service.root}/v1", "login": API_KEY,
            "password": API_SECRET, "extra": {"timeout": [1, 1, DEADLINE], "max_retries": 0}}))
        client = TronEnergyHook("dripping").get_conn()
        if shape.pooled:
            assert answered(client.get_account).username == "a@b.c"  # its connection stays open
        read = raised(client.get_account)
        if shape.pooled:
            answered(client.get_account)  # a new connection: the cut one was dropped
        buy = raised(lambda: client.buy_energy(USDT_MAINNET))
        wait_until(dripping.ended, 30, "the server to see the drips end")
    assert isinstance(read, NoResponseError), repr(read)
    assert isinstance(buy, AmbiguousPurchaseError), repr(buy)
    for error in (read, buy):
        assert "overall deadline of 0.5 s" in str(error)
    assert [drip.cut for drip in dripping.drips] == [True, True], dripping.drips
    if shape.pooled:  # the dripped answers came on kept-alive connections
        assert all(drip.kept_alive for drip in dripping.drips), dripping.drips
