"""The sandbox as a TRON full node, read by tronpy (an independent client) and by the
provider's TronNodeHook, over real HTTP: balances, resources around an order's life,
USDT balanceOf, estimates, receipts (withheld delegations too) and the head block."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
import requests
from tronpy import Tron
from tronpy.abi import trx_abi
from tronpy.exceptions import AddressNotFound, TransactionNotFound, UnknownError
from tronpy.providers import HTTPProvider

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.node.client import TronNodeClient
from support.control import Control
from support.sandbox import sandbox_fixture
from support.waiting import wait_until
from tronenergy_protocol.address import random_address

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
# 1 h of rent lasts 1.8 s; an order succeeds after 1.5 ms; solidification takes 28 ms.
sandbox = sandbox_fixture(time_scale=0.0005)


@pytest.fixture
def control(sandbox) -> Control:
    return Control(sandbox)


@pytest.fixture
def tron(sandbox) -> Tron:
    return Tron(HTTPProvider(sandbox.root_url + "/"))


@pytest.fixture
def node(sandbox):
    with TronNodeClient(sandbox.root_url, api_key="ignored-by-the-sandbox") as client:
        yield client


def _buy(sandbox, target: str, energy: int) -> str:
    with TronEnergyClient(sandbox.url, sandbox.api_key, sandbox.api_secret) as client:
        return client.buy_energy(target, energy, Decimal("1")).order_id


def test_balances_and_activation(control, tron, node):
    wallet = control.wallet(trx="125.5", usdt="1000.25")
    assert tron.get_account_balance(wallet) == Decimal("125.5")
    assert tron.get_account(wallet)["balance"] == 125_500_000
    account = node.get_account(wallet)
    assert (account.activated, account.trx_sun) == (True, 125_500_000)
    stranger = random_address()
    with pytest.raises(AddressNotFound):
        tron.get_account(stranger)
    assert node.get_account(stranger).activated is False
    assert node.get_account(stranger).trx_sun == 0


def test_usdt_balance_of_through_the_contract(control, tron, node):
    wallet = control.wallet(trx="1", usdt="1000.25")
    parameter = trx_abi.encode(["address"], [wallet]).hex()
    raw = tron.trigger_const_smart_contract_function(wallet, USDT, "balanceOf(address)",
                                                     parameter)
    assert int(raw, 16) == 1_000_250_000
    assert node.get_usdt_balance(wallet) == 1_000_250_000
    assert node.get_usdt_balance(random_address()) == 0
    decimals = tron.trigger_const_smart_contract_function(wallet, USDT, "decimals()", "")
    assert int(decimals, 16) == 6


def test_a_usdt_transfer_moves_balances_and_uses_bandwidth(control, node):
    sender = control.wallet(trx="10", usdt="100")
    recipient = random_address()
    control.post("/transfers", {"from": sender, "to": recipient, "amount": "40.5",
                                "token": "USDT"})
    assert node.get_usdt_balance(sender) == 59_500_000
    assert node.get_usdt_balance(recipient) == 40_500_000
    assert node.get_resources(sender).free_net_used == 345
    short = requests.post(f"{control.root}/transfers", json={
        "from": sender, "to": recipient, "amount": "60", "token": "USDT"}, timeout=10)
    assert short.status_code == 400 and node.get_usdt_balance(sender) == 59_500_000


def test_resources_before_an_order_after_it_and_after_its_rent_time(sandbox, control, tron,
                                                                    node):
    wallet = control.wallet(trx="50", usdt="10", staked=300_000)
    control.post(f"/addresses/{wallet}/energy", {"used": 20_000})
    before = tron.get_account_resource(wallet)
    assert (before["EnergyLimit"], before["freeNetLimit"]) == (300_000, 600)
    # Usage recovers over 28,800 blocks; a few blocks (30 ms each) pass between the calls.
    assert 19_900 <= before["EnergyUsed"] <= 20_000
    assert 280_000 <= node.get_resources(wallet).energy_available <= 280_100
    order_id = _buy(sandbox, wallet, 65_000)
    wait_until(lambda: control.status(order_id) == "success", timeout=10)
    assert node.get_resources(wallet).energy_limit == 365_000
    assert 345_000 <= tron.get_energy(wallet) <= 345_200
    wait_until(lambda: node.get_resources(wallet).energy_limit == 300_000, timeout=10)


def test_a_delegation_receipt_then_solidified(sandbox, control, tron, node):
    wallet = control.wallet(trx="5")
    order_id = _buy(sandbox, wallet, 65_000)
    wait_until(lambda: control.status(order_id) == "success", timeout=10)
    tx_hash = control.orders(wallet)[0]["tx_hash"]
    info = tron.get_transaction_info(tx_hash)
    assert info["receipt"]["result"] == "SUCCESS" and info["blockNumber"] > 0
    confirmed = node.get_transaction_info(tx_hash)
    assert confirmed is not None and confirmed.succeeded
    assert confirmed.block_number == info["blockNumber"]
    wait_until(lambda: node.get_transaction_info(tx_hash, solidified=True) is not None,
               timeout=10)
    assert tron.get_solid_transaction_info(tx_hash)["blockNumber"] == info["blockNumber"]


def test_a_withheld_delegation_never_reaches_the_chain(sandbox, control, tron, node):
    wallet = control.wallet(trx="5")
    control.withhold_delegations(1)
    order_id = _buy(sandbox, wallet, 65_000)
    wait_until(lambda: control.status(order_id) == "success", timeout=10)
    tx_hash = control.orders(wallet)[0]["tx_hash"]
    assert len(tx_hash) == 64
    with pytest.raises(TransactionNotFound):
        tron.get_transaction_info(tx_hash)
    assert node.get_transaction_info(tx_hash) is None
    assert node.get_resources(wallet).energy_limit == 0
    # The next order delegates again.
    second = _buy(sandbox, wallet, 65_000)
    wait_until(lambda: control.status(second) == "success", timeout=10)
    assert node.get_resources(wallet).energy_limit == 65_000


def test_estimates_are_the_chains_energy(control, tron, node):
    """The chain's figures (USDT at its energy factor), a little under the service's
    check-address rule (65,000 / 131,000), which prices a transfer with a margin."""
    sender = control.wallet(trx="10", usdt="100")
    holder, newcomer = control.wallet(usdt="1"), random_address()
    assert node.estimate_transfer_energy(sender, holder, 5_000_000) == 64_285
    assert node.estimate_transfer_energy(sender, newcomer, 5_000_000) == 130_285
    parameter = trx_abi.encode(["address", "uint256"], [holder, 5_000_000]).hex()
    assert tron.get_estimated_energy(sender, USDT, "transfer(address,uint256)",
                                     parameter) == 64_285
    constant = tron.trigger_constant_contract(sender, USDT, "transfer(address,uint256)",
                                              parameter)
    assert constant["energy_used"] == 64_285
    # More than the sender holds: the call would revert, so no estimate.
    assert node.estimate_transfer_energy(sender, holder, 500_000_000) is None


def test_without_estimateenergy_the_constant_call_estimates():
    from support.sandbox import running_sandbox

    with running_sandbox(node_estimate_energy=False) as server:
        control = Control(server)
        sender = control.wallet(trx="10", usdt="100")
        tron = Tron(HTTPProvider(server.root_url + "/"))
        parameter = trx_abi.encode(["address", "uint256"], [sender, 1]).hex()
        with pytest.raises(UnknownError, match="does not support estimate energy"):
            tron.get_estimated_energy(sender, USDT, "transfer(address,uint256)", parameter)
        with TronNodeClient(server.root_url) as node:
            assert node.estimate_transfer_energy(sender, random_address(), 1) == 130_285


def test_head_block_advances_with_the_clock(control, tron, node):
    """A block every 3 s of sandbox time (1.5 ms here): a transfer lands in the head block."""
    first = node.get_now_block()
    transfer = control.post("/transfers", {"from": random_address(), "to": random_address(),
                                           "amount": "1", "token": "TRX"})
    between = tron.get_latest_block_number()
    head = node.get_now_block()
    assert first.number <= transfer["block_number"] <= between <= head.number
    assert head.number > first.number
    assert abs(head.timestamp_ms - time.time() * 1000) < 60_000


def test_control_refuses_bad_balances(control):
    address = random_address()
    for body in ({"trx": "-1"}, {"usdt": "1.0000001"}, {"trx": "1e3"}, {"usdt": "١"}):
        response = requests.post(f"{control.root}/addresses/{address}/balances", json=body,
                                 timeout=10)
        assert response.status_code == 400, body
    response = requests.post(f"{control.root}/addresses/{address}/energy",
                             json={"staked": -5}, timeout=10)
    assert response.status_code == 400
