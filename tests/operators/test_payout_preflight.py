"""TronPayoutOperator's pre-flight compares what the chain will charge NOW (dag.test()).

Each case was found on the sandbox chain: rows carry their preparation's estimates, and
between preparation and sending USDT's energy factor rose, or recipients were emptied
(an exchange sweeping its deposit addresses), or the fee_limit cap was below a first
transfer, or the free bandwidth paid for one transfer only. Before, the pre-flight
summed the old figures (and bandwidth as one pool): the batch was signed, and the chain
burned TRX with ``max_burn_trx="0"``, ended transfers ``OUT_OF_ENERGY`` or refused one
for bandwidth. Now nothing is signed, and the refusal names the figures.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from payouts import DAGS
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from support.chain import USDT
from support.waiting import wait_until

pytestmark = pytest.mark.usefixtures("node_conn")
HOLDER = 64_285
"""A transfer to a USDT holder at USDT's energy factor 34,000 (the sandbox's default)."""


@pytest.fixture
def journal(tmp_path, monkeypatch) -> Iterator[PayoutJournal]:
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    journal = PayoutJournal(url)
    yield journal
    journal.close()


@pytest.fixture
def node(sandbox) -> Iterator[TronNodeClient]:
    with TronNodeClient(sandbox.root_url, usdt_contract=USDT) as client:
        yield client


def hot_wallet(control, monkeypatch, *, trx: str = "100", staked: int = 2_000_000) -> str:
    """A sender holding 100 USDT, ``trx`` and ``staked`` energy; its key is the signer."""
    key = PrivateKey.random()
    address = key.public_key.to_base58check_address()
    control.wallet(address, trx=trx, usdt="100", staked=staked)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    return address


def sent_from(control, address: str) -> list[dict[str, Any]]:
    return list(control.call("GET", f"/chain/transactions?owner={address}"))


def successes(control, address: str) -> Counter[str]:
    return Counter(t["to"] for t in sent_from(control, address)
                   if t["receipt"]["receipt"].get("result") == "SUCCESS")


def energy_factor(control, node: TronNodeClient, factor: int) -> None:
    """USDT's energy factor from the next block, waited for."""
    control.post("/chain/contract", {"energy_factor": factor})
    wait_until(lambda: (info := node.get_contract_info()) is not None
               and info.energy_factor == factor, timeout=15)


def prepared(rows: list[str], energy: int, amount: str = "2") -> list[dict[str, Any]]:
    return [{"recipient": r, "amount": amount, "energy": energy} for r in rows]


def test_a_raised_energy_factor_is_counted_before_signing_with_max_burn_zero(
        run_dag, control, node, journal, capfd, monkeypatch):
    """Staked energy for the prepared figures exactly; the factor rises before sending.
    Before: signed at the old sum, and the chain burned TRX for the rest (9.35 TRX
    found); now refused, nothing signed. A sender with the energy now is paid, no burn."""
    short = hot_wallet(control, monkeypatch, staked=2 * HOLDER)
    recipients = [control.wallet(trx="1", usdt="1") for _ in range(2)]
    assert node.estimate_transfer_energy(short, recipients[0], 1) == HOLDER
    try:
        energy_factor(control, node, 50_000)
        now = node.estimate_transfer_energy(short, recipients[0], 1)
        assert now is not None and now > HOLDER
        out = run_dag(DAGS["te_payouts"], payouts=prepared(recipients, HOLDER), sender=short,
                      batch_id="factor-short")
        assert out["send"][:2] == ("failed", 1), out
        log = capfd.readouterr().out
        assert f"energy: the batch needs {2 * now:,}, the sender has {2 * HOLDER:,}" in log
        assert sent_from(control, short) == [] and journal.recent() == []
        enough = hot_wallet(control, monkeypatch, staked=2 * now)
        out = run_dag(DAGS["te_payouts"], payouts=prepared(recipients, HOLDER), sender=enough,
                      batch_id="factor-enough")
    finally:
        energy_factor(control, node, 34_000)
    state, _, result = out["send"]
    assert state == "success" and result["states"] == {"confirmed": 2}, out
    assert result["totals"]["energy_burned"] == 0
    assert successes(control, enough) == Counter(recipients)


