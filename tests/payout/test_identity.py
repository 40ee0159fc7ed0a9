"""Which batch a run's purchases belong to (airflow_provider_tronenergy.payout.identity)."""

from __future__ import annotations

from airflow_provider_tronenergy.payout import identity
from tronenergy_protocol.address import random_address


def test_batch_key_names_the_batch_and_its_rows():
    sender, a, b = random_address(), random_address(), random_address()
    rows = [{"recipient": a, "amount": "1"}, {"recipient": b, "amount": "2"}]
    key = identity.batch_key(sender, "2026-01", rows)
    assert key == identity.batch_key(sender, "2026-01", list(rows))
    assert key != identity.batch_key(sender, "2026-01", rows[::-1])
    # The next period's identical payroll is another batch (issue 22).
    assert key != identity.batch_key(sender, "2026-02", rows)
    assert key.startswith(f"payout:{sender}:2026-01:")
