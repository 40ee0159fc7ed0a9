"""One purchase's life in real Airflow (dag.test() against the sandbox): each value checked once.

A purchase's values are checked where they enter (the client's ``Endpoints``, when
the mode builds its call); the call that spends TRX is the one built then, not a
second call re-checking the same values. The quote's lookups are other endpoints'
calls (the price, the recipient's history), each checking its own argument: a
rent_time the price endpoint does not quote is that endpoint's question, not the
purchase's second check.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import operators_purchase as dags
import pytest

from airflow_provider_tronenergy.client import validation
from airflow_provider_tronenergy.purchase.run import human_line
from tronenergy_protocol.address import random_address

Seen = Counter[tuple[str, str]]


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Seen:
    """Every call of the client's argument checks a purchase's values pass, by field."""
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'journal.db'}")
    seen: Seen = Counter()

    def spy(name: str, key: Any) -> Any:
        real = getattr(validation, name)

        def check(value: Any, *args: Any, **kwargs: Any) -> Any:
            seen[name, key(*args, **kwargs)] += 1
            return real(value, *args, **kwargs)

        return check

    def rule(allowed: Any, *_: Any, **__: Any) -> str:
        return "price" if allowed == validation.PRICE_RENT_TIMES else "purchase"

    monkeypatch.setattr(validation, "address", spy("address", lambda field, **_: field))
    monkeypatch.setattr(validation, "energy_amount", spy("energy_amount", lambda *_: "-"))
    monkeypatch.setattr(validation, "count", spy("count", lambda *_: "-"))
    monkeypatch.setattr(validation, "rent_time", spy("rent_time", rule))
    return seen


def test_a_buy_checks_each_value_once(run_dag, control, checked: Seen) -> None:
    target = control.activated()
    out = run_dag(dags.te_buy, target=target, energy="65000", rent_time="1")
    assert out["buy"][:2] == ("success", 1)
    assert [o["order_id"] for o in control.orders(target)] == [out["buy"][2]["order_id"]]
    assert checked == Counter({
        ("address", "target_address"): 1, ("energy_amount", "-"): 1,
        ("rent_time", "purchase"): 1,
        ("rent_time", "price"): 1,  # the quote: may the price endpoint quote 1 h?
    })


def test_every_mode_checks_each_value_once(run_dag, control, checked: Seen) -> None:
    sender = control.activated()
    out = run_dag(dags.te_modes, sender=sender, new_recipient=random_address(),
                  inactive_recipient=random_address(), count="3")
    assert out["__run__"] == "success"
    assert len(control.orders(sender)) == 3
    assert checked == Counter({
        # auto_buy: from_address, to_address; buy_count: target_address, count;
        # smart_buy: receiver_address, to_address (no from_address: the service's default)
        ("address", "from_address"): 1, ("address", "to_address"): 2,
        ("address", "target_address"): 1, ("count", "-"): 1,
        ("address", "receiver_address"): 1,
        ("rent_time", "purchase"): 3,
        # the quotes: the price endpoint asked for each rent_time (24 h and 0.25 h it does
        # not quote), and smart_buy's recipient looked up (check-address, its own call)
        ("rent_time", "price"): 3, ("address", "address"): 1,
    })


def test_the_purchase_log_line_shows_the_exact_cost() -> None:
    """Issue 25: the line said 23.36 TRX where the report and the event say 23.355."""
    line = human_line({
        "energy_amount": 519_000, "target_address": "TX", "rent_time": "1",
        "order_id": "o1", "cost": "23.355", "burn_cost": "51.9",
        "burn_price": {"energy_sun": 100, "source": "chain"}})
    assert line == ("bought 519,000 energy for TX (1 h): order o1, 23.355 TRX (burning would "
                    "cost 51.9 TRX at 100 sun per energy, the chain's)")
    assert "23.36" not in human_line({"energy_amount": 65_000, "target_address": "TX",
                                      "rent_time": "1", "order_id": "o2", "cost": "23.355"})
