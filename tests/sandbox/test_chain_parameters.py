"""The chain's parameters: the models, java-tron's rule for USDT's energy, the per-block book."""

from __future__ import annotations

import sqlite3

import pytest

from tronenergy_sandbox.chain.parameters import (
    ChainParameters,
    ContractEnergy,
    ParameterBook,
    ParameterError,
)
from tronenergy_sandbox.world import World


def test_defaults_are_the_chains_figures():
    usdt = ContractEnergy()
    assert (usdt.transfer_energy(new_slot=False), usdt.transfer_energy(new_slot=True)) == (
        64_285, 130_285)
    fees = ChainParameters()
    assert (fees.energy_fee, fees.transaction_fee, fees.create_account_fee,
            fees.create_new_account_fee_in_system_contract, fees.free_net_limit) == (
        100, 1_000, 100_000, 1_000_000, 600)


def test_factor_zero_gives_the_chains_figures_before_dynamic_energy():
    """java-tron issue 3556 (2020): 14,631 to a holder, 29,631 to a new address."""
    usdt = ContractEnergy(energy_factor=0)
    assert (usdt.transfer_energy(False), usdt.transfer_energy(True)) == (14_631, 29_631)


def test_a_new_slot_costs_its_storage_write_times_the_factor():
    for factor in (0, 5_000, 10_000, 34_000, 100_000):
        usdt = ContractEnergy(energy_factor=factor)
        extra = usdt.transfer_energy(True) - usdt.transfer_energy(False)
        assert extra == 15_000 + 15_000 * factor // 10_000


def test_energy_grows_with_the_factor_and_the_base():
    energies = [ContractEnergy(energy_factor=f).transfer_energy(False)
                for f in range(0, 100_001, 2_500)]
    assert energies == sorted(energies) and len(set(energies)) == len(energies)
    assert ContractEnergy(base_energy=20_000).transfer_energy(False) > 64_285


def test_to_wallet_has_java_trons_shape():
    answer = ChainParameters(energy_fee=210, free_net_limit=0).to_wallet()
    rows = {row["key"]: row.get("value") for row in answer["chainParameter"]}
    assert rows == {"getEnergyFee": 210, "getTransactionFee": 1_000,
                    "getCreateAccountFee": 100_000,
                    "getCreateNewAccountFeeInSystemContract": 1_000_000,
                    "getFreeNetLimit": None,  # proto3 JSON leaves a zero out
                    "getUpdateAccountPermissionFee": 100_000_000,
                    "getMultiSignFee": 1_000_000,
                    "getCreateNewAccountBandwidthRate": 1}


@pytest.mark.parametrize("changes", [
    {"energy_fee": -1}, {"energy_fee": 1.5}, {"energy_fee": "100"}, {"energy_fee": True},
    {"free_net_limit": 100_001}, {"getEnergyFee": 10**18}, {"gas_price": 1},
])
def test_refused_fee_changes(changes):
    with pytest.raises(ParameterError):
        ChainParameters().changed(changes)


@pytest.mark.parametrize("changes", [
    {"energy_factor": -1}, {"energy_factor": 100_001}, {"base_energy": 0},
    {"base_energy": "14631"}, {"energy_factor": None}, {"threshold": 5},
])
def test_refused_contract_changes(changes):
    with pytest.raises(ParameterError):
        ContractEnergy().changed(changes)


def test_java_tron_names_and_field_names_both_change_a_fee():
    assert ChainParameters().changed({"getEnergyFee": 210}).energy_fee == 210
    assert ChainParameters().changed({"energy_fee": 210}).energy_fee == 210


@pytest.fixture
def book() -> ParameterBook:
    return ParameterBook(sqlite3.connect(":memory:", isolation_level=None))


def test_a_change_applies_from_its_block_on(book: ParameterBook):
    book.set(100, {"getEnergyFee": 210})
    book.set_usdt(105, {"energy_factor": 10_000})
    assert book.current(99).energy_fee == 100
    assert book.current(100).energy_fee == 210 == book.current().energy_fee
    assert book.usdt(104).energy_factor == 34_000
    assert book.usdt(105).energy_factor == 10_000 == book.usdt().energy_factor
    assert book.current(105).energy_fee == 210  # the contract's change leaves fees alone


def test_changes_accumulate_per_field(book: ParameterBook):
    book.set(10, {"energy_fee": 210})
    book.set(20, {"transaction_fee": 500})
    assert (book.current(15).energy_fee, book.current(15).transaction_fee) == (210, 1_000)
    assert (book.current(20).energy_fee, book.current(20).transaction_fee) == (210, 500)


def test_a_refused_change_records_nothing(book: ParameterBook):
    with pytest.raises(ParameterError):
        book.set(10, {"energy_fee": 210, "free_net_limit": -5})
    assert book.current() == ChainParameters()


def test_history_cannot_be_rewritten(book: ParameterBook):
    book.set(50, {"energy_fee": 210})
    with pytest.raises(ParameterError, match="history"):
        book.set_usdt(49, {"energy_factor": 0})
    assert book.usdt() == ContractEnergy()


def test_the_book_survives_a_reopened_database(tmp_path):
    path = str(tmp_path / "world.sqlite")
    ParameterBook(sqlite3.connect(path, isolation_level=None)).set(7, {"energy_fee": 420})
    assert ParameterBook(sqlite3.connect(path, isolation_level=None)).current().energy_fee == 420


def test_the_world_keeps_its_parameters_in_its_state_file(tmp_path):
    path = str(tmp_path / "state.sqlite")
    World(path).parameters.set_usdt(7, {"energy_factor": 10_000})
    reopened = World(path).parameters
    assert (reopened.usdt().energy_factor, reopened.current()) == (10_000, ChainParameters())
