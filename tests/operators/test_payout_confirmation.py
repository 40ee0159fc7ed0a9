"""The payout operator's confirmation: solidified blocks by default, the head when told.

A block that is not solidified can still be left by its fork, so by default a transfer is
confirmed only once its block is solidified. A sandbox on a manual clock holds the chain
where the head block has the transfer's receipt and the solidified block does not yet:
the default task waits (its try ends with the transfers in flight, nothing confirmed or
signed again), and confirms once the block is solidified; the journal, the task's result
and each payout say which blocks confirmed them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.payout.journal import PayoutJournal, PayoutState
from airflow_provider_tronenergy.payout.tuning import PayoutTuning
from support.chain import Chain, manual_chain
from support.sandbox import node_connection_json
from tronenergy_sandbox.chain.blocks import SOLIDIFY_BLOCKS


@pytest.fixture(scope="module")
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


@pytest.fixture
def world(chain: Chain, monkeypatch, tmp_path) -> Iterator[SimpleNamespace]:
    """A funded hot wallet (its key the signer), the node on the manual chain, the chain's
    clock the worker's, and a journal of the test's own."""
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", node_connection_json(chain.sandbox))
    monkeypatch.setattr("airflow_provider_tronenergy.operators.payout._worker_clock",
                        chain.clock)
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    chain.control.wallet(sender, trx="200", usdt="100", staked=2_000_000)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    rows = [{"recipient": chain.control.wallet(trx="1", usdt="1"), "amount": "1.5",
             "energy": 65_000} for _ in range(2)]
    journal = PayoutJournal(url)
    yield SimpleNamespace(sender=sender, rows=rows, journal=journal,
                          batch_id=f"confirm-{uuid.uuid4().hex[:8]}")
    journal.close()


def a_try(number: int) -> dict[str, Any]:
    ti = SimpleNamespace(dag_id="payouts", run_id="r1", task_id="send", map_index=-1,
                         try_number=number, xcom_push=lambda **_: None)
    return {"ti": ti, "task_instance": ti}


def operator(world: SimpleNamespace, **settings: Any) -> TronPayoutOperator:
    """The batch's task: a wait of 1 s per try (the manual chain moves only between tries)."""
    return TronPayoutOperator(task_id="send", payouts=world.rows, sender_address=world.sender,
                              batch_id=world.batch_id, deferrable=False,
                              tuning=PayoutTuning(confirm_timeout_seconds=1,
                                                  poll_interval_seconds=Decimal("0.2")),
                              **settings)


def test_by_default_a_receipt_on_the_head_waits_until_its_block_is_solidified(chain, world):
    task = operator(world)
    with pytest.raises(AirflowException, match="still in flight"):
        task.execute(a_try(1))  # signed and sent; no block yet
    chain.blocks(1)  # the head block holds both transfers; the solidified block does not
    txids = [a.txid for a in world.journal.batch(world.batch_id)]
    node = TronNodeHook().get_conn()
    assert all(node.get_transaction_info(t) is not None for t in txids)
    assert all(node.get_transaction_info(t, solidified=True) is None for t in txids)
    with pytest.raises(AirflowException, match="still in flight"):
        task.execute(a_try(2))  # the task waits: nothing confirmed, nothing signed again
    assert {a.state for a in world.journal.batch(world.batch_id)} == {PayoutState.SENT}
    assert [a.txid for a in world.journal.batch(world.batch_id)] == txids
    chain.blocks(SOLIDIFY_BLOCKS)  # now their block is solidified
    result = task.execute(a_try(3))
    assert result["states"] == {"confirmed": 2} and result["confirmation"] == "solidified"
    assert [p["confirmed_on"] for p in result["payouts"]] == ["solidified"] * 2
    assert [p["txid"] for p in result["payouts"]] == txids
    assert len(chain.transactions(owner=world.sender)) == 2


def test_told_to_confirm_on_the_head_it_says_so(chain, world):
    task = operator(world, confirm_solidified=False)
    with pytest.raises(AirflowException, match="still in flight"):
        task.execute(a_try(1))
    chain.blocks(1)
    result = task.execute(a_try(2))
    assert result["states"] == {"confirmed": 2} and result["confirmation"] == "head"
    assert [a.receipt["confirmed_on"] for a in world.journal.batch(world.batch_id)
            if a.receipt] == ["head"] * 2


@pytest.mark.parametrize("value", ["", None])
def test_a_confirm_solidified_that_renders_empty_is_solidified_not_the_head(world, value):
    assert operator(world, confirm_solidified=value)._solidified() is True
    assert operator(world)._solidified() is True
    assert operator(world, confirm_solidified="False")._solidified() is False


def test_a_confirm_solidified_that_is_no_flag_signs_nothing(chain, world):
    with pytest.raises(AirflowFailException, match="confirm_solidified"):
        operator(world, confirm_solidified="Ture").execute(a_try(1))
    assert world.journal.batch(world.batch_id) == []
    assert chain.transactions(owner=world.sender) == []
