"""Execution and charging at packing, as TRON charges: energy (own, then burned up to
``fee_limit``), bandwidth (staked, free, burned), REVERT, OUT_OF_ENERGY, new accounts, holders.

Figures from the chain's defaults: 100 sun per energy, 1,000 sun per byte, 600 free bytes,
USDT 64,285 energy to a holder and 130,285 to a first-time recipient; a USDT transfer built
by tronpy is 345 bytes and a TRX transfer 268 (the transaction plus 64 for its result).
"""

from __future__ import annotations

import json

import pytest
from tronpy.exceptions import TvmError
from tronpy.tron import TransactionRet

from support.chain import Chain, manual_chain
from support.receiver import RecordingReceiver
from support.signed import SignedSession
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback

TO_HOLDER, TO_NEWCOMER = 64_285, 130_285
USDT_BYTES = 345


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def _run(chain: Chain, builder, key) -> dict:
    """Build online, sign, broadcast, produce the next block; the receipt."""
    txid = chain.sent(chain.expiring(builder), key)
    chain.blocks(1)
    info = chain.info(txid)
    assert info["id"] == txid
    return info


def test_a_first_transfer_to_an_address_costs_a_new_slot_then_a_holders_price(chain: Chain):
    key, owner = chain.account(trx="100", usdt="50")
    newcomer = random_address()
    first = _run(chain, chain.usdt(owner, newcomer, 20_000_000), key)
    assert first["receipt"] == {"energy_fee": TO_NEWCOMER * 100,
                                "energy_usage_total": TO_NEWCOMER, "net_usage": USDT_BYTES,
                                "result": "SUCCESS"}
    assert first["fee"] == TO_NEWCOMER * 100
    second = _run(chain, chain.usdt(owner, newcomer, 5_000_000), key)
    assert second["receipt"]["energy_usage_total"] == TO_HOLDER
    assert second["receipt"]["net_fee"] == USDT_BYTES * 1_000  # 255 free bytes left: burned
    assert second["fee"] == TO_HOLDER * 100 + USDT_BYTES * 1_000
    assert chain.contract().functions.balanceOf(newcomer) == 25_000_000
    assert chain.contract().functions.balanceOf(owner) == 25_000_000
    spent = TO_NEWCOMER * 100 + TO_HOLDER * 100 + USDT_BYTES * 1_000
    assert chain.wallet(owner)["trx_sun"] == 100_000_000 - spent
    assert chain.wallet(owner)["free_net_used"] == USDT_BYTES


def test_a_holder_that_sent_all_its_usdt_away_costs_a_new_slot_again(chain: Chain):
    """The contract zeroes an emptied balance's slot (an exchange's swept deposit address):
    the next transfer to it writes a new one. Before, a holder stayed one for good."""
    key, owner = chain.account(trx="100", usdt="50")
    swept_key, swept = chain.account(trx="100", usdt="3")
    assert chain.estimate(owner, swept) == TO_HOLDER
    assert _run(chain, chain.usdt(swept, owner, 3_000_000), swept_key)["receipt"][
        "result"] == "SUCCESS"
    assert chain.estimate(owner, swept) == TO_NEWCOMER
    assert _run(chain, chain.usdt(owner, swept, 1_000_000), key)["receipt"][
        "energy_usage_total"] == TO_NEWCOMER
    assert chain.estimate(owner, swept) == TO_HOLDER
    chain.control.post(f"/addresses/{swept}/balances", {"usdt": "0"})  # emptied by a seed
    assert chain.estimate(owner, swept) == TO_NEWCOMER


