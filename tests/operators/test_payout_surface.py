"""The public surface: TronPayoutOperator's everyday settings in its signature, the
machinery in one PayoutTuning whose defaults are the documented ones and are applied;
no test seam in the payout or keeper signatures."""

from __future__ import annotations

import inspect
import re
from dataclasses import fields
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from airflow_provider_tronenergy.operators import payout as payout_module
from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.payout.rows import PayoutInputError, usdt_only
from airflow_provider_tronenergy.payout.tuning import PayoutTuning

DOCS = Path(__file__).resolve().parents[2] / "docs" / "operators.md"
SENDER = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"


def parameters() -> list[str]:
    return [p.name for p in inspect.signature(TronPayoutOperator.__init__).parameters.values()
            if p.name != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD]


def test_the_signature_holds_at_most_14_parameters_and_no_machinery_or_token():
    names = parameters()
    assert len(names) <= 14, names
    machinery = {f.name for f in fields(PayoutTuning)} | {
        "token", "poll_interval", "confirm_timeout", "ask_timeout_seconds"}
    assert not machinery & set(names)
    assert "tuning" in names and "tuning" in TronPayoutOperator.template_fields
    assert not hasattr(payout_module, "worker_clock")  # the clock is no public seam


def documented_defaults() -> dict[str, str]:
    """PayoutTuning's table in docs/operators.md: field -> default as written."""
    text = DOCS.read_text(encoding="utf-8")
    table = text[text.index("payout.tuning.PayoutTuning"):]
    return dict(re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", table[:table.index("```")],
                           re.MULTILINE))


def test_every_tuning_default_is_documented_as_it_is():
    documented = documented_defaults()
    defaults = PayoutTuning()
    assert set(documented) == {f.name for f in fields(PayoutTuning)}
    for name, text in documented.items():
        value = getattr(defaults, name)
        assert (text == "None" and value is None) or str(value) == text, (name, value, text)


def operator(**kwargs: Any) -> TronPayoutOperator:
    op = TronPayoutOperator(task_id="send", payouts=[{"recipient": SENDER, "amount": "1"}],
                            sender_address=SENDER, batch_id="b-1", **kwargs)
    op._node_client = SimpleNamespace(usdt_contract="TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
    op._tokens = SimpleNamespace(token=usdt_only)  # no chain here: USDT at its 6 decimals
    return op


def test_the_defaults_and_a_rendered_mapping_are_applied_to_what_the_task_signs_with():
    given = operator()._checked({})
    assert given.tuning == PayoutTuning()
    assert (given.settings.expiration_s, given.settings.clock_tolerance_s) == (300, 60)
    assert given.settings.fee_policy.margin == Decimal("0.2")
    tuned = operator(tuning={"expiration_seconds": "120", "clock_tolerance_seconds": 5,
                             "fee_limit_margin": "0.3", "read_recipients": "never",
                             "ask_timeout_seconds": "None"})._checked({})
    assert (tuned.settings.expiration_s, tuned.settings.clock_tolerance_s) == (120, 5)
    assert tuned.settings.fee_policy.margin == Decimal("0.3")
    assert tuned.tuning.read_recipients == "never" and tuned.tuning.ask_timeout_seconds is None


@pytest.mark.parametrize("tuning, message", [
    ({"wallet_wait": 5}, "unknown setting(s) wallet_wait"),
    ({"expiration_seconds": "5"}, "expiration_seconds must be 10 to"),
    ({"poll_interval_seconds": "0"}, "poll_interval_seconds must be above 0"),
    ({"read_recipients": "sometimes"}, "read_recipients must be one of"),
    ({"wallet_lease_seconds": "1.5"}, "wallet_lease_seconds"),
    ("600", "tuning must be a PayoutTuning or a mapping"),
])
def test_a_bad_tuning_fails_before_anything_is_signed_not_retried(tuning, message):
    with pytest.raises(PayoutInputError, match=re.escape(message)):
        operator(tuning=tuning)._checked({})


def test_the_keepers_signature_holds_no_test_seam():
    """A sandbox's short rental hour is a deployment's setting (TRONENERGY_RENTAL_HOUR_SECONDS,
    a custom chain only), not a parameter every DAG could set on mainnet."""
    from airflow_provider_tronenergy.operators.keeper import TronEnergyKeeperOperator

    names = inspect.signature(TronEnergyKeeperOperator.__init__).parameters
    assert "hour_seconds" not in names
    assert "hour_seconds" not in TronEnergyKeeperOperator.template_fields
