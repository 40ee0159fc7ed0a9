"""A block's receipts in one read (``gettransactioninfobyblocknum``), as java-tron answers:
every packed transaction's ``TransactionInfo`` in block order, ``[]`` for a block without
any or not produced yet, ``{}`` for a number below 1; the solidity API 19 blocks later."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from support.chain import Chain, manual_chain
from tronenergy_protocol.address import random_address


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def _receipts(chain: Chain, body: dict[str, Any], *, solid: bool = False) -> Any:
    path = "walletsolidity" if solid else "wallet"
    response = requests.post(f"{chain.sandbox.root_url}/{path}/gettransactioninfobyblocknum",
                             json=body, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def _batch(chain: Chain) -> tuple[int, list[str]]:
    """Three USDT transfers (one out of energy) and a TRX transfer, packed in one block."""
    key, owner = chain.account(trx="100", usdt="10")
    other_key, other = chain.account(trx="100", usdt="10")
    _, holder = chain.account(usdt="1")
    txids = [chain.sent(chain.expiring(chain.usdt(owner, random_address(), 1_000_000)), key),
             chain.sent(chain.expiring(chain.usdt(other, holder, 2_000_000)), other_key),
             chain.sent(chain.expiring(chain.usdt(owner, holder, 1, fee_limit=1_000_050)), key),
             chain.sent(chain.expiring(chain.trx(other, holder, 3_000_000)), other_key)]
    chain.blocks(1)
    return chain.info(txids[0])["blockNumber"], txids


def test_every_receipt_of_a_block_in_its_order(chain: Chain):
    number, txids = _batch(chain)
    receipts = _receipts(chain, {"num": number, "visible": True})
    assert receipts == [chain.info(txid) for txid in txids]  # gettransactioninfobyid's shape
    block = chain.tron.get_block(number)
    assert [r["id"] for r in receipts] == [t["txID"] for t in block["transactions"]]
    assert {r["blockTimeStamp"] for r in receipts} == \
        {block["block_header"]["raw_data"]["timestamp"]}
    assert receipts[2]["result"] == "FAILED"  # a failed transfer is in its block too
    assert receipts[2]["receipt"]["result"] == "OUT_OF_ENERGY"
    assert "contract_address" not in receipts[3]  # the TRX transfer
    hexed = _receipts(chain, {"num": number})  # without visible: addresses in hex
    assert hexed[0]["contract_address"] == "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"
    assert hexed[0]["log"][0]["address"] == "a614f803b6fd780986a42c78ec9c7f77e6ded13c"
    assert receipts[0]["log"][0]["address"] != hexed[0]["log"][0]["address"]


def test_a_block_without_transactions_and_one_beyond_the_head(chain: Chain):
    key, owner = chain.account(usdt="10")
    chain.blocks(1)
    empty = chain.head()
    assert chain.tron.get_block(empty).get("transactions") is None
    assert _receipts(chain, {"num": empty, "visible": True}) == []
    txid = chain.sent(chain.expiring(chain.usdt(owner, random_address(), 1)), key)
    head = chain.head()
    assert _receipts(chain, {"num": head + 1}) == []  # waiting for its block: not yet
    assert _receipts(chain, {"num": head + 1_000}) == []
    chain.blocks(1)
    assert [r["id"] for r in _receipts(chain, {"num": head + 1})] == [txid]


def test_a_number_below_one_answers_an_empty_object(chain: Chain):
    for body in ({"num": 0}, {"num": -5}, {}):
        assert _receipts(chain, body) == {}, body
        assert _receipts(chain, body, solid=True) == {}, body


def test_the_solidity_api_answers_a_blocks_receipts_19_blocks_later(chain: Chain):
    number, txids = _batch(chain)
    full = _receipts(chain, {"num": number, "visible": True})
    assert len(full) == 4
    assert _receipts(chain, {"num": number, "visible": True}, solid=True) == []
    chain.blocks(18)
    assert chain.head() == number + 18
    assert _receipts(chain, {"num": number, "visible": True}, solid=True) == []
    chain.blocks(1)
    assert _receipts(chain, {"num": number, "visible": True}, solid=True) == full
    assert [r["id"] for r in _receipts(chain, {"num": number}, solid=True)] == txids


def test_node_faults_reach_the_receipts_of_a_block(chain: Chain):
    number, _ = _batch(chain)
    url = f"{chain.sandbox.root_url}/wallet/gettransactioninfobyblocknum"
    chain.control.fault(kind="error", path="/wallet/gettransactioninfobyblocknum", status=503,
                        count=1)
    assert requests.post(url, json={"num": number}, timeout=10).status_code == 503
    assert len(requests.post(url, json={"num": number}, timeout=10).json()) == 4
    chain.control.fault(kind="drop", path="/walletsolidity/*", count=1)
    with pytest.raises(requests.ConnectionError):
        requests.post(f"{chain.sandbox.root_url}/walletsolidity/gettransactioninfobyblocknum",
                      json={"num": number}, timeout=10)
    assert _receipts(chain, {"num": number}, solid=True) == []