def test_staked_energy_is_used_before_anything_is_burned(chain: Chain):
    key, owner = chain.account(usdt="10", staked=100_000)
    _, holder = chain.account(usdt="1")
    info = _run(chain, chain.usdt(owner, holder, 1), key)
    assert info["receipt"]["energy_usage"] == TO_HOLDER
    assert "energy_fee" not in info["receipt"] and "fee" not in info
    assert chain.tron.get_account_resource(owner)["EnergyUsed"] == TO_HOLDER
    rest = _run(chain, chain.usdt(owner, holder, 1), key)  # 35,718 left: the rest is burned
    # One block later 64,285 used has recovered to 64,282 (java-tron's 28,800-block window:
    # ceil(64,285 x 10^6 / 28,800) = 2,232,119 x 28,799 / 28,800, rounded, x 0.0288).
    assert rest["receipt"]["energy_usage"] == 100_000 - 64_282
    assert rest["receipt"]["energy_fee"] == (TO_HOLDER - (100_000 - 64_282)) * 100


def test_energy_delegated_by_an_order_is_drawn_before_burning(chain: Chain):
    key, owner = chain.account(usdt="10")
    _, holder = chain.account(usdt="1")
    order_id = chain.control.buy(owner, energy=32_000)
    chain.control.succeed(order_id)  # the manual clock passes the order's 3 s
    assert chain.tron.get_account_resource(owner)["EnergyLimit"] == 32_000
    info = _run(chain, chain.usdt(owner, holder, 1), key)
    assert info["receipt"]["energy_usage"] == 32_000
    assert info["receipt"]["energy_fee"] == (TO_HOLDER - 32_000) * 100
    assert chain.tron.get_energy(owner) == 0


def test_energy_used_from_a_rental_leaves_with_it(chain: Chain):
    """java-tron moves a receiver's usage back with the energy withdrawn, pro rata."""
    key, owner = chain.account(usdt="10")
    _, holder = chain.account(usdt="1")
    chain.control.succeed(chain.control.buy(owner, energy=65_000))
    assert _run(chain, chain.usdt(owner, holder, 1), key)["receipt"]["energy_usage"] == TO_HOLDER
    assert chain.tron.get_account_resource(owner)["EnergyUsed"] == TO_HOLDER
    chain.clock.advance(3_600)  # the hour's rental ends
    after = chain.tron.get_account_resource(owner)
    assert "EnergyLimit" not in after and "EnergyUsed" not in after  # java-tron omits zeros
    chain.control.succeed(chain.control.buy(owner, energy=65_000))
    again = _run(chain, chain.usdt(owner, holder, 1), key)
    assert again["receipt"]["energy_usage"] == TO_HOLDER and "energy_fee" not in again["receipt"]


def test_a_rental_ending_takes_its_share_of_the_usage_only(chain: Chain):
    key, owner = chain.account(usdt="10", staked=100_000)
    _, holder = chain.account(usdt="1")
    chain.control.succeed(chain.control.buy(owner, energy=65_000))
    _run(chain, chain.usdt(owner, holder, 1), key)
    chain.clock.advance(3_600)
    # Without recovery: 64,285 less its 65/165 share, 38,961. The usage also recovers over
    # the 1,200 blocks of the hour (java-tron's 28,800-block window): 37,337.
    used = 37_337
    assert chain.tron.get_account_resource(owner)["EnergyUsed"] == used
    assert used < TO_HOLDER - TO_HOLDER * 65_000 // 165_000
    assert chain.tron.get_energy(owner) == 100_000 - used


def test_out_of_energy_burns_up_to_the_fee_limit_and_moves_nothing(chain: Chain):
    key, owner = chain.account(usdt="10")
    _, holder = chain.account(usdt="1")
    txid = chain.sent(chain.expiring(chain.usdt(owner, holder, 1_000_000,
                                                fee_limit=1_000_050)), key)
    chain.blocks(1)
    info = chain.info(txid)
    # A fee_limit below 2**21 is one varint byte shorter than 30 TRX: 344 bytes.
    assert info["receipt"] == {"energy_fee": 1_000_000, "energy_usage_total": 10_000,
                               "net_usage": USDT_BYTES - 1, "result": "OUT_OF_ENERGY"}
    assert info["result"] == "FAILED" and info["fee"] == 1_000_000
    assert info["resMessage"].startswith("Not enough energy")  # visible: text
    assert chain.contract().functions.balanceOf(owner) == 10_000_000
    assert chain.wallet(owner)["trx_sun"] == 100_000_000 - 1_000_000
    with pytest.raises(TvmError):  # tronpy's own reading of the receipt
        TransactionRet({"txid": txid}, client=chain.tron,
                       method=chain.contract().functions.transfer).result(timeout=1)


