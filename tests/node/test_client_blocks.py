"""Whole blocks for a deposit scan, over real HTTP from the sandbox's chain: a block's token
transfers in one read (logs of the token's own contract only, failed calls none, several
logs of one transaction several transfers), a range of blocks and its TRX transfers in one
read (java-tron's ``getblockbylimitnext``: end excluded, at most 100, none past the head),
and a node answer that skips or reorders a block refused."""

from __future__ import annotations

import pytest
import requests

from airflow_provider_tronenergy.node.blocks import block_range
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from support.chain import manual_chain
from support.control import Control
from tronenergy_protocol.address import random_address

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


@pytest.fixture
def chain():
    with manual_chain() as chain:
        yield chain


@pytest.fixture
def node(chain):
    with TronNodeClient(chain.sandbox.root_url) as client:
        yield client


def place(chain, *transfers):
    return Control(chain.sandbox).post("/chain/blocks/transfers",
                                       {"transfers": list(transfers)})["transactions"]


def test_a_blocks_token_transfers_in_one_read(chain, node):
    to, other, fake = random_address(), random_address(), random_address()
    head = chain.head()
    block = head - 30
    placed = place(chain, {"block": block, "to": to, "units": 1_500_000},
                   {"block": block, "to": other, "units": [2, 3]},
                   {"block": block, "to": to, "units": 9, "contract": fake},
                   {"block": block, "to": to, "units": 7, "failed": True},
                   {"block": block, "to": to, "units": 5_000_000, "token": "TRX"})
    read = node.get_block_token_transfers(block, solidified=True)
    assert read.txids == tuple(p["txid"] for p in placed)
    assert [(t.tx_hash, t.index, t.to_address, t.units, t.contract) for t in read.transfers] == [
        (placed[0]["txid"], 0, to, 1_500_000, USDT),
        (placed[1]["txid"], 0, other, 2, USDT), (placed[1]["txid"], 1, other, 3, USDT)]
    assert {t.block_number for t in read.transfers} == {block}
    look_alike = node.get_block_token_transfers(block, contract=fake)
    assert [(t.to_address, t.units) for t in look_alike.transfers] == [(to, 9)]
    assert node.get_block_token_transfers(block - 1).transfers == ()


def test_a_range_of_blocks_and_its_trx_transfers_in_one_read(chain, node):
    to = random_address()
    head = chain.head()
    placed = place(chain, {"block": head - 50, "to": to, "units": 5_000_000, "token": "TRX"},
                   {"block": head - 49, "to": to, "units": 1})
    blocks = node.get_blocks(head - 50, head - 48)
    assert [b.block.number for b in blocks] == [head - 50, head - 49]
    assert [(t.tx_hash, t.to_address, t.units, t.contract) for t in blocks[0].trx] == [
        (placed[0]["txid"], to, 5_000_000, None)]
    assert blocks[1].trx == () and blocks[1].txids == (placed[1]["txid"],)
    assert len(node.get_blocks(head - 120, head - 20)) == 100
    solid = node.get_solid_block().number
    assert [b.block.number for b in node.get_blocks(solid - 1, solid + 5, solidified=True)] \
        == [solid - 1, solid]
    with pytest.raises(ValueError, match="at most 100"):
        node.get_blocks(head - 200, head - 99)


def test_the_sandbox_answers_a_range_as_java_tron_does(chain):
    url = chain.sandbox.root_url + "/wallet/getblockbylimitnext"
    head = chain.head()
    for start, end in ((head, head), (head, head - 1), (head - 101, head), (0, 0)):
        assert requests.post(url, json={"startNum": start, "endNum": end}, timeout=5).json() == {}
    assert requests.post(url, json={"startNum": head + 1, "endNum": head + 3},
                         timeout=5).json() == {"block": []}


def test_a_range_answer_that_skips_or_reorders_a_block_is_refused(chain, node):
    head = chain.head()
    answer = requests.post(chain.sandbox.root_url + "/wallet/getblockbylimitnext",
                           json={"startNum": head - 5, "endNum": head - 2, "visible": True},
                           timeout=5).json()
    assert len(block_range(head - 5, head - 2, answer)) == 3
    skipped = {"block": [answer["block"][0], answer["block"][2]]}
    with pytest.raises(ValueError, match="belongs"):
        block_range(head - 5, head - 2, skipped)
    with pytest.raises(ValueError, match="belongs"):
        block_range(head - 4, head - 2, answer)
    forged = {"block": [answer["block"][0], {**answer["block"][1], "block_header": {
        **answer["block"][1]["block_header"], "raw_data": {
            **answer["block"][1]["block_header"]["raw_data"], "parentHash": "ab" * 32}}}]}
    with pytest.raises(ValueError, match="parent"):
        block_range(head - 5, head - 3, forged)
    with pytest.raises(NodeError, match="getblockbylimitnext"):
        TronNodeClient("http://127.0.0.1:9", max_retries=0).get_blocks(1, 2)
