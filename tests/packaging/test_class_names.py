"""One prefix for the classes a DAG or a deployment names, and the names before it still work.

The rule (docs/decisions.md): hooks, operators, sensors, triggers, plugins and clients are
prefixed with the system they talk to: ``TronEnergy`` (the service), ``TronNode`` (a TRON
full node). Older names import with a
DeprecationWarning, and a trigger deferred by an earlier release (its classpath stored
in Airflow's database) is still found by the triggerer.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import pytest
from airflow.plugins_manager import AirflowPlugin
from airflow.providers.common.compat.sdk import BaseHook, BaseOperator
from airflow.triggers.base import BaseTrigger

import airflow_provider_tronenergy
from support.airflow_compat import triggerer_import_string

PACKAGE = "airflow_provider_tronenergy"

# Old name (module where a DAG imported it) -> new name (module where it lives now).
RENAMED = {
    "operators.purchase:EnergyPurchaseOperator": "operators.purchase:TronEnergyPurchaseOperator",
    "operators.energy:EnergyPurchaseOperator": "operators.purchase:TronEnergyPurchaseOperator",
    "operators.energy:BuyEnergyOperator": "operators.energy:TronEnergyBuyOperator",
    "operators.energy:BuyEnergyByCountOperator": "operators.energy:TronEnergyBuyByCountOperator",
    "operators.energy:AutoBuyEnergyOperator": "operators.energy:TronEnergyAutoBuyOperator",
    "operators.energy:SmartBuyEnergyOperator": "operators.energy:TronEnergySmartBuyOperator",
    "operators.energy:ActivateAddressOperator":
        "operators.address:TronEnergyActivateAddressOperator",
    "operators.energy:CheckAddressOperator": "operators.address:TronEnergyCheckAddressOperator",
    "operators.address:ActivateAddressOperator":
        "operators.address:TronEnergyActivateAddressOperator",
    "operators.address:CheckAddressOperator": "operators.address:TronEnergyCheckAddressOperator",
    "operators.batch:AddressBatchOperator": "operators.batch:TronEnergyAddressBatchOperator",
    "operators.monitor:AddMonitorOperator": "operators.monitor:TronEnergyAddMonitorOperator",
    "operators.monitor:RemoveMonitorOperator": "operators.monitor:TronEnergyRemoveMonitorOperator",
    "operators.reconcile:ReconcileCallbacksOperator":
        "operators.reconcile:TronEnergyReconcileCallbacksOperator",
    "sensors.order:EnergyOrderSensor": "sensors.order:TronEnergyOrderSensor",
    "sensors.transfer:TronTransferSensor": "sensors.transfer:TronEnergyTransferSensor",
    "triggers.order:EnergyOrderTrigger": "triggers.order:TronEnergyOrderTrigger",
    "triggers.transfer:TronTransferTrigger": "triggers.transfer:TronEnergyTransferTrigger",
    "triggers.transfer:TronTransferWatchTrigger":
        "triggers.transfer:TronEnergyTransferWatchTrigger",
    "client:AsyncTronEnergyClient": "client.aio:TronEnergyAsyncClient",
    "client.aio:AsyncTronEnergyClient": "client.aio:TronEnergyAsyncClient",
}

import_string = triggerer_import_string()
NAMED_BY_USERS = (BaseHook, BaseOperator, BaseTrigger, AirflowPlugin)


def _resolve(where: str) -> tuple[object, str]:
    module, _, name = where.partition(":")
    return importlib.import_module(f"{PACKAGE}.{module}"), name


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
    assert [cls.__qualname__ for cls in named
            if not cls.__name__.startswith(("TronEnergy", "TronNode"))] == []
    assert {"TronNodeHook", "TronNodeClient"} <= {cls.__name__ for cls in named}


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED.items()))
def test_a_name_before_the_prefix_still_imports_with_a_warning(old, new):
    old_module, old_name = _resolve(old)
    new_module, new_name = _resolve(new)
    with pytest.warns(DeprecationWarning, match=rf"{old_name} moved to .*\.{new_name};"):
        value = getattr(old_module, old_name)
    assert value is getattr(new_module, new_name)


def test_from_import_of_an_old_name_works():
    with pytest.warns(DeprecationWarning, match="TronEnergyOrderSensor"):
        from airflow_provider_tronenergy.sensors.order import (
            EnergyOrderSensor,
        )
    assert EnergyOrderSensor.__name__ == "TronEnergyOrderSensor"


@pytest.mark.parametrize("classpath", [
    f"{PACKAGE}.triggers.order.EnergyOrderTrigger",
    f"{PACKAGE}.triggers.transfer.TronTransferTrigger",
    f"{PACKAGE}.triggers.transfer.TronTransferWatchTrigger",
])
def test_a_trigger_deferred_by_an_earlier_release_is_still_found(classpath):
    """The triggerer resolves a stored classpath with import_string, as Airflow does."""
    with pytest.warns(DeprecationWarning):
        trigger_class = import_string(classpath)
    assert issubclass(trigger_class, BaseTrigger)
    assert trigger_class.__name__ == "TronEnergy" + classpath.rsplit(".", 1)[1].removeprefix(
        "Tron").removeprefix("Energy")


def test_new_trigger_classpaths_resolve_without_warnings():
    from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger

    classpath, kwargs = TronEnergyOrderTrigger(order_id="o-1", poll_interval=1,
                                               end_time=1_800_000_000.0).serialize()
    assert classpath == f"{PACKAGE}.triggers.order.TronEnergyOrderTrigger"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert import_string(classpath)(**kwargs).serialize() == (classpath, kwargs)


def test_an_unknown_name_is_still_an_attribute_error():
    from airflow_provider_tronenergy.operators import energy

    with pytest.raises(AttributeError, match="NoSuchOperator"):
        energy.NoSuchOperator  # noqa: B018