def test_the_fee_limit_caps_all_energy_even_staked(chain: Chain):
    """java-tron's limit: min(energy left + balance / price, fee_limit / price)."""
    key, owner = chain.account(usdt="10", staked=5_000)
    _, holder = chain.account(usdt="1")
    info = _run(chain, chain.usdt(owner, holder, 1, fee_limit=1_000_000), key)
    assert info["receipt"]["result"] == "OUT_OF_ENERGY"
    assert info["receipt"]["energy_usage_total"] == 10_000
    assert info["receipt"]["energy_usage"] == 5_000
    assert info["receipt"]["energy_fee"] == 500_000


def test_more_usdt_than_held_reverts_and_pays_for_its_energy(chain: Chain):
    key, owner = chain.account(usdt="1")
    stranger = random_address()
    info = _run(chain, chain.usdt(owner, stranger, 2_000_000), key)
    assert info["receipt"]["result"] == "REVERT" and info["result"] == "FAILED"
    assert info["resMessage"] == "REVERT opcode executed"  # visible: text
    energy = info["receipt"]["energy_usage_total"]
    assert 0 < energy < TO_HOLDER and info["receipt"]["energy_fee"] == energy * 100
    assert chain.contract().functions.balanceOf(owner) == 1_000_000
    assert chain.contract().functions.balanceOf(stranger) == 0
    parameter = chain.contract().functions.transfer._prepare_parameter(stranger, 1)
    assert chain.tron.get_estimated_energy(owner, chain.contract().contract_address,
                                           "transfer(address,uint256)",
                                           parameter) == TO_NEWCOMER  # not made a holder
    parameter = chain.contract().functions.transfer._prepare_parameter(stranger, 2_000_000)
    constant = chain.tron.provider.make_request("wallet/triggerconstantcontract", {
        "owner_address": owner, "contract_address": chain.contract().contract_address,
        "function_selector": "transfer(address,uint256)", "parameter": parameter,
        "visible": True})
    assert constant["energy_used"] == energy  # the constant call says what the chain charges


def test_staked_bandwidth_then_free_then_burned(chain: Chain):
    key, owner = chain.account(usdt="10")
    _, holder = chain.account(usdt="1")
    chain.control.post(f"/addresses/{owner}/bandwidth", {"staked": 400})
    staked = _run(chain, chain.usdt(owner, holder, 1), key)
    assert staked["receipt"]["net_usage"] == USDT_BYTES
    assert chain.wallet(owner)["net_used"] == USDT_BYTES
    assert chain.wallet(owner)["free_net_used"] == 0
    free = _run(chain, chain.usdt(owner, holder, 1), key)  # 55 staked left: free pays
    assert free["receipt"]["net_usage"] == USDT_BYTES
    assert chain.wallet(owner)["free_net_used"] == USDT_BYTES
    burned = _run(chain, chain.usdt(owner, holder, 1), key)
    assert burned["receipt"]["net_fee"] == USDT_BYTES * 1_000
    assert "net_usage" not in burned["receipt"]


def test_no_bandwidth_and_no_trx_to_burn_is_refused_at_broadcast(chain: Chain):
    key, owner = chain.account(trx="0.2", usdt="10")
    _, holder = chain.account(usdt="1")
    chain.control.post(f"/addresses/{owner}/energy", {"staked": 200_000})
    _run(chain, chain.usdt(owner, holder, 1), key)  # free bandwidth: 255 bytes left
    txn = chain.expiring(chain.usdt(owner, holder, 1)).build().sign(key)
    answer = chain.raw_broadcast(txn)
    assert (answer["code"], answer["message"]) == ("BANDWITH_ERROR",
                                                   "Account resource insufficient error.")


