"""Reuse against the chain (issue 22): with a ``tron_node`` connection, a batch reuses an
order placed earlier only while its energy is still on the wallet, and buys what is
missing once. dag.test() against the sandbox, which is also the node; orders are
counted at the sandbox."""

from __future__ import annotations

import secrets
from typing import Any

import operators_batch_buy as dags

from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.node.errors import NodeError
from support.control import Control


def _placed(control: Control, target: str) -> list[int]:
    return [o["energy_amount"] for o in control.orders(target)]


def _order(target: str, key: str, **amount: int) -> dict[str, Any]:
    return {"target_address": target, "purchase_key": key, **amount}


def test_an_order_whose_energy_is_on_the_wallet_is_reused(control, run_dag, journal,
                                                          node_conn):
    target = control.wallet(trx="1")
    orders = [_order(target, f"onchain-{secrets.token_hex(4)}:b0", energy_amount=131_000)]
    assert run_dag(dags.dag, orders=orders, node_conn_id=node_conn)["__run__"] == "success"
    again = run_dag(dags.dag, orders=orders, node_conn_id=node_conn)
    assert again["__run__"] == "success"
    assert [r["reused"] for r in again["buy"][2]] == [True]
    assert _placed(control, target) == [131_000]


def test_energy_gone_on_chain_is_bought_once_then_reused(control, run_dag, journal, node_conn):
    target, other = control.wallet(trx="1"), control.wallet(trx="1")
    key = f"onchain-{secrets.token_hex(4)}"
    gone = _order(target, f"{key}:b0", energy_amount=131_000)
    assert run_dag(dags.dag, orders=[gone], node_conn_id=node_conn)["__run__"] == "success"
    # 100,000 of its 131,000 energy spent: 31,000 left on the wallet.
    control.post(f"/addresses/{target}/energy", {"used": 100_000})
    # The next order is refused with a 429 (provably not placed) on the first try: the
    # retry runs the batch again after the shortfall was bought.
    control.fault(kind="rate_limit", path="/energy/buy-count", count=1)
    orders = [gone, _order(other, f"{key}:c0", count=1)]
    out = run_dag(dags.dag, orders=orders, node_conn_id=node_conn)
    assert out["__run__"] == "success", out
    assert out["buy"][:2] == ("success", 2)
    # The shortfall, once: 100,000 less what recovered meanwhile (usage recovers over
    # java-tron's 24 h window, 28,800 blocks of 30 ms here).
    first, shortfall = _placed(control, target)
    assert first == 131_000 and 99_000 <= shortfall <= 100_000
    assert _placed(control, other) == [65_000]
    refill = journal.latest(f"{key}:b0:refill")
    assert refill is not None and refill.request["energy_amount"] == shortfall
    note = journal.latest(f"{key}:b0").note or ""
    assert f"{shortfall:,} of its 131,000 energy gone on chain" in note
    # Later runs of the batch: the wallet has the energy again, nothing more is bought.
    later = run_dag(dags.dag, orders=orders, node_conn_id=node_conn)
    assert later["__run__"] == "success"
    assert [r["reused"] for r in later["buy"][2]] == [True, True]
    assert _placed(control, target) == [131_000, shortfall]


def test_without_a_node_the_journal_alone_decides(control, run_dag, journal):
    target = control.wallet(trx="1")
    orders = [_order(target, f"onchain-{secrets.token_hex(4)}:b0", energy_amount=131_000)]
    assert run_dag(dags.dag, orders=orders)["__run__"] == "success"
    control.post(f"/addresses/{target}/energy", {"used": 131_000})
    again = run_dag(dags.dag, orders=orders)
    assert [r["reused"] for r in again["buy"][2]] == [True]
    assert _placed(control, target) == [131_000]


def test_a_node_that_cannot_show_a_reused_orders_energy_fails_the_try_retried(
        control, run_dag, journal, node_conn, monkeypatch):
    """The payout room's ``ChainUnread`` (nothing bought by the attempt) is the try's
    failure, retried by Airflow: the next try reads the chain and reuses the order."""
    target = control.wallet(trx="1")
    orders = [_order(target, f"onchain-{secrets.token_hex(4)}:b0", energy_amount=131_000)]
    assert run_dag(dags.dag, orders=orders, node_conn_id=node_conn)["__run__"] == "success"
    real, failed = TronNodeHook.get_transaction_info, []

    def once_down(self, tx_hash, **kwargs):  # dag.test() runs the task in this process
        if not failed:
            failed.append(tx_hash)
            raise NodeError("node unreachable")
        return real(self, tx_hash, **kwargs)

    monkeypatch.setattr(TronNodeHook, "get_transaction_info", once_down)
    out = run_dag(dags.dag, orders=orders, node_conn_id=node_conn)
    assert out["__run__"] == "success", out
    assert out["buy"][:2] == ("success", 2) and len(failed) == 1
    assert [r["reused"] for r in out["buy"][2]] == [True]
    assert _placed(control, target) == [131_000]  # nothing bought by the failed try
