"""``max_order_trx`` and ``max_spend_trx`` on a batch buy rerun with top-ups and refills:
each order within the one, everything the batch's keys bought in every run within the
other, read from the purchase journal. dag.test() against the sandbox, which is also the
node; orders are counted at the sandbox."""

from __future__ import annotations

import secrets
from typing import Any

import operators_batch_buy as dags


def _buy(target: str, key: str, energy: int) -> list[dict[str, Any]]:
    return [{"target_address": target, "purchase_key": key, "energy_amount": energy}]


def _placed(control: Any, target: str) -> list[int]:
    return [o["energy_amount"] for o in control.orders(target)]


def test_a_rerun_with_topups_and_refills_stops_at_each_limit(control, run_dag, journal,
                                                             node_conn, capfd):
    target = control.wallet(trx="1")
    key = f"spend-{secrets.token_hex(4)}:b0"

    def run(energy: int, **limits: str) -> dict[str, Any]:
        return run_dag(dags.dag, orders=_buy(target, key, energy), node_conn_id=node_conn,
                       **{"max_spend": "10", "max_order": None, **limits})

    assert run(100_000)["buy"][:2] == ("success", 1)  # 4.5 TRX
    # Resized larger: the 40,000 short (1.8 TRX) are over max_order_trx; not bought.
    out = run(140_000, max_order="1.5")
    assert out["buy"][:2] == ("failed", 1)
    assert "max_order_trx 1.5 TRX: buy 40,000 energy" in capfd.readouterr().out
    assert _placed(control, target) == [100_000]
    # Without it, the top-up is bought: 6.3 TRX spent under the key.
    assert run(140_000)["buy"][:2] == ("success", 1)
    assert _placed(control, target) == [100_000, 40_000]
    # The energy is used on chain: refilling the first order (about 4.5 TRX) would take
    # the key past its 10 TRX.
    control.post(f"/addresses/{target}/energy", {"used": 140_000})
    out = run(140_000)
    assert out["buy"][:2] == ("failed", 1)
    assert (f"max_spend_trx 10 TRX: 6.3 TRX already spent under purchase key {key} "
            "(2 orders), this order (buy ") in capfd.readouterr().out
    assert _placed(control, target) == [100_000, 40_000]
    assert journal.latest(f"{key}:refill") is None
