"""Energy and bandwidth usage recover over java-tron's 24 h window (issue 37).

java-tron's ``ResourceProcessor.increase``: usage decays linearly to zero over
28,800 slots (24 h of 3 s blocks) from the slot it was last consumed in; reads
decay it to the head first. Figures below are worked by hand from that formula:
64,285 energy is 2,232,119 per slot (ceil of x 10^6 / 28,800); half a window
later 1,116,060 (Math.round of x 0.5), that is 32,142 energy.
"""

from __future__ import annotations

import pytest
from tronpy.keys import to_hex_address

from support.chain import Chain, manual_chain

HALF_DAY = 14_400
"""Blocks in 12 h of chain time (3 s each)."""


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def test_usage_after_12_and_24_hours_of_chain_time(chain: Chain):
    key, owner = chain.account(usdt="5", staked=200_000)
    _, holder = chain.account(usdt="1")
    txid = chain.sent(chain.usdt(owner, holder, 1), key)
    chain.blocks(1)
    block = chain.info(txid)["blockNumber"]
    used = chain.node_post("getaccountresource", {"address": owner, "visible": True})
    assert (used["EnergyUsed"], used["freeNetUsed"]) == (64_285, 345)
    account = chain.node_post("getaccount", {"address": to_hex_address(owner)})
    block_ms = chain.tron.get_block(block)["block_header"]["raw_data"]["timestamp"]
    assert account["account_resource"] == {"energy_usage": 64_285,
                                           "latest_consume_time_for_energy": block_ms}
    assert (account["free_net_usage"], account["latest_consume_free_time"]) == (345, block_ms)
    chain.blocks(HALF_DAY + block - chain.head())
    half = chain.node_post("getaccountresource", {"address": owner, "visible": True})
    assert (half["EnergyUsed"], half["freeNetUsed"]) == (32_142, 172)
    chain.blocks(HALF_DAY)
    day = chain.node_post("getaccountresource", {"address": owner, "visible": True})
    assert "EnergyUsed" not in day and "freeNetUsed" not in day  # zero: left out


def test_a_charge_adds_to_the_decayed_usage(chain: Chain):
    key, owner = chain.account(usdt="5", staked=200_000)
    _, holder = chain.account(usdt="1")
    first = chain.sent(chain.expiring(chain.usdt(owner, holder, 1)), key)
    chain.blocks(1)
    block = chain.info(first)["blockNumber"]
    chain.blocks(HALF_DAY + block - chain.head() - 1)  # the next one lands 12 h later
    second = chain.sent(chain.expiring(chain.usdt(owner, holder, 1)), key)
    chain.blocks(1)
    assert chain.info(second)["blockNumber"] == block + HALF_DAY
    assert chain.wallet(owner)["energy_used"] == 32_142 + 64_285


def test_without_recovery_usage_only_grows():
    """``--no-resource-recovery``: the sandbox before issue 37, for benches that compare."""
    with manual_chain(resource_recovery=False) as chain:
        key, owner = chain.account(usdt="5", staked=200_000)
        _, holder = chain.account(usdt="1")
        chain.sent(chain.expiring(chain.usdt(owner, holder, 1)), key)
        chain.blocks(2 * HALF_DAY)
        assert chain.wallet(owner)["energy_used"] == 64_285
        chain.sent(chain.expiring(chain.usdt(owner, holder, 1)), key)
        chain.blocks(1)
        assert chain.wallet(owner)["energy_used"] == 2 * 64_285


def test_the_sandbox_command_turns_recovery_off():
    from tronenergy_sandbox.cli import parser

    assert parser().parse_args([]).resource_recovery is True
    assert parser().parse_args(["--no-resource-recovery"]).resource_recovery is False
