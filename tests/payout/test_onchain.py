"""The on-chain arithmetic of a payout plan, without a node: shortfall orders, bandwidth
burn; and what a node's answers make of a batch (refused, or to be read again), with a
stand-in node. The reads themselves are tested against the sandbox's node API
(tests/node) and in the payout DAG (tests/example_dags/test_batch_payout_onchain.py)."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_tronenergy.errors import ConnectionMissing, NotRetryable, Retryable
from airflow_provider_tronenergy.money.burn import BurnPrices
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import Resources, TransactionInfo
from airflow_provider_tronenergy.payout import onchain
from airflow_provider_tronenergy.payout.onchain import (
    ChainRefused,
    ChainUnread,
    WalletEnergy,
    bandwidth_burn_sun,
    confirm_delegations,
    holder_energy,
    shortfall_orders,
)
from airflow_provider_tronenergy.payout.params import ChainParams
from tronenergy_protocol.address import random_address


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


class _Node:
    """Stands in for the node hook: receipts by txID, the wallet's energy, or a node down."""

    def __init__(self, *, receipts: dict[str, TransactionInfo] | None = None,
                 energy: int = 0, down: bool = False) -> None:
        self.receipts, self.energy, self.down = receipts or {}, energy, down

    def get_transaction_info(self, tx_hash: str, *, solidified: bool = False
                             ) -> TransactionInfo | None:
        if self.down:
            raise NodeError("node unreachable")
        return self.receipts.get(tx_hash)

    def get_resources(self, address: str) -> Resources:
        return Resources(address=address, energy_limit=self.energy)

    def estimate_transfer_energy(self, owner: str, to: str, units: int) -> int | None:
        raise NodeError("node unreachable")


def _receipt(tx_hash: str, **payload: Any) -> TransactionInfo:
    return TransactionInfo.from_node(tx_hash, {"blockNumber": 7, **payload}, solidified=False)


@pytest.mark.parametrize(("orders", "receipts", "words"), [
    ([{"order_id": "o1", "tx_hash": ""}], {}, "without a tx_hash"),
    ([{"order_id": "o1", "tx_hash": "ab" * 32}],
     {"ab" * 32: {"receipt": {"result": "REVERT"}}}, "failed on chain"),
    ([{"order_id": "o1", "tx_hash": "ab" * 32}], {}, "not on chain after 0 s"),
])
def test_a_delegation_not_seen_refuses_the_batch_for_good(orders, receipts, words):
    """Refused, not retried: the message says the batch is not published."""
    node = _Node(receipts={tx: _receipt(tx, **payload) for tx, payload in receipts.items()})
    with pytest.raises(ChainRefused, match=words) as refused:
        confirm_delegations(node, "TSender", orders, 0, solidified=False,  # type: ignore[arg-type]
                            timeout=0, sleep=lambda _: None)
    assert isinstance(refused.value, NotRetryable)
    assert "the batch is not published" in str(refused.value)


def test_a_node_that_cannot_be_read_is_retried_nothing_bought():
    """A reused order's energy that the node cannot show: the attempt is retried."""
    wallet = WalletEnergy(_Node(down=True))  # type: ignore[arg-type]
    with pytest.raises(ChainUnread, match="nothing was bought by this attempt") as unread:
        wallet.missing("TTarget", 65_000, status="success", tx_hash="ab" * 32)
    assert isinstance(unread.value, Retryable)


def test_estimates_the_node_fails_are_retried_not_guessed():
    """A failed estimate fails the pre-flight, retryable: never the check-address rule."""
    payouts = [{"recipient": "TA", "amount": "1"}, {"recipient": "TB", "amount": "2"}]
    checks = [{"address": "TA", "transfer_energy": 65_000},
              {"address": "TB", "transfer_energy": 131_000}]
    with pytest.raises(ChainUnread, match="nothing was bought or activated") as unread:
        onchain._energies(_Node(), "TSender", payouts, checks)  # type: ignore[arg-type]
    assert "2 of 2 addresses could not be estimated" in str(unread.value)
    assert "TA: " in str(unread.value) and "TB: " in str(unread.value)


def test_a_node_connection_that_names_nothing_stops_the_preflight(monkeypatch):
    """A typo is not "no node": the pre-flight fails, not retried, before anything is
    bought or activated (the plan and the purchases come after it); None, written out, is
    the one way to plan without on-chain checks."""
    monkeypatch.delenv("AIRFLOW_CONN_TRON_NOD_DEFAULT", raising=False)
    sender = random_address()
    with pytest.raises(ConnectionMissing) as missing:
        onchain.check_batch([], [], sender,
                            ChainParams.checked(tron_node_conn_id="tron_nod_default"))
    assert str(missing.value) == (
        "tron_node_conn_id 'tron_nod_default' names no connection; payout preparation needs "
        "a TRON node to check balances and delegations: create it, or pass "
        "tron_node_conn_id=None to plan without on-chain checks")
    assert isinstance(missing.value, NotRetryable)
    with pytest.raises(ConnectionMissing, match=r"^tron_node_conn_id is empty; "):
        onchain.check_batch([], [], sender, ChainParams.checked(tron_node_conn_id=""))
    chosen = onchain.check_batch([], [], sender, ChainParams.checked(tron_node_conn_id=None))
    assert chosen == {"onchain": False, "reason": "no on-chain checks were made: "
                                                  "tron_node_conn_id is None"}
