"""The node client against a node that redirects, floods, inflates or drips (issue 22, 1 and 3).

tronpy's own provider followed a 302/307/308 to another host with the
``TRON-PRO-API-KEY`` header, and read that host's answer as a valid account.
"""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import USDT_MAINNET
from support.hostile_server import Flood, HostileServer, answer, drip, inflating, redirect

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


@pytest.mark.parametrize("head_too", [False, True], ids=["body", "head"])
def test_a_dripped_answer_ends_at_the_overall_deadline(head_too: bool) -> None:
    with HostileServer(drip(200, ACCOUNT, 0.05, head_too=head_too)) as node, \
            client(node, timeout=(1.0, 1.0, 1.5)) as reader, \
            pytest.raises(NodeError, match=r"overall deadline of 1.5 s"):
        reader.get_account(USDT_MAINNET)
