"""A small, known history in the stores the Energy page reads, and the figures it must show.

Written through the stores' own methods (a purchase claimed, then placed with a result
shaped as ``purchase.run`` records it; payouts claimed, signed, judged with receipts shaped
as ``payout.receipts`` writes them; callbacks recorded by the callback store), then moved
to known days: a journal's times are its clock's, so the rows' times are set afterwards,
as if the history had happened in March 2026. ``EXPECTED`` holds what the page must say.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from airflow_provider_tronenergy.callbacks.verify import parse_transfer
from airflow_provider_tronenergy.payout.attempts import Claim, Signed
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.purchase_journal.store import PurchaseJournal
from airflow_provider_tronenergy.ui.batches import BatchEvent
from airflow_provider_tronenergy.ui.data import Stores
from airflow_provider_tronenergy.ui.period import Period
from support.callbacks import callback_body, transfer_data
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback

FIRST = date(2026, 3, 1)
PERIOD = Period(FIRST, date(2026, 3, 3))
SENDER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
TARGETS = [random_address() for _ in range(3)]
DEPOSIT = random_address()
SECRET = "whsec_energy_history"
PREPARATION = "batch_payout_preparation"
SEND_SCOPE = "batch_payout_send/manual__2026-03-01/send_payouts/-1/try1@host:7"


def at(day: int, hour: int = 12, minute: int = 0) -> int:
    """ms since the epoch, UTC, on March ``day`` 2026."""
    return int(datetime(2026, 3, day, hour, minute, tzinfo=timezone.utc).timestamp() * 1000)


@dataclass(frozen=True)
class Expected:
    """What the page must show for :data:`PERIOD` (TRX as exact decimal text)."""

    days: list[dict[str, Any]]
    orders_by_state: dict[str, int]
    energy_rented: int
    chain: dict[str, Any]
    waiting_purchase: str
    waiting_payout: str
    stored_per_day: list[int]
    duplicates: int
    conflicts: int
    consumers: dict[str, int]


def _result(energy: int, cost: str, *, activated: bool = False) -> dict[str, Any]:
    burn = Decimal(energy) * Decimal("0.0001")  # 100 sun per energy
    energy_cost = Decimal(cost) - (Decimal("1.1") if activated else 0)
    result: dict[str, Any] = {
        "mode": "smart_buy" if activated else "buy_count", "order_id": "", "status": "pending",
        "tx_hash": "", "energy_amount": energy, "rent_time": "1", "cost": cost,
        "burn_cost": str(burn), "saving": str(burn - energy_cost),
        "burn_price": {"energy_sun": 100, "source": "default"},
        "quote": {"energy": energy, "activation_cost": "1.1" if activated else "0"},
        "reused": False, "dry_run": False}
    if activated:
        result["activated"] = True
    return result


def _purchase(journal: PurchaseJournal, identity: str, sent_at_ms: int,
              scope: str = f"{PREPARATION}/manual__2026-03-01/buy_energy__order_0/-1") -> Any:
    entry = journal.claim(identity, None, scope=scope, explicit_key=True, mode="buy_count",
                          target_address=TARGETS[0],
                          description=f"buy_count for {TARGETS[0]} (1 h)",
                          request={"target_address": TARGETS[0], "count": 1, "rent_time": "1"},
                          rent_hours=Decimal(1))
    e = journal.entries.c
    with journal.engine.begin() as conn:
        conn.execute(journal.entries.update().where(e.id == entry.id)
                     .values(sent_at_ms=sent_at_ms))
    return dataclasses.replace(entry, sent_at=sent_at_ms / 1000)


def seed_purchases(journal: PurchaseJournal) -> None:
    """Six purchases in the period, one before it, one whose outcome is unknown."""
    journal.record_placed(_purchase(journal, "p1", at(1, 9)), "o1", _result(130_000, "5.85"))
    journal.record_placed(_purchase(journal, "p2", at(1, 15)), "o2",
                          _result(131_000, "6.995", activated=True))
    ended = _purchase(journal, "p3", at(2, 8))
    journal.record_placed(ended, "o3", _result(65_000, "2.925"))
    journal.mark_ended(dataclasses.replace(ended, order_id="o3"), "failed")
    journal.record_refused(_purchase(journal, "p4", at(2, 9)), "400 invalid address")
    journal.record_placed(_purchase(journal, "p5", at(3, 23, 59)), "o5",
                          _result(65_000, "2.925"))
    _purchase(journal, "p6", at(3, 1))  # resolved by a person, who knew only the order
    journal.resolve("p6", order_id="o6", by="ops")
    journal.record_placed(_purchase(journal, "p0", at(1) - 86_400_000), "o0",
                          _result(650_000, "29.25"))  # the day before the period
    _purchase(journal, "p7 'unknown'", at(3, 10))  # sending: its outcome is unknown


def _receipt(txid: str, energy: int, burned: int, ok: bool = True) -> dict[str, Any]:
    trx_sun = burned * 100 + 345_000
    return {"txid": txid, "block": 1, "result": "SUCCESS" if ok else "OUT_OF_ENERGY",
            "confirmed_on": "solidified",
            "succeeded": ok, "energy_total": energy, "energy_from_stake": energy - burned,
            "energy_burned": burned, "trx_burned": str(Decimal(trx_sun) / 1_000_000),
            "trx_burned_sun": trx_sun, "bandwidth": 345, "bandwidth_burned_sun": 345_000}


def seed_payouts(payouts: PayoutJournal) -> None:
    """Batch ``b1``: two payouts confirmed, one failed on chain, on March 1."""
    claims = [Claim(identity=f"b1:{row}", after=None, batch_id="b1", row=row, sender=SENDER,
                    recipient=TARGETS[row], token="USDT", units=12_500_000)
              for row in range(3)]
    won, lost = payouts.claim(claims, SEND_SCOPE)
    assert not lost
    won.sort(key=lambda a: a.row)
    signed = [Signed(attempt=a, txid=f"{a.row + 1:064x}", expiration_ms=at(1, 13),
                     ref_block=1, fee_limit_sun=50_000_000,
                     signed_tx={"txID": f"{a.row + 1:064x}"}) for a in won]
    _done, refused = payouts.record_signed(signed)
    assert not refused
    payouts.mark_sent(won)
    payouts.record_outcomes([
        (won[0], True, 100, _receipt(signed[0].txid, 64_285, 0)),
        (won[1], True, 101, _receipt(signed[1].txid, 130_285, 30_000)),
        (won[2], False, 102, _receipt(signed[2].txid, 50_000, 50_000, ok=False))])
    a = payouts.attempts.c
    with payouts.db.engine.begin() as conn:
        conn.execute(payouts.attempts.update().values(created_at_ms=at(1, 12, 30),
                                                      updated_at_ms=at(1, 12, 40)))
        assert conn.execute(sa.select(sa.func.count()).where(a.batch_id == "b1")).scalar() == 3


def _transfer(received_at_ms: int, **data: Any) -> VerifiedTransfer:
    body = callback_body(transfer_data(to=DEPOSIT, token="USDT", **data))
    made = parse_transfer(body, signature=sign_callback(SECRET, body), verified_by="key")
    return dataclasses.replace(made, received_at_ms=received_at_ms)


def seed_callbacks(stores: Stores) -> None:
    """Four stored (three on March 1, one on the 2nd), one redelivery, one conflict; a
    watcher two behind, the ledger never swept (four behind)."""
    store = stores.callbacks
    first = [_transfer(at(1, 10, m)) for m in (1, 2, 3)]
    store.record_many(first)
    store.record(_transfer(at(2, 0, 5)))
    store.record(dataclasses.replace(first[0], received_at_ms=at(1, 10, 30)))  # a retry
    contradiction = _transfer(at(2, 4), tx_hash=first[1].tx_hash, amount="999",
                              **{"from": first[1].from_address})
    assert store.record(contradiction).conflict == ("amount",)
    store.commit_offset("deposit_watch.watcher", store.max_id() - 2)


def batch_event() -> BatchEvent:
    """Batch ``b1``'s ``payout batch ready`` event: two activations, approved by ``lead``."""
    return BatchEvent.of({
        "batch_id": "b1", "sender": SENDER,
        "recipients": [{"recipient": t, "amount": "12.5"} for t in TARGETS],
        "activations": 2, "activation_cost": "2.2", "energy_bought": 261_000,
        "energy_cost": "11.745", "total_cost": "13.945", "burn_cost_bought": "26.1",
        "saving": "14.355",
        "approval": {"required": True, "approved": True, "by": "lead",
                     "at": "2026-03-01T12:10:00+00:00", "timed_out": False}},
        at(1, 12, 20), PREPARATION, "manual__2026-03-01")


