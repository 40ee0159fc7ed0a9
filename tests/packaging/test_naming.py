"""One naming rule for the public surface, read from every signature.

The rule (docs/decisions.md, "One naming rule"): durations and intervals of ours end in
``_seconds`` and take a number; money ends in ``_trx`` (or ``_sun``), once, caps are
``max_<scope>_trx``, and a float is refused; concurrency is ``max_concurrency``; request
pacing is ``max_requests_per_second`` / ``max_requests_per_poll``; connections end in
``_conn_id(s)`` and every operator's and sensor's is templated; one name, one type.
Airflow's own inherited names (``poke_interval``, ``timeout``, ``response_timeout``...)
keep Airflow's names and types. Every operator, sensor and trigger class of the package is
found by walking it, not listed by hand.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import fields
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import BaseOperator
from airflow.triggers.base import BaseTrigger

import airflow_provider_tronenergy
from airflow_provider_tronenergy.keeper.policy import KeeperPolicy
from airflow_provider_tronenergy.operators.address import TronEnergyActivateAddressOperator
from airflow_provider_tronenergy.operators.approval import TronEnergyBatchApprovalOperator
from airflow_provider_tronenergy.operators.batch_buy import TronEnergyBatchBuyOperator
from airflow_provider_tronenergy.operators.energy import TronEnergyBuyOperator
from airflow_provider_tronenergy.operators.keeper import TronEnergyKeeperOperator
from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.operators.payout_pipeline import prepare_payout_batch
from airflow_provider_tronenergy.operators.payout_prep import TronPayoutPreflightOperator
from airflow_provider_tronenergy.payout.tuning import PayoutTuning

PACKAGE = "airflow_provider_tronenergy"
DURATION_WORDS = frozenset({"timeout", "interval", "age", "before", "after", "for", "validity",
                            "delay", "tolerance", "lease", "wait", "expiration", "duration",
                            "ttl", "period", "s"})
"""A name ending in one of these (or holding ``timeout``/``interval``) is a duration."""
MONEY_WORDS = frozenset({"trx", "sun", "price", "cost", "spend", "budget", "fee", "reserve",
                         "burn", "cap", "above"})
"""A name holding one of these is money (or a threshold in money)."""
PACING_WORDS = frozenset({"requests", "reads", "budget", "rps"})
PACING_NAMES = frozenset({"max_requests_per_second", "max_requests_per_poll"})


def _package_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(airflow_provider_tronenergy.__path__, f"{PACKAGE}."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        found += [value for value in vars(module).values()
                  if inspect.isclass(value) and value.__module__ == info.name
                  and issubclass(value, (BaseOperator, BaseTrigger))]
    return sorted(found, key=lambda cls: cls.__qualname__)


CLASSES = _package_classes()
OPERATORS = [cls for cls in CLASSES if issubclass(cls, BaseOperator)]
TRIGGERS = [cls for cls in CLASSES if issubclass(cls, BaseTrigger)]


def _params(function: Callable[..., Any]) -> Iterator[inspect.Parameter]:
    for param in inspect.signature(function).parameters.values():
        if param.name != "self" and param.kind not in (param.VAR_KEYWORD,
                                                       param.VAR_POSITIONAL):
            yield param


def airflow_names(cls: type) -> frozenset[str]:
    """The parameters Airflow's own classes in ``cls``'s MRO take: theirs, not ours."""
    return frozenset(param.name for klass in cls.__mro__
                     if not klass.__module__.startswith(PACKAGE) and "__init__" in vars(klass)
                     and klass is not object for param in _params(klass.__init__))


def own_params(cls: type) -> dict[str, str]:
    """Every parameter the package's classes in ``cls``'s MRO add, with its annotation."""
    theirs = airflow_names(cls)
    own: dict[str, str] = {}
    for klass in cls.__mro__:
        if klass.__module__.startswith(PACKAGE) and "__init__" in vars(klass):
            for param in _params(klass.__init__):
                if param.name not in theirs:
                    own.setdefault(param.name, str(param.annotation))
    return own


def name_problems(name: str, annotation: str = "") -> list[str]:
    """What is wrong with one name of ours (and its annotation), by the rule."""
    words = name.split("_")
    problems = []
    if (words[-1] in DURATION_WORDS or {"timeout", "interval"} & set(words)) \
            and words[-1] != "seconds":
        problems.append(f"{name}: a duration ends in _seconds (a number of seconds)")
    if words[-1] == "seconds" and "timedelta" in annotation:
        problems.append(f"{name}: _seconds takes a number, not {annotation}")
    if "budget" in words and words[-1] not in ("trx", "sun"):
        problems.append(f"{name}: a budget says what it counts: max_requests_per_poll "
                        f"(requests) or max_<scope>_trx (money)")
    elif set(words) & MONEY_WORDS and words[-1] != "margin":
        if words[-1] not in ("trx", "sun"):
            problems.append(f"{name}: money ends in _trx (or _sun)")
        elif {"trx", "sun"} & set(words[:-1]):
            problems.append(f"{name}: the unit once, as the suffix")
        elif "max" in words and words[0] != "max":
            problems.append(f"{name}: a cap is max_<scope>_trx")
        if "float" in annotation.replace(" ", "").split("|"):
            problems.append(f"{name}: money is never a float ({annotation})")
    if "concurrency" in words and name != "max_concurrency":
        problems.append(f"{name}: concurrency is max_concurrency")
    if set(words) & PACING_WORDS and "budget" not in words and name not in PACING_NAMES:
        problems.append(f"{name}: request pacing is max_requests_per_second or "
                        f"max_requests_per_poll")
    if ("conn" in words or "connection" in words) and words[-2:] not in (
            ["conn", "id"], ["conn", "ids"]):
        problems.append(f"{name}: a connection parameter ends in _conn_id (or _conn_ids)")
    return problems


def _types(annotation: str) -> frozenset[str]:
    """An annotation's types, optionality aside (an operator that can do without a
    connection takes None where another requires one)."""
    return frozenset(part.strip() for part in annotation.split("|")) - {"None"}


def _one_type_each(owners: dict[str, dict[str, str]]) -> list[str]:
    """Names given two different types (``Any``, an XCom's value, goes with any)."""
    seen: dict[str, dict[frozenset[str], list[str]]] = {}
    for owner, params in owners.items():
        for name, annotation in params.items():
            if "Any" not in _types(annotation):
                seen.setdefault(name, {}).setdefault(_types(annotation), []).append(owner)
    return [f"{name}: " + "; ".join(f"{' | '.join(sorted(types))} in {', '.join(where)}"
                                    for types, where in by_type.items())
            for name, by_type in sorted(seen.items()) if len(by_type) > 1]


def test_the_walk_finds_every_kind():
    """A walk that found nothing would pass every rule below."""
    names = {cls.__name__ for cls in CLASSES}
    assert {"TronEnergyPurchaseOperator", "TronPayoutOperator", "TronEnergyOrderSensor",
            "TronEnergyTransferTrigger", "TronEnergyKeeperTrigger"} <= names, names
    assert len(OPERATORS) >= 20 and len(TRIGGERS) >= 6


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_parameter_of_ours_follows_the_rule(cls: type):
    problems = [problem for name, annotation in own_params(cls).items()
                for problem in name_problems(name, annotation)]
    assert not problems, f"{cls.__name__}: " + "; ".join(problems)


def test_the_payout_pipeline_follows_the_rule():
    problems = [problem for param in _params(prepare_payout_batch)
                for problem in name_problems(param.name, str(param.annotation))]
    assert not problems, problems


@pytest.mark.parametrize("settings", [PayoutTuning, KeeperPolicy],
                         ids=lambda cls: cls.__name__)
def test_the_settings_objects_follow_the_rule(settings: type):
    problems = [problem for field in fields(settings)
                for problem in name_problems(field.name, str(field.type))]
    assert not problems, problems


@pytest.mark.parametrize("cls", OPERATORS, ids=lambda cls: cls.__name__)
def test_every_connection_of_an_operator_or_sensor_is_templated(cls: type):
    connections = [name for name in own_params(cls) if name.endswith(("_conn_id", "_conn_ids"))]
    missing = [name for name in connections if name not in cls.template_fields]
    assert not missing, f"{cls.__name__}: not in template_fields: {missing}"


def test_one_name_one_type_across_operators_and_sensors():
    """What a DAG author writes: one name takes one type wherever it appears."""
    owners = {cls.__name__: own_params(cls) for cls in OPERATORS}
    owners["prepare_payout_batch"] = {param.name: str(param.annotation)
                                      for param in _params(prepare_payout_batch)}
    assert not _one_type_each(owners)


def test_one_name_one_type_across_triggers():
    """Triggers take rendered values (no template text): one type per name among them."""
    assert not _one_type_each({cls.__name__: own_params(cls) for cls in TRIGGERS})


@pytest.mark.parametrize("name", ["poll_interval", "wait_timeout", "ask_timeout", "follow_for",
                                  "renew_before", "clock_tolerance_s", "rewake_after",
                                  "price_cap", "daily_budget", "approval_above",
                                  "fee_limit_max_trx", "trx_reserve_trx", "budget",
                                  "request_budget", "max_reads_per_poll", "concurrency",
                                  "tron_node_conn", "node_connection"])
def test_the_rule_catches_each_kind_of_name_it_forbids(name: str):
    """The checks can fail: each name here broke the rule once."""
    assert name_problems(name)


def test_the_rule_catches_a_float_for_money_and_a_timedelta_for_seconds():
    assert name_problems("max_spend_trx", "Decimal | float | int | str | None")
    assert name_problems("ask_timeout_seconds", "timedelta | None")
    assert not name_problems("max_spend_trx", "Decimal | int | str | None")


ADDRESS = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"
MONEY_AS_FLOAT: list[tuple[str, Callable[[], Any]]] = [
    ("max_spend_trx", lambda: TronEnergyBuyOperator(
        task_id="buy", target_address=ADDRESS, energy_amount=65_000, max_spend_trx=2.5)),
    ("max_order_trx", lambda: TronEnergyActivateAddressOperator(
        task_id="activate", addresses=[ADDRESS], max_order_trx=1.1)),
    ("max_order_trx", lambda: TronEnergyBatchBuyOperator(
        task_id="batch", orders=[], max_spend_trx="10", max_order_trx=0.1)),
    ("approval_above_trx", lambda: TronEnergyBatchApprovalOperator(
        task_id="approve", plan={}, approval_above_trx=0.5)),
    ("max_daily_spend_trx", lambda: TronEnergyKeeperOperator(
        task_id="keep", wallets=[ADDRESS], floor=1, target=2, max_price_per_10k_trx="1",
        max_daily_spend_trx=100.0)),
    ("max_fee_limit_trx", lambda: TronPayoutOperator(
        task_id="pay", payouts=[], sender_address=ADDRESS, max_fee_limit_trx=50.0)),
    ("reserve_trx", lambda: TronPayoutPreflightOperator(
        task_id="preflight", payouts=[], checks=[], sender_address=ADDRESS, reserve_trx=0.3)),
    ("max_spend_trx", lambda: prepare_payout_batch(sender_address=ADDRESS,
                                                   max_spend_trx=100.0)),
]


@pytest.mark.parametrize(("name", "build"), MONEY_AS_FLOAT,
                         ids=[f"{name}-{i}" for i, (name, _) in enumerate(MONEY_AS_FLOAT)])
def test_money_given_as_a_float_is_refused_naming_the_parameter(
        name: str, build: Callable[[], Any]):
    with pytest.raises(ValueError, match=f"^{name}=.*never a float"):
        build()


def test_money_given_exactly_is_taken():
    for value in (Decimal("2.5"), 2, "2.5", None):
        TronEnergyBuyOperator(task_id=f"buy_{type(value).__name__}", target_address=ADDRESS,
                              energy_amount=65_000, max_spend_trx=value)


def test_seconds_reach_airflow_as_its_timedelta():
    """``approval_timeout_seconds`` (ours, a number) becomes the standard provider's
    ``response_timeout`` (Airflow's, a timedelta)."""
    from airflow.sdk import DAG

    with DAG("naming_pipeline", schedule=None) as dag:
        prepare_payout_batch(sender_address=ADDRESS, max_spend_trx="10",
                             approval_timeout_seconds=90)
    assert dag.get_task("approve_batch").response_timeout == timedelta(seconds=90)
