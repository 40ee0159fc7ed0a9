"""The on-chain arithmetic of a payout plan, without a node: shortfall orders, bandwidth
burn, parameters. The reads themselves are tested against the sandbox's node API
(tests/node) and in the payout DAG (tests/example_dags/test_batch_payout_onchain.py)."""

from __future__ import annotations

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.money.burn import BurnPrices
from airflow_provider_tronenergy.node.models import Resources, TransactionInfo
from airflow_provider_tronenergy.payout.onchain import (
    bandwidth_burn_sun,
    holder_energy,
    shortfall_orders,
)
from airflow_provider_tronenergy.payout.params import ChainParams


@pytest.mark.parametrize(("need", "on_hand", "expected"), [
    (325_000, 400_000, []),                        # enough on hand: no order at all
    (325_000, 325_000, []),
    (325_000, 300_000, [32_000]),                  # 25,000 short: the service's minimum
    (325_000, 0, [325_000]),
    (5_100_000, 0, [5_000_000, 100_000]),          # split at max_energy
    (5_010_000, 0, [4_978_000, 32_000]),           # the last raised to min_energy
    (12_000_000, 1_000_000, [5_000_000, 5_000_000, 1_000_000]),
])
def test_only_the_missing_energy_is_bought(need, on_hand, expected):
    orders = shortfall_orders(need, on_hand, min_energy=32_000, max_energy=5_000_000)
    assert [o["energy_amount"] for o in orders] == expected
    assert all(32_000 <= o["energy_amount"] <= 5_000_000 for o in orders)
    if expected and expected[-1] != 32_000:
        assert sum(expected) == need - on_hand  # exactly the shortfall


@pytest.mark.parametrize(("transfers", "resources", "burned_transfers"), [
    (1, Resources("T", free_net_limit=600), 0),
    (2, Resources("T", free_net_limit=600), 1),               # 600 covers one 345-byte transfer
    (2, Resources("T", free_net_limit=600, free_net_used=300), 2),
    (5, Resources("T", free_net_limit=600, net_limit=1_000), 2),  # 2 staked + 1 free
    (3, Resources("T"), 3),
])
def test_bandwidth_burn_counts_whole_transfers_per_pool(transfers, resources, burned_transfers):
    assert bandwidth_burn_sun(transfers, resources) == burned_transfers * 345 * 1_000


def test_bandwidth_burns_at_the_chains_price():
    chain = BurnPrices(bandwidth_sun=420, source="chain")
    assert bandwidth_burn_sun(3, Resources("T"), chain) == 3 * 345 * 420


def _check(address: str, energy: int) -> dict[str, object]:
    return {"address": address, "transfer_energy": energy, "need_activate": False}


def test_a_holders_transfer_is_the_nodes_estimate_for_a_holder():
    energies = {"A": 64_285, "B": 130_285, "C": 64_290}
    checks = [_check("A", 65_000), _check("B", 131_000), _check("C", 65_000)]
    assert holder_energy(energies, checks, 34_000) == 64_290  # the larger: never short


@pytest.mark.parametrize(("factor", "first", "holder"), [
    (34_000, 130_285, 64_285),   # the new slot: 15,000 x 4.4
    (10_000, 59_236, 29_236),    # a proposed cut: x 2
    (0, 29_631, 14_631),         # no dynamic energy
])
def test_without_a_holder_a_first_transfer_less_its_new_slot(factor, first, holder):
    checks = [_check("B", 131_000)]
    assert holder_energy({"B": first}, checks, factor) == holder


def test_chain_params_are_checked_and_exact():
    params = ChainParams.of({"tron_node_conn_id": "node", "trx_reserve": "10.5",
                             "energy_margin": "20000", "confirm_solidified": True,
                             "confirm_timeout": "60"})
    assert params == ChainParams(node_conn_id="node", energy_margin=20_000,
                                 trx_reserve_sun=10_500_000, solidified=True,
                                 confirm_timeout=60.0)
    assert ChainParams.of({}).node_conn_id == "" and ChainParams.of({}).trx_reserve_sun == 0
    for bad in ({"trx_reserve": "-1"}, {"trx_reserve": "0.0000001"}, {"energy_margin": "1.5"},
                {"confirm_timeout": "0"}, {"trx_reserve": "١٠"}):
        with pytest.raises(AirflowFailException, match="nothing was bought or activated"):
            ChainParams.of(bad)


def test_a_receipt_marked_failed_is_not_a_success():
    ok = TransactionInfo.from_node("ab" * 32, {"blockNumber": 5, "receipt": {}}, solidified=False)
    assert ok.succeeded and ok.receipt_result is None  # system transactions carry no result
    failed = TransactionInfo.from_node("ab" * 32, {"blockNumber": 5, "result": "FAILED"},
                                       solidified=False)
    reverted = TransactionInfo.from_node("ab" * 32, {"blockNumber": 5,
                                                     "receipt": {"result": "REVERT"}},
                                         solidified=True)
    assert not failed.succeeded and not reverted.succeeded
    with pytest.raises(ValueError, match="blockNumber"):
        TransactionInfo.from_node("ab" * 32, {"blockNumber": 5.0}, solidified=False)