def test_recipients_emptied_since_preparation_are_counted_as_first_transfers(
        run_dag, control, node, journal, capfd, caplog, monkeypatch):
    """Two holders prepared at 64,285 each, the sender staked for exactly that; one is
    swept to zero before sending (a new slot again: 130,285). Before: signed, and the
    chain burned TRX for the difference (26.4 TRX found for many); now the holders are
    estimated again (the sender's energy would not cover a sweep, and max_burn_trx is 0)
    and the batch is refused, nothing signed."""
    sender = hot_wallet(control, monkeypatch, staked=2 * HOLDER)
    kept, swept = control.wallet(trx="1", usdt="1"), control.wallet(trx="1", usdt="1")
    control.post(f"/addresses/{swept}/balances", {"usdt": "0"})
    first = node.estimate_transfer_energy(sender, swept, 1)
    assert first is not None and first > HOLDER
    out = run_dag(DAGS["te_payouts"], payouts=prepared([kept, swept], HOLDER), sender=sender,
                  batch_id="swept-short")
    assert out["send"][:2] == ("failed", 1), out
    log = capfd.readouterr().out
    assert f"energy: the batch needs {HOLDER + first:,}, the sender has {2 * HOLDER:,}" in log
    assert "1 recipient(s) counted as holders cost more now" in caplog.text
    assert sent_from(control, sender) == [] and journal.recent() == []


def test_a_fee_limit_cap_below_a_first_transfer_is_refused_before_signing(
        run_dag, control, node, journal, capfd, monkeypatch):
    """max_fee_limit_trx="10" and first-time recipients needing 130,285 energy (13.0285 TRX
    at 100 sun). Before: signed, and both ended OUT_OF_ENERGY, spending the wallet's
    energy and moving nothing; now refused, naming the rows and the figures."""
    sender = hot_wallet(control, monkeypatch)
    recipients = [control.wallet(trx="1") for _ in range(2)]
    first = node.estimate_transfer_energy(sender, recipients[0], 1)
    assert first is not None and first * 100 > 10_000_000
    out = run_dag(DAGS["te_payouts"], payouts=prepared(recipients, first), sender=sender,
                  batch_id="cap-1", max_fee_limit_trx="10")
    assert out["send"][:2] == ("failed", 1), out
    log = capfd.readouterr().out
    assert "fee_limit: 2 transfer(s) need more than max_fee_limit_trx 10 TRX" in log
    assert f"row 0 ({recipients[0]}, {first:,} energy: {Decimal(first) / 10_000} TRX)" in log
    assert sent_from(control, sender) == [] and journal.recent() == []


@pytest.mark.parametrize(("count", "needs"), [(2, "0.35"), (3, "0.7")])
def test_bandwidth_is_charged_per_transaction_not_as_one_pool(
        run_dag, control, journal, capfd, monkeypatch, count, needs):
    """600 free bytes pay for one 350-byte transfer whole, never for part of a second:
    each further one burns all its bytes (java-tron's BandwidthProcessor). Before, 700 -
    600 bytes were counted (0.1 TRX for two): the second transfer was refused for
    bandwidth, re-signed, refused, and left signed."""
    sender = hot_wallet(control, monkeypatch, trx="0.2")
    recipients = [control.wallet(trx="1", usdt="1") for _ in range(count)]
    out = run_dag(DAGS["te_payouts"], payouts=prepared(recipients, HOLDER), sender=sender,
                  batch_id=f"bandwidth-{count}")
    assert out["send"][:2] == ("failed", 1), out
    log = capfd.readouterr().out
    assert f"TRX: burning for energy and bandwidth needs {needs} TRX, the sender has 0.2" in log
    assert (f"{count} transfer(s) of 350 bytes, each paid whole from 0 staked or 600 free "
            f"bytes or burned: {count - 1} burn {needs} TRX") in log
    assert sent_from(control, sender) == [] and journal.recent() == []


def test_bandwidth_that_fits_exactly_is_sent(run_dag, control, journal, monkeypatch):
    """0.35 TRX burns for the second of two transfers: just enough."""
    sender = hot_wallet(control, monkeypatch, trx="0.35")
    recipients = [control.wallet(trx="1", usdt="1") for _ in range(2)]
    out = run_dag(DAGS["te_payouts"], payouts=prepared(recipients, HOLDER), sender=sender,
                  batch_id="bandwidth-fits")
    state, _, result = out["send"]
    assert state == "success" and result["states"] == {"confirmed": 2}, out
    assert successes(control, sender) == Counter(recipients)
