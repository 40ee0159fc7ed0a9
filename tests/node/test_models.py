"""The chain's parameters and a contract's energy factor as a node answers them: read
exactly, and refused when a figure is outside what the chain could hold."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.models import ContractInfo

MAINNET = {"chainParameter": [
    {"key": "getMaintenanceTimeInterval", "value": 21_600_000},
    {"key": "getCreateAccountFee", "value": 100_000},
    {"key": "getTransactionFee", "value": 1_000},
    {"key": "getFreeNetLimit", "value": 600},
    {"key": "getCreateNewAccountFeeInSystemContract", "value": 1_000_000},
    {"key": "getEnergyFee", "value": 100},
    {"key": "getMultiSignFee", "value": 1_000_000},
    {"key": "getAllowTvmCompatibleEvm"},  # a zero: java-tron leaves the value out
]}


def _with(key: str, value: object) -> dict[str, object]:
    rows = [row for row in MAINNET["chainParameter"] if row["key"] != key]
    return {"chainParameter": [*rows, {"key": key, "value": value}]}


def test_mainnets_answer_is_read_exactly():
    fees = ChainParameters.from_node(MAINNET)
    assert fees == ChainParameters(energy_fee=100, transaction_fee=1_000,
                                   create_account_fee=100_000,
                                   create_new_account_fee_in_system_contract=1_000_000,
                                   free_net_limit=600, multi_sign_fee=1_000_000)
    assert fees.activation_sun == 1_100_000


def test_a_zero_fee_the_chain_may_hold_is_read_as_zero():
    rows = [r for r in MAINNET["chainParameter"] if r["key"] != "getCreateAccountFee"]
    fees = ChainParameters.from_node({"chainParameter": [*rows, {"key": "getCreateAccountFee"}]})
    assert fees.create_account_fee == 0 and fees.activation_sun == 1_000_000


@pytest.mark.parametrize(("key", "value", "words"), [
    ("getEnergyFee", 0, "getEnergyFee"),                      # burning would be free
    ("getEnergyFee", 10**9, "sun per energy"),                 # a billion sun per energy
    ("getEnergyFee", 100.0, "non-negative integer"),
    ("getEnergyFee", "100", "non-negative integer"),
    ("getTransactionFee", -1, "non-negative integer"),
    ("getCreateNewAccountFeeInSystemContract", 10**12, "account created"),
    ("getFreeNetLimit", 100_001, "free bandwidth"),
    ("getMultiSignFee", 101_000_000, "multi-signed transaction"),
    ("getMultiSignFee", -1, "non-negative integer"),
])
def test_figures_outside_the_chains_range_are_refused(key, value, words):
    with pytest.raises(ValueError, match=words):
        ChainParameters.from_node(_with(key, value))


@pytest.mark.parametrize("payload", [
    {}, {"chainParameter": "getEnergyFee=100"},
    {"chainParameter": [r for r in MAINNET["chainParameter"] if r["key"] != "getEnergyFee"]},
    {"chainParameter": [*MAINNET["chainParameter"], {"key": "getEnergyFee", "value": 1}]},
])
def test_an_answer_that_is_not_the_chains_list_is_refused(payload):
    with pytest.raises(ValueError):
        ChainParameters.from_node(payload)


def test_a_contracts_energy_factor():
    usdt = ContractInfo.from_node("T" * 34, {"contract_state": {
        "energy_factor": 34_000, "energy_usage": 5, "update_cycle": 9_000}})
    assert (usdt.energy_factor, usdt.energy_usage, usdt.update_cycle) == (34_000, 5, 9_000)
    assert usdt.penalized(15_000) == 66_000  # a new slot at x 4.4
    no_state = ContractInfo.from_node("T" * 34, {"smart_contract": {}})
    assert no_state.energy_factor == 0 and no_state.penalized(15_000) == 15_000
    for factor in (100_001, -1, 34_000.0):
        with pytest.raises(ValueError, match="energy_factor"):
            ContractInfo.from_node("T" * 34, {"contract_state": {"energy_factor": factor}})
