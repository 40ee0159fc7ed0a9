"""One payout round is one pass: counted on the real sandbox node client and journal.

A round reads the payout journal and the head block once, decides each payout's step
once and estimates the batch's energy once before it hands the batch to the wait; a
deferred round's return checks the rows once. The counts come from a counting wrapper
over the real ``TronNodeClient`` (the sandbox node) and the real SQLite journal.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import AirflowException, TaskDeferred
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.payout import rows as rows_module
from airflow_provider_tronenergy.payout import send as send_module
from airflow_provider_tronenergy.payout.journal import PayoutJournal

pytestmark = pytest.mark.usefixtures("node_conn")
ROWS = 6


class CountingNode:
    """The real node client, each call counted by name."""

    def __init__(self, node: Any, calls: Counter[str]) -> None:
        self._node, self._calls = node, calls

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._node, name)
        if not callable(value):
            return value

        def counted(*args: Any, **kwargs: Any) -> Any:
            self._calls[name] += 1
            return value(*args, **kwargs)

        return counted


@pytest.fixture
def calls(monkeypatch) -> Counter[str]:
    """Counts of journal reads (``latest``), ``next_step`` and row checks, wherever called."""
    counts: Counter[str] = Counter()

    def counting(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(PayoutJournal, "latest", counting("journal.latest",
                                                          PayoutJournal.latest))
    for name, real in (("next_step", send_module.next_step), ("payouts", rows_module.payouts)):
        wrapped = counting(name, real)
        for module in list(sys.modules.values()):
            if (getattr(module, "__name__", "").startswith("airflow_provider_tronenergy")
                    and getattr(module, name, None) is real):
                monkeypatch.setattr(module, name, wrapped)
    return counts


@pytest.fixture
def batch(control, monkeypatch, tmp_path) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A funded hot wallet (its key the signer) and a batch of rows prepared with energy."""
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'journal.db'}")
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="200", usdt="10000", staked=2_000_000)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    rows = [{"recipient": control.wallet(trx="1", usdt="1"), "amount": "1.5",
             "payout_id": f"one-pass-{uuid.uuid4().hex[:8]}-{i}", "energy": 65_000}
            for i in range(ROWS)]
    yield sender, rows


def a_try() -> dict[str, Any]:
    ti = SimpleNamespace(dag_id="payouts", run_id=f"r-{uuid.uuid4().hex[:8]}", task_id="send",
                         map_index=-1, try_number=1, xcom_push=lambda **_: None)
    return {"ti": ti, "task_instance": ti}


def test_a_round_reads_the_journal_and_the_head_once_and_estimates_once(batch, calls):
    sender, rows = batch
    op = TronPayoutOperator(task_id="send", payouts=rows, sender_address=sender,
                            batch_id=f"one-pass-{uuid.uuid4().hex[:8]}", deferrable=True)
    node: Counter[str] = Counter()
    op._node_client = CountingNode(TronNodeHook().get_conn(), node)
    context = a_try()
    with pytest.raises(TaskDeferred):
        op.execute(context)
    round_ = {"journal.latest": calls["journal.latest"], "head": node["get_now_block"],
              "next_step": calls["next_step"], "estimates": node["estimate_transfer_energy"],
              "row checks": calls["payouts"]}
    # One journal read, one head to decide on and one to sign under (a fresh reference
    # for the chunk: the pre-flight took time), each step decided once per row, one
    # estimate per kind of row plus a first transfer, rows checked once.
    assert round_ == {"journal.latest": 1, "head": 2, "next_step": ROWS, "estimates": 2,
                      "row checks": 1}, round_
    calls.clear()
    node.clear()
    # The trigger's event (no watch ran here: the transactions are still in flight): the
    # deferred round's return checks the rows once and reads the journal once.
    with pytest.raises(AirflowException, match="still in flight"):
        op.execute_complete(context, {"status": "done"}, round_=1)
    assert (calls["payouts"], calls["journal.latest"]) == (1, 1), calls
