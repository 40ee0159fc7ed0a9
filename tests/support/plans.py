"""Payout batches to plan against the sandbox: the energy plan's tests and the event's.

Rows, check-address results and run params as the example DAG's tasks hand them over.
"""

from __future__ import annotations

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.payout.params import BatchParams
from support.control import Control
from tronenergy_protocol.address import random_address
from tronenergy_sandbox import SandboxServer


def sandbox_client(sandbox: SandboxServer) -> TronEnergyClient:
    """A client of the sandbox's service, with its credentials."""
    return TronEnergyClient(base_url=sandbox.url, api_key=sandbox.api_key,
                            api_secret=sandbox.api_secret)


def small_batch(control: Control) -> tuple[list[dict[str, str]], list[dict[str, object]],
                                          dict[str, str]]:
    """A holder paid twice and a first-time recipient to activate: rows, checks, params."""
    holder, newcomer = control.activated(holder=True), random_address()
    rows = [{"recipient": holder, "amount": "10"}, {"recipient": newcomer, "amount": "20"},
            {"recipient": holder, "amount": "5"}]
    checks = [{"address": holder, "transfer_energy": 65_000, "need_activate": False},
              {"address": newcomer, "transfer_energy": 131_000, "need_activate": True}]
    params = {"sender_address": control.activated(), "rent_time": "1", "max_spend_trx": "100",
              "batch_id": "2026-01"}
    return rows, checks, params


def on_hand_batch(control: Control) -> tuple[list[dict[str, str]], list[dict[str, object]],
                                             dict[str, str], dict[str, object]]:
    """Issue 25's batch: 3 holders (65,000) and 4 first-time recipients (131,000), 719,000
    energy in all, 200,000 of it already on the hot wallet."""
    holders = [control.activated(holder=True) for _ in range(3)]
    newcomers = [random_address() for _ in range(4)]
    rows = [{"recipient": a, "amount": "10"} for a in holders + newcomers]
    checks = ([{"address": a, "transfer_energy": 65_000, "need_activate": False}
               for a in holders]
              + [{"address": a, "transfer_energy": 131_000, "need_activate": False}
                 for a in newcomers])
    params = {"sender_address": control.activated(), "rent_time": "1", "max_spend_trx": "100",
              "batch_id": "issue-25"}
    chain = {"onchain": True, "wallet": {"energy_available": 200_000},
             "energies": {c["address"]: c["transfer_energy"] for c in checks},
             "holder_energy": 65_000}
    return rows, checks, params, chain


def batch_of(params: dict[str, str]) -> BatchParams:
    """The batch settings the preparation operators check from their arguments."""
    return BatchParams.checked(sender_address=params["sender_address"],
                               rent_time=params["rent_time"],
                               max_spend_trx=params["max_spend_trx"],
                               batch_id=params.get("batch_id", ""))
