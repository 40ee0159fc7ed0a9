"""The node client reading the chain's parameters and USDT's energy factor from the sandbox
over real HTTP, and following them when a proposal changes them; a node answering figures
the chain could not hold is refused."""

from __future__ import annotations

import pytest
import requests

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.models import ChainParameters
from airflow_provider_tronenergy.protocol.address import random_address
from support.control import Control
from support.sandbox import sandbox_fixture
from support.waiting import wait_until

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
sandbox = sandbox_fixture(time_scale=0.01)  # a block every 30 ms


@pytest.fixture
def node(sandbox):
    with TronNodeClient(sandbox.root_url) as client:
        yield client


def test_the_chains_fees_and_usdts_factor(node):
    assert node.get_chain_parameters() == ChainParameters(
        energy_fee=100, transaction_fee=1_000, create_account_fee=100_000,
        create_new_account_fee_in_system_contract=1_000_000, free_net_limit=600)
    info = node.get_contract_info()
    assert info is not None and (info.contract_address, info.energy_factor) == (USDT, 34_000)
    assert node.get_contract_info(random_address()) is None


def test_a_proposal_and_a_factor_change_are_read_once_in_force(sandbox, node):
    control = Control(sandbox)
    control.post("/chain/parameters", {"getEnergyFee": 210, "getCreateAccountFee": 0})
    control.post("/chain/contract", {"energy_factor": 10_000})
    wait_until(lambda: node.get_chain_parameters().energy_fee == 210, timeout=5)
    fees = node.get_chain_parameters()
    assert (fees.create_account_fee, fees.activation_sun) == (0, 1_000_000)
    wait_until(lambda: node.get_contract_info().energy_factor == 10_000, timeout=5)


def test_the_nodes_estimate_follows_usdts_energy_factor(sandbox, node):
    control = Control(sandbox)
    sender = control.wallet(trx="10", usdt="100")
    holder, newcomer = control.wallet(usdt="1"), random_address()
    assert node.estimate_transfer_energy(sender, holder, 1_000_000) == 64_285
    assert node.estimate_transfer_energy(sender, newcomer, 1_000_000) == 130_285
    control.post("/chain/contract", {"energy_factor": 10_000})
    wait_until(lambda: node.estimate_transfer_energy(sender, holder, 1) == 29_236, timeout=5)
    assert node.estimate_transfer_energy(sender, newcomer, 1_000_000) == 59_236


def test_a_node_answering_an_impossible_fee_is_refused(sandbox, node):
    # java-tron lets a proposal set this (its range reaches 10**17); no plan believes it.
    Control(sandbox).post("/chain/parameters", {"getEnergyFee": 1_000_000})
    wait_until(lambda: requests.post(sandbox.root_url + "/wallet/getchainparameters",
                                     timeout=5).json()["chainParameter"][0]["value"]
               == 1_000_000, timeout=5)
    with pytest.raises(ValueError, match=r"getEnergyFee.*sun per energy.*1,000,000"):
        node.get_chain_parameters()
