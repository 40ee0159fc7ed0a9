"""Blocks: one every 3 s of sandbox time, java-tron's ids and shapes, solidification, pausing.

A manual clock moves the chain exactly as far as a test says; tronpy reads it.
"""

from __future__ import annotations

import time

import pytest
import requests
from tronpy.exceptions import BlockNotFound

from support.chain import Chain, manual_chain
from support.sandbox import SANDBOX_GENESIS, running_sandbox


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def test_a_block_every_three_seconds_of_the_clock(chain: Chain):
    head = chain.head()
    chain.clock.advance(2.9)
    assert chain.head() == head
    chain.clock.advance(0.1)
    assert chain.head() == head + 1
    chain.blocks(10)
    assert chain.tron.get_latest_block_number() == head + 11
    blocks = [chain.tron.get_block(n) for n in (head + 10, head + 11)]
    times = [b["block_header"]["raw_data"]["timestamp"] for b in blocks]
    assert times[1] - times[0] == 3_000


def test_block_ids_carry_the_number_and_a_hash_that_differs_per_block(chain: Chain):
    chain.blocks(1)
    head = chain.tron.get_latest_block()
    number = head["block_header"]["raw_data"]["number"]
    parent = chain.tron.get_block(number - 1)
    for block, n in ((head, number), (parent, number - 1)):
        assert len(block["blockID"]) == 64 and int(block["blockID"][:16], 16) == n
    assert head["blockID"][16:] != parent["blockID"][16:]
    assert head["block_header"]["raw_data"]["parentHash"] == parent["blockID"]
    assert chain.tron.get_block(head["blockID"])["block_header"]["raw_data"]["number"] == number
    assert chain.tron.get_block(number) == chain.tron.get_block(head["blockID"])


def test_block_0_is_the_same_fixed_genesis_in_every_sandbox(chain: Chain):
    """What the provider's chain check reads (``getblockbynum {"num": 0}``), by number or id,
    through the full node's and the solidity API: one id, named in docs/sandbox.md."""
    genesis = chain.tron.get_block(0)
    assert genesis["blockID"] == SANDBOX_GENESIS
    assert chain.tron.get_block(SANDBOX_GENESIS)["blockID"] == SANDBOX_GENESIS
    assert genesis["block_header"]["raw_data"]["parentHash"] == "0" * 64
    assert "number" not in genesis["block_header"]["raw_data"]  # 0, left out as java-tron does
    assert chain.tron.get_block(1)["block_header"]["raw_data"]["parentHash"] == SANDBOX_GENESIS
    solid = chain.tron.provider.make_request("walletsolidity/getblockbynum", {"num": 0})
    assert solid["blockID"] == SANDBOX_GENESIS
    with running_sandbox() as other:  # another sandbox, another seed: the same block 0
        answer = requests.post(f"{other.root_url}/wallet/getblockbynum", json={"num": 0},
                               timeout=10).json()
    assert answer["blockID"] == SANDBOX_GENESIS


def test_unknown_blocks_are_not_found(chain: Chain):
    head = chain.tron.get_latest_block()
    with pytest.raises(BlockNotFound):
        chain.tron.get_block(chain.head() + 1)
    forged = head["blockID"][:16] + "00" * 24
    with pytest.raises(BlockNotFound):
        chain.tron.get_block(forged)


def test_node_info_and_the_solidity_api_trail_the_head_by_19_blocks(chain: Chain):
    chain.blocks(2)
    head = chain.tron.get_latest_block_number()
    assert chain.tron.get_latest_solid_block_number() == head - 19
    solid = chain.tron.get_latest_solid_block()
    assert solid["block_header"]["raw_data"]["number"] == head - 19
    assert chain.tron.get_latest_solid_block_id() == solid["blockID"]
    assert chain.tron.get_latest_block_id() == chain.tron.get_block(head)["blockID"]


def test_paused_production_keeps_the_head_then_resumes_at_the_next_slot(chain: Chain):
    head = chain.head()
    chain.control.post("/chain/pause")
    chain.blocks(5)
    assert chain.head() == head
    assert chain.control.call("GET", "/chain")["paused"] is True
    chain.control.post("/chain/resume")
    resumed_at = chain.clock.now
    assert chain.head() == head
    chain.blocks(1)
    assert chain.head() == head + 1
    resumed = chain.tron.get_block(head + 1)["block_header"]["raw_data"]["timestamp"]
    assert resumed == int((resumed_at + 3) * 1000)  # the paused slots passed without blocks


def test_paused_again_before_the_first_block_after_a_resume_resumes_again(chain: Chain):
    """A resume writes the next block's slot; a pause and a resume before that block was
    produced start that slot anew (it answered 500, a slot starting at that block twice)."""
    head = chain.head()
    chain.control.post("/chain/pause")
    chain.control.post("/chain/resume")
    chain.control.post("/chain/pause")
    chain.blocks(2)
    assert chain.head() == head
    chain.control.post("/chain/resume")
    chain.blocks(1)
    assert chain.head() == head + 1


def test_blocks_follow_the_time_scale():
    """At time-scale 0.01 a block comes every 30 ms of real time."""
    with running_sandbox(time_scale=0.01) as server:
        chain = Chain(server)
        first = chain.head()
        time.sleep(0.35)
        assert 5 <= chain.head() - first <= 40
