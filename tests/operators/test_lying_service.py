"""Purchases against a service that lies about prices and purchases (issue 22, items 2 and 8).

Real Airflow (dag.test()), the real sandbox over HTTP, with its ``tamper`` fault
rewriting the answer after the sandbox processed the request. The DAGs retry an
ordinary failure once, so one try means the refusal was final.
"""

from __future__ import annotations

import json

import operators_purchase as dags
import pytest

from airflow_provider_tronenergy.purchase_journal import EntryState
from tronenergy_protocol.address import random_address


@pytest.mark.parametrize("patch", [
    {"data.price_per_10k": "-5"},
    {"data.price_per_10k": "0"},
    {"data.price_per_10k": "1E-400"},
    {"data.price_per_10k": "1e400"},
    {"data.price_per_10k": '"0.4500001"'},  # finer than a sun
    {"data.energy_per_transfer": "-1"},
    {"data.min_energy": "6000000"},  # above max_energy
], ids=lambda patch: "-".join(f"{k}={v}" for k, v in patch.items()))
def test_an_invalid_quote_buys_nothing_and_is_not_retried(run_dag, control, journal, patch):
    target = control.activated()
    control.fault(kind="tamper", path="/energy/price", method="GET", patch=patch)
    out = run_dag(dags.te_guarded, target=target)
    assert out["buy"][:2] == ("failed", 1)
    assert control.orders(target) == []
    assert [e for e in journal.list() if e.target_address == target] == []  # never claimed


@pytest.mark.parametrize("patch", [
    {"data.cost": '"-5"'},
    {"data.cost": "0"},
    {"data.cost": "1e400"},
    {"data.energy_amount": "-65000"},
    {"data.order_id": '""'},
    {"data.order_id": json.dumps("x" * 10_000)},
], ids=lambda patch: "-".join(f"{k}={v[:12]}" for k, v in patch.items()))
def test_an_invalid_purchase_answer_is_an_unknown_outcome(run_dag, control, journal, patch):
    target = control.activated()
    control.fault(kind="tamper", path="/energy/buy", method="POST", patch=patch)
    out = run_dag(dags.te_guarded, target=target)
    assert out["buy"][:2] == ("failed", 1)  # not retried: a retry might buy again
    assert len(control.orders(target)) == 1  # the service did buy
    [entry] = [e for e in journal.list() if e.target_address == target]
    assert entry.state is EntryState.SENDING  # unknown: neither placed nor refused


@pytest.mark.parametrize("count", [str(2**70), "77"])  # 77 x 65,000 > max_energy 5,000,000
def test_a_count_beyond_what_the_service_sells_never_reaches_it(run_dag, control, journal,
                                                                 count):
    target = control.activated()
    control.fault(kind="latency", path="/energy/buy-count", method="POST", latency_ms=0)
    out = run_dag(dags.te_count, target=target, count=count)
    assert out["buy_count"][:2] == ("failed", 1)
    [counter] = control.faults()
    assert counter["fired"] == 0  # no request reached the service
    assert control.orders(target) == []


def test_an_invalid_balance_activates_nothing_and_is_not_retried(run_dag, control):
    address = random_address()  # inactive: its activation would cost 1.1 TRX
    control.fault(kind="tamper", path="/energy/account", method="GET",
                  patch={"data.available_balance": "1e400"})
    out = run_dag(dags.te_activate_guarded, address=address)
    assert out["activate"][:2] == ("failed", 1)
    assert control.orders(address) == []