def seed(stores: Stores) -> list[BatchEvent]:
    """The whole history; the batch events the app would read from Airflow."""
    seed_purchases(stores.journal)
    seed_payouts(stores.payouts)
    seed_callbacks(stores)
    return [batch_event()]


EXPECTED = Expected(
    days=[
        {"day": "2026-03-01", "orders": 2, "energy": 261_000, "energy_trx": "11.745",
         "energy_burn_trx": "26.1", "activations": 3, "activation_trx": "3.3",
         "activation_burn_trx": "3.3", "spent_trx": "15.045", "burn_trx": "29.4",
         "saving_trx": "14.355", "without_figures": 0},
        {"day": "2026-03-02", "orders": 0, "energy": 0, "energy_trx": "0",
         "energy_burn_trx": "0", "activations": 0, "activation_trx": "0",
         "activation_burn_trx": "0", "spent_trx": "0", "burn_trx": "0", "saving_trx": "0",
         "without_figures": 0},
        {"day": "2026-03-03", "orders": 2, "energy": 65_000, "energy_trx": "2.925",
         "energy_burn_trx": "6.5", "activations": 0, "activation_trx": "0",
         "activation_burn_trx": "0", "spent_trx": "2.925", "burn_trx": "6.5",
         "saving_trx": "3.575", "without_figures": 1},
    ],
    orders_by_state={"sending": 1, "placed": 4, "refused": 1, "not_placed": 0,
                     "abandoned": 0, "ended": 1},
    energy_rented=326_000,
    chain={"energy_charged": 244_570, "energy_from_stake": 164_570, "energy_burned": 80_000,
           "trx_burned": "9.035", "transactions": 3, "failed_on_chain": 1},
    waiting_purchase="p7 'unknown'",
    waiting_payout="b1:2",
    stored_per_day=[3, 1, 0],
    duplicates=1,
    conflicts=1,
    consumers={"deposit_watch.watcher": 2, "deposit ledger (credited_deposits)": 4},
)
