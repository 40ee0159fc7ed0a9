"""TRX spent renting a mixed batch's energy: on-chain planning vs the plan that ignores the chain.

One sandbox (also the TRON node), two identical hot wallets holding the same staked
energy (an exchange's baseline; by default 400,000), the same mixed batch (holders
and first-time recipients). Each wallet's plan is made and its orders are really
bought at the service; what the account was charged is read back from the
service. Aim (issue 12): on-chain planning spends no more than the energy it is
missing costs, i.e. the ratio is at most (need - on hand) / need (plus the
32,000-energy minimum order), and never more than the plan that ignores the chain.

    .venv/bin/python bench/onchain_planning.py [--holders 20] [--first-time 10]
                                               [--staked 400000]
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
from decimal import Decimal

os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="tronenergy-bench-")

import requests

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.payout import energy_plan, onchain
from airflow_provider_tronenergy.payout.params import BatchParams
from tronenergy_protocol.address import random_address
from tronenergy_protocol.energy import transfer_energy
from tronenergy_sandbox import SandboxConfig, SandboxServer


def _spent(client: TronEnergyClient, plan: dict) -> Decimal:
    before = client.get_account().available_balance
    for order in plan["count_orders"]:
        client.buy_energy_by_count(order["target_address"], order["count"], Decimal("1"))
    for order in plan["buy_orders"]:
        client.buy_energy(order["target_address"], order["energy_amount"], Decimal("1"))
    return before - client.get_account().available_balance  # frozen or spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holders", type=int, default=20)
    parser.add_argument("--first-time", type=int, default=10)
    parser.add_argument("--staked", type=int, default=400_000)
    args = parser.parse_args()
    logging.getLogger("tronenergy.sandbox").setLevel(logging.WARNING)
    with SandboxServer(SandboxConfig(port=0, time_scale=0.001, balance=Decimal("100000"))) as sb:
        control = f"{sb.root_url}/sandbox"

        def post(path: str, body: dict | None = None) -> None:
            requests.post(control + path, json=body, timeout=10).raise_for_status()

        recipients = []
        for i in range(args.holders + args.first_time):
            address = random_address()
            post(f"/addresses/{address}/activate")
            if i < args.holders:
                post(f"/addresses/{address}/holder", {"token": "USDT"})
            recipients.append(address)
        rows = [{"recipient": a, "amount": "25"} for a in recipients]
        with TronEnergyClient(sb.url, sb.api_key, sb.api_secret) as client, \
                TronNodeClient(sb.root_url) as node:
            checks = [{"address": a, "need_activate": False,
                       "transfer_energy": transfer_energy(client.check_address(a).transfer_count)}
                      for a in recipients]
            spent = {}
            for mode in ("chain-blind", "on-chain"):
                wallet = random_address()
                post(f"/addresses/{wallet}/balances", {"trx": "500", "usdt": "100000"})
                post(f"/addresses/{wallet}/energy", {"staked": args.staked})
                batch = BatchParams.checked(sender_address=wallet, rent_time="1",
                                            max_spend_trx="100000", batch_id=f"bench-{mode}")
                chain = (onchain.preflight(node, wallet, rows, checks,  # type: ignore[arg-type]
                                           trx_reserve_sun=0)
                         if mode == "on-chain" else None)
                plan = energy_plan.plan_energy(client, rows, checks, batch, chain)
                spent[mode] = _spent(client, plan)
                print(f"{mode:12} energy needed {plan['total_energy']:>10,}  "
                      f"bought {plan['energy_to_buy']:>10,}  "
                      f"TRX spent {spent[mode]:>10}")
            need = plan["total_energy"]
    ratio = spent["on-chain"] / spent["chain-blind"]
    bound = Decimal(max(need - args.staked, 32_000)) / need
    met = ratio <= bound * Decimal("1.001") and ratio <= 1
    print(f"on-chain / chain-blind TRX spent: {ratio:.3f} (missing share of the need: "
          f"{bound:.3f}); aim {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
