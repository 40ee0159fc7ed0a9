"""Receipts and transactions as java-tron serves them, solidifying 19 blocks after their block;
and an unmodified tronpy following its transfers on a sandbox whose clock runs."""

from __future__ import annotations

import pytest

from support.chain import Chain, manual_chain
from support.sandbox import running_sandbox
from tronenergy_protocol.address import random_address


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def test_the_solidity_api_knows_a_transaction_19_blocks_after_its_block(chain: Chain):
    key, owner = chain.account(usdt="10")
    txid = chain.sent(chain.expiring(chain.usdt(owner, random_address(), 1)), key)
    chain.blocks(1)
    info = chain.info(txid)
    block = info["blockNumber"]
    assert chain.info(txid, solid=True) == {}
    chain.blocks(18)
    assert chain.head() == block + 18 and chain.info(txid, solid=True) == {}
    assert chain.tron.provider.make_request("walletsolidity/gettransactionbyid",
                                            {"value": txid}) == {}
    chain.blocks(1)
    assert chain.info(txid, solid=True) == info
    assert chain.tron.get_solid_transaction_info(txid)["blockNumber"] == block
    solid = chain.tron.provider.make_request("walletsolidity/gettransactionbyid",
                                             {"value": txid, "visible": True})
    assert solid == chain.tron.get_transaction(txid)


def test_a_receipt_in_java_trons_shape(chain: Chain):
    key, owner = chain.account(usdt="10")
    to = random_address()
    txid = chain.sent(chain.expiring(chain.usdt(owner, to, 3_000_000)), key)
    chain.blocks(1)
    info = chain.info(txid)
    block = chain.tron.get_block(info["blockNumber"])
    assert list(info) == ["id", "fee", "blockNumber", "blockTimeStamp", "contractResult",
                          "contract_address", "receipt", "log"]
    assert info["blockTimeStamp"] == block["block_header"]["raw_data"]["timestamp"]
    assert info["contractResult"] == ["0" * 63 + "1"]
    assert info["contract_address"] == "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
    (log,) = info["log"]
    parsed = chain.contract().events.Transfer.get_event_data(log)
    assert parsed["args"] == {"from": owner, "to": to, "value": 3_000_000}
    hexed = chain.tron.provider.make_request("wallet/gettransactioninfobyid", {"value": txid})
    assert hexed["contract_address"] == "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"
    assert hexed["log"][0]["address"] == "a614f803b6fd780986a42c78ec9c7f77e6ded13c"
    assert log["address"] != hexed["log"][0]["address"]  # visible: base58check of 20 bytes


def test_the_transaction_and_its_block(chain: Chain):
    key, owner = chain.account(trx="10")
    _, to = chain.account(trx="1")
    txn = chain.expiring(chain.trx(owner, to, 1_000_000)).build().sign(key)
    txn.broadcast()
    chain.blocks(1)
    shown = chain.tron.get_transaction(txn.txid)
    assert shown["ret"] == [{"contractRet": "SUCCESS"}]
    assert shown["txID"] == txn.txid and shown["signature"] == txn._signature
    assert shown["raw_data"]["contract"][0]["parameter"]["value"]["owner_address"] == owner
    block = chain.tron.get_block(chain.info(txn.txid)["blockNumber"])
    assert [t["txID"] for t in block["transactions"]] == [txn.txid]
    assert block["block_header"]["raw_data"]["txTrieRoot"] != "0" * 64


def test_unknown_transactions(chain: Chain):
    unknown = "ab" * 32
    assert chain.info(unknown) == {} and chain.info(unknown, solid=True) == {}
    assert chain.tron.provider.make_request("wallet/gettransactionbyid",
                                            {"value": unknown}) == {}


def test_unmodified_tronpy_sends_and_follows_usdt_and_trx():
    """Online build with tronpy's own expiration, wait() and result(), on a running clock."""
    with running_sandbox(time_scale=0.01) as server:
        chain = Chain(server)
        key, owner = chain.account(trx="50", usdt="20")
        to = random_address()
        sent = chain.usdt(owner, to, 4_000_000).build().sign(key).broadcast()
        assert sent.result(timeout=10, interval=0.05) is True
        receipt = sent.wait(timeout=10, interval=0.05, solid=True)
        assert receipt["receipt"]["energy_usage_total"] == 130_285
        offline = chain.usdt(owner, to, 1_000_000).build(
            offline=True, ref_block_id=chain.tron.get_latest_solid_block_id()).sign(key)
        assert chain.tron.broadcast(offline)["result"] is True
        trx = chain.trx(owner, to, 5_000_000).build().sign(key).broadcast()
        assert "blockNumber" in trx.wait(timeout=10, interval=0.05)
        chain.tron.get_transaction_info(offline.txid)  # known by now
        assert chain.contract().functions.balanceOf(to) == 5_000_000
        assert chain.tron.get_account_balance(to) == 5