def test_trx_to_an_unactivated_address_creates_it(chain: Chain):
    key, owner = chain.account(trx="10")
    newcomer = random_address()
    info = _run(chain, chain.trx(owner, newcomer, 2_000_000), key)
    # No staked bandwidth: 0.1 TRX burned for the account, plus 1 TRX in the contract.
    assert info["receipt"] == {"net_fee": 100_000} and info["fee"] == 1_100_000
    assert chain.tron.get_account_balance(newcomer) == 2
    assert chain.tron.get_account_balance(owner) * 1_000_000 == 10_000_000 - 2_000_000 - 1_100_000
    assert chain.tron.get_transaction(info["id"])["ret"] == [{"fee": 1_000_000,
                                                               "contractRet": "SUCCESS"}]
    again = _run(chain, chain.trx(owner, newcomer, 1_000_000), key)
    assert "fee" not in again and again["receipt"]["net_usage"] > 0  # free bandwidth


def test_a_new_account_uses_staked_bandwidth_when_there_is_enough(chain: Chain):
    key, owner = chain.account(trx="10")
    chain.control.post(f"/addresses/{owner}/bandwidth", {"staked": 1_000})
    info = _run(chain, chain.trx(owner, random_address(), 1_000_000), key)
    assert info["fee"] == 1_000_000 and "net_fee" not in info["receipt"]
    assert chain.wallet(owner)["net_used"] == info["receipt"]["net_usage"]


def test_a_monitored_recipient_gets_the_signed_callback_when_the_block_comes(chain: Chain):
    """No read of the chain: the block producer packs it and the dispatcher delivers."""
    key, owner = chain.account(usdt="10")
    api = SignedSession.of(chain.sandbox)
    with RecordingReceiver() as receiver:
        to = api.watch(receiver.url, tokens=["USDT", "TRX"])
        usdt = chain.sent(chain.expiring(chain.usdt(owner, to, 2_500_000)), key)
        trx = chain.sent(chain.expiring(chain.trx(owner, to, 3_000_000)), key)
        chain.blocks(1)
        deliveries = receiver.wait_for(2)
    events = {json.loads(d.body)["data"]["tx_hash"]: json.loads(d.body) for d in deliveries}
    for delivery in deliveries:
        assert delivery.headers["x-signature"] == sign_callback(chain.sandbox.webhook_secret,
                                                                delivery.body)
    block = chain.head()
    stamp = chain.tron.get_block(block)["block_header"]["raw_data"]["timestamp"]
    assert events[usdt]["event"] == "tron.transfer"
    assert events[usdt]["data"] == {"tx_hash": usdt, "from": owner, "to": to, "amount": "2.5",
                                    "token": "USDT", "block_number": block,
                                    "block_timestamp": stamp}
    assert events[trx]["data"]["amount"] == "3" and events[trx]["data"]["token"] == "TRX"


def test_a_fee_proposal_applies_from_the_next_block(chain: Chain):
    """A transaction already in a block keeps its price; the next block charges the new one."""
    key, owner = chain.account(usdt="10")
    _, holder = chain.account(usdt="1")
    before = chain.sent(chain.expiring(chain.usdt(owner, holder, 1)), key)
    chain.blocks(1)
    changed = chain.control.post("/chain/parameters", {"getEnergyFee": 210})
    assert changed["from_block"] == chain.head() + 1
    after = chain.sent(chain.expiring(chain.usdt(owner, holder, 1)), key)
    chain.blocks(1)
    assert chain.info(before)["receipt"]["energy_fee"] == TO_HOLDER * 100
    assert chain.info(after)["receipt"]["energy_fee"] == TO_HOLDER * 210
    chain.control.post("/chain/parameters", {"getEnergyFee": 100})
