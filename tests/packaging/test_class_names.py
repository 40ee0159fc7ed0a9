"""One prefix for the classes a DAG or a deployment names.

The rule (docs/decisions.md): hooks, operators, sensors, triggers, plugins and clients are
prefixed with the system they talk to: ``TronEnergy`` (the service), ``TronNode`` (a TRON
full node), ``TronSigner`` (the key that signs), ``TronPayout`` (payouts sent on chain).
A trigger's classpath, stored in Airflow's database, resolves in the triggerer.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

from airflow.plugins_manager import AirflowPlugin
from airflow.providers.common.compat.sdk import BaseHook, BaseOperator
from airflow.triggers.base import BaseTrigger

import airflow_provider_tronenergy
from support.airflow_compat import triggerer_import_string

PACKAGE = "airflow_provider_tronenergy"

import_string = triggerer_import_string()
NAMED_BY_USERS = (BaseHook, BaseOperator, BaseTrigger, AirflowPlugin)


def _package_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(airflow_provider_tronenergy.__path__, f"{PACKAGE}."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        found += [value for value in vars(module).values()
                  if inspect.isclass(value) and value.__module__ == info.name]
    return found


def test_every_class_a_dag_or_deployment_names_carries_the_prefix():
    classes = _package_classes()
    named = [cls for cls in classes if issubclass(cls, NAMED_BY_USERS)
             or cls.__name__.endswith("Client")]
    # The walk found the kinds it should: a failing import would make this test vacuous.
    kinds = {base for cls in named for base in NAMED_BY_USERS if issubclass(cls, base)}
    assert kinds == set(NAMED_BY_USERS)
    assert len(named) >= 20
    # The prefix names the system the class talks to: the service, or a TRON full node.
    assert [cls.__qualname__ for cls in named if not cls.__name__.startswith(
        ("TronEnergy", "TronNode", "TronSigner", "TronPayout"))] == []
    assert {"TronNodeHook", "TronNodeClient"} <= {cls.__name__ for cls in named}


def test_new_trigger_classpaths_resolve_without_warnings():
    from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger

    classpath, kwargs = TronEnergyOrderTrigger(order_id="o-1", poll_interval_seconds=1,
                                               end_time=1_800_000_000.0).serialize()
    assert classpath == f"{PACKAGE}.triggers.order.TronEnergyOrderTrigger"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert import_string(classpath)(**kwargs).serialize() == (classpath, kwargs)
