"""The money guards, with the real client reading a balance from a service on a socket.

The service is a recording server (``support.hostile_server``), so each test also shows
whether the balance was read at all: a refusal on the ceiling must cost no call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest

from airflow_provider_tronenergy.client import (
    RetryPolicy,
    ServerError,
    TronEnergyClient,
    UnexpectedResponseError,
    ValidationError,
)
from airflow_provider_tronenergy.money.guard import (
    SpendRefused,
    Spent,
    guard_cost,
    guard_order,
    guard_spend,
    max_order,
    max_spend,
    trusted_answers,
)
from airflow_provider_tronenergy.node.models import USDT_MAINNET
from support.clients import API_KEY, API_SECRET
from support.hostile_server import HostileServer, answer

WHAT = "buy 65,000 energy for TX (1 h) at 2.925 TRX"


def account(available: Any, balance: Any = 1000) -> dict[str, Any]:
    return {"success": True, "code": 10000, "message": "",
            "data": {"user_id": 1, "username": "a@b.c", "balance": balance,
                     "available_balance": available, "frozen_amount": 0,
                     "pending_orders_count": 0, "recharge_address": USDT_MAINNET}}


@contextmanager
def service(status: int, body: Any) -> Iterator[tuple[HostileServer, TronEnergyClient]]:
    """A service that answers every request with ``body``, and a real client to it."""
    with HostileServer(answer(status, body)) as server:
        client = TronEnergyClient(f"{server.root}/v1", API_KEY, API_SECRET,
                                  retry=RetryPolicy(max_attempts=1))
        try:
            yield server, client
        finally:
            client.close()


@pytest.mark.parametrize("unset", [None, "", "None", "  None  ", "   "])
def test_an_unset_max_order_is_no_ceiling(unset: Any):
    assert max_order(unset) is None


@pytest.mark.parametrize("none", [None, "None", "  None  "])
def test_max_spend_none_is_a_written_out_choice(none: Any):
    assert max_spend(none) is None


@pytest.mark.parametrize("empty", ["", "   "])
def test_an_empty_max_spend_is_refused_not_read_as_no_limit(empty: str):
    """A template naming a param that is not there renders empty: the cap must not lift."""
    with pytest.raises(ValidationError, match=r"max_spend_trx.*None for no limit"):
        max_spend(empty)


@pytest.mark.parametrize(("given", "ceiling"), [
    ("12.5", Decimal("12.5")), (3, Decimal(3)), (" 0.000001 ", Decimal("0.000001")),
    (Decimal("7.10"), Decimal("7.10")), ("0", Decimal(0)),
])
def test_the_limits_are_exact_trx(given: Any, ceiling: Decimal):
    for read in (max_order, max_spend):
        assert read(given) == ceiling
        assert isinstance(read(given), Decimal)


@pytest.mark.parametrize("bad", ["-1", "ten", "1e400", "١٠"])
def test_a_bad_limit_is_refused_naming_the_field(bad: str):
    with pytest.raises(ValidationError, match="max_order_trx"):
        max_order(bad)
    with pytest.raises(ValidationError, match="max_spend_trx"):
        max_spend(bad)


def test_a_spend_past_max_spend_names_the_limit_and_what_was_spent():
    spent = Spent(total=Decimal("87.5"), orders=3)
    guard_spend(spent, Decimal("12.5"), limit=Decimal(100), key="purchase key k",
                what="this order")  # exactly at the limit: passes
    with pytest.raises(SpendRefused) as refused:
        guard_spend(spent, Decimal("15"), limit=Decimal(100), key="purchase key k",
                    what="this order")
    assert str(refused.value) == (
        "max_spend_trx 100 TRX: 87.5 TRX already spent under purchase key k (3 orders), "
        "this order would cost 15 TRX; nothing bought")


def test_a_spend_of_unknown_cost_fails_the_limit_closed():
    spent = Spent(total=Decimal(0), orders=1, unpriced=("k attempt 1, sending",))
    with pytest.raises(SpendRefused, match=r"cost the journal does not hold \(k attempt 1"):
        guard_spend(spent, Decimal(1), limit=Decimal(100), key="purchase key k",
                    what="this order")


def test_one_order_past_max_order_is_refused():
    guard_order(Decimal("1.1"), limit=Decimal("1.1"), what="one activation")
    with pytest.raises(SpendRefused) as refused:
        guard_order(Decimal("1.1"), limit=Decimal(1), what="one activation",
                    nothing="nothing activated")
    assert str(refused.value) == ("max_order_trx 1 TRX: one activation would cost 1.1 TRX; "
                                  "nothing activated")


def test_over_the_ceiling_is_refused_before_any_call():
    with service(200, account(1000)) as (server, client):
        with pytest.raises(SpendRefused) as refused:
            guard_cost(client, Decimal("2.925"), what=WHAT, ceiling=Decimal("2.924999"),
                       check_balance=True)
        assert server.received == []
    assert str(refused.value) == (f"max_order_trx 2.924999 TRX: {WHAT} would cost 2.925 TRX; "
                                  "nothing bought")


def test_at_the_ceiling_and_within_the_balance_passes_and_tells_the_balance():
    with service(200, account("2.925")) as (server, client):
        available = guard_cost(client, Decimal("2.925"), what=WHAT, ceiling=Decimal("2.925"),
                               check_balance=True)
        assert [seen.path for seen in server.received] == ["/v1/energy/account"]
    assert available == Decimal("2.925") and isinstance(available, Decimal)


def test_a_short_balance_is_refused_saying_by_how_much():
    with (service(200, account("2.924999")) as (_, client),
          pytest.raises(SpendRefused) as refused):
        guard_cost(client, Decimal("2.925"), what=WHAT, ceiling=None, check_balance=True,
                   nothing="nothing activated")
    assert str(refused.value) == ("available balance 2.924999 TRX is short by 0.000001 TRX "
                                  f"for {WHAT}; nothing activated")


@pytest.mark.parametrize(("total", "check_balance"), [
    (Decimal("2.925"), False),  # told not to look
    (Decimal(0), True),  # nothing to pay: no balance needed
])
def test_the_balance_is_read_only_when_something_is_to_be_paid(total: Decimal,
                                                               check_balance: bool):
    with service(200, account(0)) as (server, client):
        assert guard_cost(client, total, what=WHAT, ceiling=Decimal(10),
                          check_balance=check_balance) is None
        assert server.received == []


def test_a_balance_out_of_range_fails_for_good():
    """A negative balance is the service's answer, not a passing fault: no retry."""
    with (service(200, account("-5")) as (_, client),
          pytest.raises(SpendRefused) as refused):
        guard_cost(client, Decimal("2.925"), what=WHAT, ceiling=None, check_balance=True,
                   nothing="no payout sent")
    message = str(refused.value)
    assert message.startswith(f"{WHAT}: the service's answer cannot be trusted (")
    assert "available_balance" in message and message.endswith("; no payout sent")
    assert refused.value.__cause__ is None and refused.value.__suppress_context__
    assert API_KEY not in message and API_SECRET not in message


def test_trusted_answers_turns_only_an_untrusted_answer_into_a_final_failure():
    with pytest.raises(SpendRefused, match=r"^quote: the service's answer cannot be "
                       r"trusted \(.*bad figure.*\); nothing bought$"), trusted_answers("quote"):
        raise UnexpectedResponseError("bad figure")
    with trusted_answers("quote"):
        pass  # nothing raised: nothing to say


def test_a_passing_fault_stays_retryable():
    """A 5xx may pass: it must reach Airflow's retries as it is, not as a final failure."""
    with service(503, {"success": False, "code": 50000, "message": "busy", "data": None}) \
            as (_, client):
        with pytest.raises(ServerError), trusted_answers(WHAT):
            client.get_account()
        with pytest.raises(ServerError):
            guard_cost(client, Decimal(1), what=WHAT, ceiling=None, check_balance=True)
