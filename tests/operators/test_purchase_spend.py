"""``max_spend_trx`` on a purchase operator: what its key spent in every try and run, as the
purchase journal holds it, and this purchase on top. dag.test() against the sandbox;
orders are counted at the sandbox."""

from __future__ import annotations

import secrets

import operators_purchase as dags


def test_reruns_after_placed_purchases_stop_at_max_spend(run_dag, control, capfd):
    target, key = control.activated(), f"spend-{secrets.token_hex(4)}"
    for _ in range(2):  # 65,000 energy at 2.925 TRX each: 5.85 of the 6
        out = run_dag(dags.te_buy_spend, target=target, key=key, max_spend="6")
        assert out["buy"][:2] == ("success", 1), out
    refused = run_dag(dags.te_buy_spend, target=target, key=key, max_spend="6")
    assert refused["buy"][:2] == ("failed", 1)  # not retried: a retry cannot change it
    assert len(control.orders(target)) == 2
    assert (f"max_spend_trx 6 TRX: 5.85 TRX already spent under purchase key {key} "
            "(2 orders), this order (buy 65,000 energy") in capfd.readouterr().out


def test_a_rebuy_retry_counts_the_unknown_outcome_as_spent(run_dag, control, capfd):
    """The first try's answer is lost (it did buy): on_ambiguous='rebuy' lets the retry buy
    again, but the unknown purchase counts at its quote, and 2 x 2.925 is over 5."""
    target, key = control.activated(), f"spend-{secrets.token_hex(4)}"
    control.fault(kind="drop", path="/energy/buy", count=1)
    out = run_dag(dags.te_buy_spend, target=target, key=key, max_spend="5")
    assert out["buy"][:2] == ("failed", 2)
    assert len(control.orders(target)) == 1  # the dropped request did buy; nothing more
    assert (f"max_spend_trx 5 TRX: 2.925 TRX already spent under purchase key {key} "
            "(1 order)") in capfd.readouterr().out
