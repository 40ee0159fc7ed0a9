"""Operators that check and activate addresses, one or a batch at a time."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException

from airflow_provider_tronenergy.client import (
    AddressAlreadyActivatedError,
    AmbiguousPurchaseError,
    ValidationError,
)
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.operators.batch import (
    AddressBatchOperator,
    RateGate,
    failure_report,
    normalize_addresses,
)
from airflow_provider_tronenergy.operators.params import as_bool, as_decimal
from airflow_provider_tronenergy.operators.quote import ACTIVATION_COST, text, transfer_energy, trx

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context


class CheckAddressOperator(AddressBatchOperator):
    """Check one address or a batch: activated? first-time recipient? what a transfer costs.

    Returns one dict per address in input order (a single dict for a single
    address), each with ``transfer_energy`` (65,000 or 131,000).
    """

    def execute(self, context: Context) -> dict[str, Any] | list[dict[str, Any]]:
        addresses, single = normalize_addresses(self.addresses)
        client = self.client()
        gate = RateGate()

        def check(address: str) -> dict[str, Any]:
            checks.address(address, "address")
            result = gate.call(lambda: client.check_address(address))
            return {**result.to_dict(), "transfer_energy": transfer_energy(result.transfer_count)}

        results, failures = self.per_address(addresses, check, "checked")
        ok = [r for r in results if "error" not in r]
        self.log.info(
            "checked %d addresses: %d activated, %d need activation, %d first-time recipients",
            len(ok), sum(r["is_activated"] for r in ok), sum(r["need_activate"] for r in ok),
            sum(r["transfer_energy"] > 65_000 for r in ok))
        return self.finish(results, failures, single, "checked")


class ActivateAddressOperator(AddressBatchOperator):
    """Activate one address or a batch; already active addresses are skipped at no cost.

    Checking first makes the task safe to retry: an activation that went through
    in an earlier try shows up as active and is not paid for again.
    """

    template_fields: Sequence[str] = ("addresses", "max_cost_trx", "dry_run_mode")

    def __init__(self, *, max_cost_trx: Decimal | float | int | str | None = None,
                 check_balance: bool = True, dry_run: bool | str = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_cost_trx = max_cost_trx
        self.check_balance = check_balance
        # BaseOperator.dry_run() is a method; the flag lives beside it.
        self.dry_run_mode = dry_run

    def execute(self, context: Context) -> dict[str, Any] | list[dict[str, Any]]:
        addresses, single = normalize_addresses(self.addresses)
        client = self.client()
        gate = RateGate()

        def check(address: str) -> dict[str, Any]:
            checks.address(address, "address")
            return gate.call(lambda: client.check_address(address)).to_dict()

        checked, failures = self.per_address(addresses, check, "checked")
        needed = [r["address"] for r in checked if r.get("need_activate")]
        total = ACTIVATION_COST * len(needed)
        self.log.info("%d of %d addresses need activation (%s)", len(needed), len(addresses),
                      trx(total))
        try:
            max_cost = (None if self.max_cost_trx in (None, "", "None")
                        else as_decimal(self.max_cost_trx, "max_cost_trx"))
        except ValidationError as exc:
            raise AirflowFailException(str(exc)) from None
        if max_cost is not None and total > max_cost:
            raise AirflowFailException(
                f"activating {len(needed)} addresses costs {total} TRX, over max_cost_trx "
                f"{max_cost} TRX; nothing activated")
        if self.check_balance and needed:
            available = client.get_account().available_balance
            if available < total:
                raise AirflowFailException(
                    f"available balance {available} TRX is short by {total - available} TRX "
                    f"for {len(needed)} activations; nothing activated")
        if as_bool(self.dry_run_mode):
            if failures:  # a dry run must not hide addresses that could not be checked
                raise AirflowException(failure_report("checked", len(addresses), failures))
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
        by_address = {r["address"]: r for r in activated if "address" in r}
        results: list[dict[str, Any]] = []
        for entry in checked:
            if "error" in entry:
                results.append(entry)
            elif entry["address"] in by_address:
                results.append(by_address[entry["address"]])
            else:
                results.append({"address": entry["address"], "activated": False, "cost": "0"})
        spent = sum((Decimal(r.get("cost", "0")) for r in results if "error" not in r),
                    Decimal(0))
        self.log.info("activated %d addresses for %s; %d were already active",
                      sum(bool(r.get("activated")) for r in results), trx(spent),
                      len(addresses) - len(needed) - len(failures))
        return self.finish(results, failures + activation_failures, single, "activated")
