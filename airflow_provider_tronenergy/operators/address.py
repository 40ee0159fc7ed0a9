"""Operators that check and activate addresses, one or a batch at a time."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import AirflowException

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.client import AddressAlreadyActivatedError, AmbiguousPurchaseError
from airflow_provider_tronenergy.fanout import RateGate, failure_report
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.links.explorer import TronEnergyActivationLink, publish
from airflow_provider_tronenergy.money.guard import guard_cost, guard_order, max_order
from airflow_provider_tronenergy.money.quote import ACTIVATION_COST, text, trx
from airflow_provider_tronenergy.operators.batch import (
    Problems,
    TronEnergyAddressBatchOperator,
)
from airflow_provider_tronenergy.templated import as_flag, money_given
from tronenergy_protocol.energy import ENERGY_PER_TRANSFER, transfer_energy

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context


class TronEnergyCheckAddressOperator(TronEnergyAddressBatchOperator):
    """Check one address or a batch: activated? first-time recipient? what a transfer costs.

    Returns one dict per distinct address in first-occurrence order (a single
    dict for a single address), each with ``transfer_energy`` (65,000 or 131,000).
    """

    def execute(self, context: Context) -> dict[str, Any] | list[dict[str, Any]]:
        addresses, single = self.prepare()
        client = self.client()
        gate = RateGate()

        def check(address: str) -> dict[str, Any]:
            result = gate.call(lambda: client.check_address(address))
            return {**result.to_dict(), "transfer_energy": transfer_energy(result.transfer_count)}

        results, failures = self.per_address(addresses, check, "checked")
        ok = [r for r in results if "error" not in r]
        self.log.info(
            "checked %d addresses: %d activated, %d need activation, %d first-time recipients",
            len(ok), sum(r["is_activated"] for r in ok), sum(r["need_activate"] for r in ok),
            sum(r["transfer_energy"] > ENERGY_PER_TRANSFER for r in ok))
        return self.finish(results, failures, single, "checked")


class TronEnergyActivateAddressOperator(TronEnergyAddressBatchOperator):
    """Activate one address or a batch; already active addresses are skipped at no cost.

    Checking first makes the task safe to retry: an activation that went through
    in an earlier try shows up as active and is not paid for again. Nothing is
    activated unless every address was checked: the balance guard must see the whole
    batch, or it could be passed one retry at a time.

    :param max_order_trx: refuse, before activating anything, when one activation's cost
        is higher. None (the default): no limit on one activation (its cost is the
        service's fixed activation price; the balance bounds the batch).
    """

    template_fields: Sequence[str] = ("addresses", "tronenergy_conn_id", "max_order_trx",
                                      "dry_run_mode")
    operator_extra_links = (TronEnergyActivationLink(),)

    def __init__(self, *, max_order_trx: Decimal | int | str | None = None,
                 check_balance: bool = True, dry_run: bool | str = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        money_given(max_order_trx=max_order_trx)
        self.max_order_trx = max_order_trx
        self.check_balance = check_balance
        # BaseOperator.dry_run() is a method; the flag lives beside it.
        self.dry_run_mode = dry_run

    def execute(self, context: Context) -> dict[str, Any] | list[dict[str, Any]]:
        problems = Problems()
        ceiling = problems.read(lambda: max_order(self.max_order_trx), None)
        check_balance = problems.read(lambda: as_flag(self.check_balance, "check_balance"), True)
        dry_run = problems.read(lambda: as_flag(self.dry_run_mode, "dry_run"), True)
        addresses, single = self.prepare(problems)
        client = self.client()
        gate = RateGate()

        def check(address: str) -> dict[str, Any]:
            return gate.call(lambda: client.check_address(address)).to_dict()

        checked, failures = self.per_address(addresses, check, "checked")
        if failures:  # the guards below must see every address that may need paying for
            raise AirflowException(failure_report("checked", len(addresses), failures)
                                   + "\nnothing activated")
        needed = [r["address"] for r in checked if r["need_activate"]]
        total = ACTIVATION_COST * len(needed)
        self.log.info("%d of %d addresses need activation (%s)", len(needed), len(addresses),
                      trx(total))
        with as_airflow():
            if needed:
                guard_order(ACTIVATION_COST, limit=ceiling, what="one activation",
                            nothing="nothing activated")
            guard_cost(client, total, what=f"activating {len(needed)} addresses",
                       ceiling=None, check_balance=check_balance, nothing="nothing activated")
        if dry_run:
            return {"dry_run": True, "to_activate": needed, "cost": text(total)}

        def activate(address: str) -> dict[str, Any]:
            try:
                activation = gate.call(lambda: client.activate_address(address))
            except AddressAlreadyActivatedError:
                return {"address": address, "activated": False, "cost": "0"}
            except AmbiguousPurchaseError as exc:
                raise RuntimeError(f"{exc}; a retry of this task checks the address first "
                                   "and will not pay twice") from None
            return {"address": address, "activated": True, "cost": text(activation.cost),
                    "order_id": activation.order_id, "tx_hash": activation.tx_hash}

        activated, activation_failures = self.per_address(needed, activate, "activated")
        made = [r for r in activated if r.get("activated")]
        publish(context, TronEnergyHook(self.tronenergy_conn_id).get_explorer, "activation",
                count=len(made), txids=[r.get("tx_hash") or "" for r in made],
                addresses=[r["address"] for r in made], log=self.log)
        by_address = {r["address"]: r for r in activated if "address" in r}
        # One entry per distinct address, so the costs add up to the orders placed.
        results = [by_address.get(entry["address"])
                   or {"address": entry["address"], "activated": False, "cost": "0"}
                   for entry in checked]
        spent = sum((Decimal(r["cost"]) for r in results if "error" not in r), Decimal(0))
        self.log.info("activated %d addresses for %s; %d were already active",
                      sum(bool(r.get("activated")) for r in results), trx(spent),
                      len(addresses) - len(needed))
        return self.finish(results, activation_failures, single, "activated")
