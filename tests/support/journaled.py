"""Payouts of any token in a real payout journal, claimed, signed and judged as the sender
journals them: for the reports and the Energy page read per token."""

from __future__ import annotations

from typing import Any

from airflow_provider_tronenergy.node.models import trx_text
from airflow_provider_tronenergy.payout.journal import Claim, PayoutJournal, Signed
from tronenergy_protocol.address import random_address

SENDER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


def receipt(fee: int, net_fee: int, energy_fee: int | None, energy: int = 0,
            burned: int = 0) -> dict[str, Any]:
    """A receipt as ``receipts.Outcome.to_dict`` journals it (``energy_fee`` None: one
    journaled before the energy's sun was kept)."""
    kept = {"energy_burned_sun": energy_fee} if energy_fee is not None else {}
    return {"result": "SUCCESS", "succeeded": True, "energy_total": energy,
            "energy_from_stake": energy - burned, "energy_burned": burned,
            "trx_burned": trx_text(fee), "trx_burned_sun": fee, "bandwidth": 300,
            "bandwidth_burned_sun": net_fee, **kept}


def journaled(journal: PayoutJournal, rows: list[tuple[str, int, dict[str, Any] | None, int]],
              batch: str = "b") -> list[Any]:
    """Each ``(token, units, receipt, signatures)`` claimed, signed and, with a receipt,
    confirmed; without one it stays sent."""
    claims = [Claim(f"id:{batch}-{i}", None, batch, i, SENDER, random_address(), token, units)
              for i, (token, units, _, _) in enumerate(rows)]
    won, lost = journal.claim(claims, "w1")
    assert not lost
    won.sort(key=lambda a: a.row)
    signed = [Signed(a, f"{a.row + 1:064x}", 10, 1, 40_000_000,
                     {"txID": f"{a.row + 1:064x}", "signature": ["00"] * rows[a.row][3]})
              for a in won]
    journal.record_signed(signed)
    journal.mark_sent(won)
    journal.record_outcomes([(a, True, 100 + a.row, rows[a.row][2]) for a in won
                             if rows[a.row][2] is not None])
    return journal.batch(batch)
