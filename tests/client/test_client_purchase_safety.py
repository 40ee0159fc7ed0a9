"""Money-moving calls under faults: never a duplicate order, every unclear case reported.

Each call gets its own fresh addresses and exactly one injected fault (count=1),
so afterwards the sandbox's order book says, per call, how many times the
service acted on it. A call whose fault let the request be processed must have
exactly one order; a call whose fault answered before processing must have none
(a resend would have found no fault left and bought). Either way a resend shows
up as an extra order, and every such unclear call must raise
AmbiguousPurchaseError rather than a retry or a success.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any

from airflow_provider_tronenergy.client import (
    AmbiguousPurchaseError,
    NoResponseError,
    RateLimitedError,
    RetryPolicy,
    ServerError,
    TronEnergyError,
)
from support.clients import make_async_client, make_client
from support.control import Control
from tronenergy_protocol.address import random_address
from tronenergy_sandbox import SandboxServer

# A generous retry budget: if any of these failures were resent, it would happen.
POLICY = RetryPolicy(max_attempts=5, initial_wait=0.001, max_wait=0.01)
SHORT_TIMEOUT = (5.0, 0.1)
LATENCY_MS = 1000

# name, fault spec, does the service process the request, expected cause of the ambiguity
FAULT_KINDS: list[tuple[str, dict[str, Any], bool, type[TronEnergyError]]] = [
    ("500-before", {"kind": "error", "status": 500}, False, ServerError),
    ("500-after", {"kind": "error", "status": 500, "after_processing": True}, True, ServerError),
    ("503-before", {"kind": "error", "status": 503}, False, ServerError),
    ("503-after", {"kind": "error", "status": 503, "after_processing": True}, True, ServerError),
    ("drop", {"kind": "drop"}, True, NoResponseError),
    ("latency", {"kind": "latency", "latency_ms": LATENCY_MS}, True, NoResponseError),
]
ENDPOINTS = ["buy", "auto_buy", "buy_count", "smart_buy", "activate", "rent"]
PATHS = {"buy": "/energy/buy", "auto_buy": "/energy/auto-buy", "buy_count": "/energy/buy-count",
         "smart_buy": "/energy/smart-buy", "activate": "/energy/activate",
         "rent": "/energy/rent"}


@dataclass
class Plan:
    """One money-moving call: which endpoint, for which address, under which fault."""

    endpoint: str
    target: str  # the order's target_address in the sandbox
    args: tuple[Any, ...]
    processed: bool  # whether the service acts on the (single) request
    outcome: Any = None


def plan_call(control: Control, endpoint: str, processed: bool) -> Plan:
    target = random_address()
    if endpoint == "activate":
        return Plan(endpoint, target, (target,), processed)
    control.activated(target)
    if endpoint in ("auto_buy", "smart_buy"):
        return Plan(endpoint, target, (target, random_address()), processed)
    return Plan(endpoint, target, (target,), processed)


def invoke(api: Any, plan: Plan) -> Any:
    if plan.endpoint == "buy":
        return api.buy_energy(*plan.args, 32000, 0.25)
    if plan.endpoint == "auto_buy":
        return api.auto_buy_energy(*plan.args)
    if plan.endpoint == "buy_count":
        return api.buy_energy_by_count(*plan.args, 1)
    if plan.endpoint == "smart_buy":
        return api.smart_buy_energy(*plan.args, rent_time=24)
    if plan.endpoint == "activate":
        return api.activate_address(*plan.args)
    return api.request("POST", "/energy/rent", json={"target_address": plan.args[0]})


def check_outcomes(control: Control, plans: list[Plan], orders_before: int) -> None:
    orders = control.orders()
    planned = {plan.target for plan in plans}
    per_target = Counter(o["target_address"] for o in orders if o["target_address"] in planned)
    duplicates = {t: n for t, n in per_target.items() if n > 1}
    assert duplicates == {}, f"duplicate orders: {duplicates}"
    for plan in plans:
        expected = 1 if plan.processed else 0
        assert per_target[plan.target] == expected, (plan.endpoint, plan.outcome)
    reached_and_processed = sum(plan.processed for plan in plans)
    assert len(orders) - orders_before == reached_and_processed
    assert control.faults() == []  # every injected fault fired exactly once


def assert_ambiguous(plan: Plan, cause: type[TronEnergyError]) -> None:
    error = plan.outcome
    assert isinstance(error, AmbiguousPurchaseError), (plan.endpoint, error)
    assert isinstance(error.cause, cause), (plan.endpoint, error.cause)
    assert error.target == plan.target
    assert error.endpoint == f"POST /v1{PATHS[plan.endpoint]}"
    assert error.time.tzinfo is not None
    assert "not resent" in str(error)


def test_faulted_purchases_never_duplicate_sync(sandbox: SandboxServer,
                                                control: Control) -> None:
    orders_before = len(control.orders())
    client = make_client(sandbox, retry=POLICY)
    impatient = make_client(sandbox, retry=POLICY, timeout=SHORT_TIMEOUT)
    plans: list[Plan] = []
    causes: list[type[TronEnergyError]] = []
    combos = itertools.product(range(6), FAULT_KINDS, ENDPOINTS)  # 6 x 6 x 6 = 216 calls
    try:
        for _, (name, spec, processed, cause), endpoint in combos:
            plan = plan_call(control, endpoint, processed)
            control.fault(path=PATHS[endpoint], method="POST", count=1, **spec)
            api = impatient if name == "latency" else client
            try:
                plan.outcome = invoke(api, plan)
            except TronEnergyError as error:
                plan.outcome = error
            plans.append(plan)
            causes.append(cause)
    finally:
        client.close()
        impatient.close()
    assert len(plans) >= 200
    for plan, cause in zip(plans, causes, strict=True):
        assert_ambiguous(plan, cause)
    check_outcomes(control, plans, orders_before)


def test_faulted_purchases_never_duplicate_async(sandbox: SandboxServer,
                                                 control: Control) -> None:
    orders_before = len(control.orders())
    plans: list[Plan] = []
    causes: list[type[TronEnergyError]] = []

    async def run_all() -> None:
        async with make_async_client(sandbox, retry=POLICY) as client, \
                make_async_client(sandbox, retry=POLICY, timeout=SHORT_TIMEOUT) as impatient:
            for (name, spec, processed, cause), endpoint in itertools.product(FAULT_KINDS,
                                                                              ENDPOINTS):
                plan = plan_call(control, endpoint, processed)
                control.fault(path=PATHS[endpoint], method="POST", count=1, **spec)
                api = impatient if name == "latency" else client
                try:
                    plan.outcome = await _await(invoke(api, plan))
                except TronEnergyError as error:
                    plan.outcome = error
                plans.append(plan)
                causes.append(cause)

    asyncio.run(run_all())
    assert len(plans) == 36
    for plan, cause in zip(plans, causes, strict=True):
        assert_ambiguous(plan, cause)
    check_outcomes(control, plans, orders_before)


async def _await(value: Any) -> Any:
    return await value


def test_rate_limited_and_clean_purchases(sandbox: SandboxServer, control: Control) -> None:
    """A 429 is a definite refusal: raised as such, not resent, nothing bought."""
    orders_before = len(control.orders())
    plans: list[Plan] = []
    with make_client(sandbox, retry=POLICY) as client:
        for endpoint in ENDPOINTS:
            limited = plan_call(control, endpoint, processed=False)
            control.fault(kind="rate_limit", retry_after=0, path=PATHS[endpoint],
                          method="POST", count=1)
            try:
                invoke(client, limited)
            except TronEnergyError as error:
                limited.outcome = error
            assert isinstance(limited.outcome, RateLimitedError), limited.outcome
            clean = plan_call(control, endpoint, processed=True)
            clean.outcome = invoke(client, clean)
            plans += [limited, clean]
    check_outcomes(control, plans, orders_before)
