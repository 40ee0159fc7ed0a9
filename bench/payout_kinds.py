"""The kinds of payout ``payout_send.py`` sends (USDT, a second TRC-20 token, TRX): each
batch prepared before the timed part (:func:`prepare`) and its plan checked after.

Each kind has its recipients (70% that already hold it, 30% that do not: first-time USDT
or token recipients are activated accounts holding none; TRX "holders" are accounts that
exist, most holding 1 TRX and ``TRX_EMPTY_SHARE`` % of all recipients holding none, as an
account may; first-time TRX recipients have no account yet, so the transfer creates it), its
amounts (exact in its decimals) and what its
plan is checked against on chain:

* **USDT**: the energy the example DAG's plan rents (``plan_energy``), against the energy
  the receipts say the chain charged.
* **A second TRC-20**, one of the sandbox's own tokens (``POST /sandbox/chain/tokens``: 18
  decimals, energy factor 10,000 where USDT's is 34,000): the preparation plans USDT only,
  so its rows are planned here with the send path's own estimates through the node bound to
  the contract (``payout.funds.estimate_energy`` with ``TronNodeClient.for_token``: one per
  recipient, as the preparation asks per recipient), and that energy is rented through the
  service (``onchain.shortfall_orders``, one ``buy_energy`` per order). Planned: the rows'
  energy; charged: the receipts'.
* **TRX**: no energy; planned is the TRX the operator's pre-flight counts for the TRX
  payouts beyond their amounts (``Cleared.trx``, ``payout.trx.plan_trx``: bandwidth, and
  the fees of the accounts the transfers create), charged is the receipts' fees; the
  amounts on chain must equal the rows' and the plan's.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.tokens import Token, TokenBook
from airflow_provider_tronenergy.node.trx_costs import TrxPlan
from airflow_provider_tronenergy.payout import energy_plan, onchain, sheet
from airflow_provider_tronenergy.payout.funds import estimate_energy, transfer_energy
from airflow_provider_tronenergy.payout.onchain import shortfall_orders
from airflow_provider_tronenergy.payout.params import BatchParams, ChainParams
from airflow_provider_tronenergy.payout.preflight import Cleared
from airflow_provider_tronenergy.payout.rows import Payout, payouts
from tronenergy_protocol.address import random_address
from tronenergy_protocol.energy import transfer_energy as check_energy

TOKEN_SYMBOL = "BNCH"
TOKEN_DECIMALS = 18
TOKEN_ENERGY_FACTOR = 10_000
"""The second token's dynamic-energy factor: USDT's in the sandbox is 34,000."""
USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
HOLDER_SHARE = 70
"""Percent of recipients that already hold the kind's token (TRX: whose account exists)."""
TRX_EMPTY_SHARE = 10
"""Percent of TRX recipients whose account exists holding no TRX (read one by one with
``getaccount`` even through a multicall: a balance of 0 does not say whether it exists)."""


@dataclass(frozen=True)
class Kind:
    """One kind of payout: how rows name its token, its decimals, its contract."""

    name: str
    """``usdt``, ``token`` or ``trx`` (``--kinds``)."""
    token: str
    """The journal's name of its token: USDT, the contract, TRX."""
    decimals: int
    contract: str | None = None
    symbol: str = ""

    @property
    def label(self) -> str:
        if self.name == "token":
            return f"{self.symbol} ({self.decimals} decimals, contract {self.contract})"
        return self.token

    @property
    def is_trx(self) -> bool:
        return self.name == "trx"

    def row(self, recipient: str, rng: random.Random) -> dict[str, str]:
        """One payout row to ``recipient``: an amount with every decimal the kind has."""
        if self.name == "usdt":
            amount = f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}"
        elif self.is_trx:
            amount = f"{rng.randint(1, 9)}.{rng.randint(0, 999_999):06d}"
        else:
            fraction = rng.randint(0, 10 ** self.decimals - 1)
            amount = f"{rng.randint(1, 999)}.{fraction:0{self.decimals}d}"
        return {"recipient": recipient, "amount": amount,
                **({} if self.name == "usdt" else {"token": self.token})}


def kinds(names: Sequence[str], call: Callable[..., Any], usdt: str) -> list[Kind]:
    """The kinds asked for; the second token deployed on the sandbox's chain first."""
    made = []
    for name in names:
        if name == "usdt":
            made.append(Kind("usdt", "USDT", 6, usdt, "USDT"))
        elif name == "token":
            token = call("POST", "/chain/tokens", {
                "symbol": TOKEN_SYMBOL, "name": "Bench token", "decimals": TOKEN_DECIMALS,
                "energy_factor": TOKEN_ENERGY_FACTOR})
            made.append(Kind("token", token["contract"], TOKEN_DECIMALS, token["contract"],
                             TOKEN_SYMBOL))
        elif name == "trx":
            made.append(Kind("trx", "TRX", 6, None, "TRX"))
        else:
            raise SystemExit(f"--kinds: {name!r} is none of usdt, token, trx")
    return made


def fund(call: Callable[..., Any], kind: Kind, sender: str, size: int) -> None:
    """The hot wallet's TRX (bandwidth; TRX payouts: up to 10 TRX and 1.1 for an account
    created each) and the kind's token, enough for the batch."""
    call("POST", f"/addresses/{sender}/balances",
         {"trx": str(size * (12 if kind.is_trx else 1) + 1_000),
          **({"usdt": str(1_000 * size)} if kind.name == "usdt" else {})})
    if kind.name == "token":
        call("POST", f"/chain/tokens/{kind.contract}/holdings",
             {"address": sender, "units": str(1_000 * size * 10 ** kind.decimals)})


def recipients(call: Callable[..., Any], kind: Kind, size: int,
               rng: random.Random) -> list[tuple[str, str]]:
    """``size`` distinct addresses, ``HOLDER_SHARE`` % of them holders of the kind's token
    (TRX: accounts that exist), the rest first-time (TRX: no account yet)."""
    shares = ["holder"] * (size * HOLDER_SHARE // 100)
    shares += ["first-time"] * (size - len(shares))
    rng.shuffle(shares)
    made = [(random_address(), share) for share in shares]
    empty = {a for a, share in made if share == "holder"} if kind.is_trx else set()
    empty = set(sorted(empty)[:size * TRX_EMPTY_SHARE // 100])

    def seed(item: tuple[str, str]) -> None:
        address, share = item
        if kind.is_trx:
            if share == "holder" and address in empty:
                call("POST", f"/addresses/{address}/activate")
            elif share == "holder":
                call("POST", f"/addresses/{address}/balances", {"trx": "1"})
            return
        call("POST", f"/addresses/{address}/activate")
        if share == "holder" and kind.name == "usdt":  # a real balance, as on chain
            call("POST", f"/addresses/{address}/balances", {"usdt": "1"})
        elif share == "holder":
            call("POST", f"/chain/tokens/{kind.contract}/holdings",
                 {"address": address, "units": "1"})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(seed, made))
    return made


def wait_for(client: TronEnergyClient, node: TronNodeClient, sender: str,
             bought: Sequence[Any], energy: int) -> tuple[int, Decimal]:
    """``(energy rented, TRX paid)`` once every order succeeded and the wallet has
    ``energy`` on chain."""
    rented, paid = 0, Decimal(0)
    deadline = time.monotonic() + 120
    for purchase in bought:
        while (order := client.get_order(purchase.order_id)).status.value != "success":
            if order.status.is_terminal() or time.monotonic() > deadline:
                raise SystemExit(f"order {purchase.order_id} ended {order.status.value}")
            time.sleep(0.5)
        rented += int(order.energy_amount or purchase.energy_amount or 0)
        paid += order.cost if order.cost is not None else purchase.cost
    while node.get_resources(sender).energy_available < energy:
        if time.monotonic() > deadline:
            raise SystemExit("the rented energy did not reach the wallet within 120 s")
        time.sleep(0.5)
    return rented, paid


def rent_token(client: TronEnergyClient, node: TronNodeClient, sender: str,
               batch: Sequence[Payout], kind: Kind) -> tuple[list[Payout], int, Decimal, int]:
    """The token's rows with the node's estimate each (through the node bound to its
    contract), and that energy rented: ``(rows, energy rented, TRX paid, orders)``."""
    assert kind.contract is not None
    estimated, missing = estimate_energy(node.for_token(kind.contract), sender, batch,
                                         concurrency=16)
    if missing:
        raise SystemExit(f"the node gave no estimate for {len(missing)} {kind.symbol} rows")
    planned = sum(transfer_energy(p) for p in estimated)
    price = client.get_price(1)
    orders = shortfall_orders(planned, 0, min_energy=price.min_energy,
                              max_energy=price.max_energy)
    bought = [client.buy_energy(sender, o["energy_amount"], 1) for o in orders]
    rented, paid = wait_for(client, node, sender, bought, planned)
    return estimated, rented, paid, len(orders)


def trx_figures(plan: TrxPlan | None, batch: Sequence[Payout], attempts: Sequence[Any],
                on_chain: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A TRX batch's planned and charged TRX, in sun: the pre-flight's plan of the TRX
    payouts (``Cleared.trx``: fees for bandwidth and accounts created; None when it made
    none), the receipts' fees, the amounts the rows send and those the chain moved."""
    receipts = [a.receipt for a in attempts if a.receipt]
    moved = sum(int(Decimal(t["amount"]) * 1_000_000) for t in on_chain
                if t.get("status") == "executed")
    return {"amounts_sun": sum(p.units for p in batch), "moved_sun": moved,
            "planned_amount_sun": None if plan is None else plan.amount_sun,
            "planned_fee_sun": None if plan is None else plan.fee_sun,
            "planned": {} if plan is None else plan.figures(),
            "charged_fee_sun": sum(int(r["trx_burned_sun"]) for r in receipts),
            "bandwidth_sun": sum(int(r["bandwidth_burned_sun"]) for r in receipts)}


def verdict(met: bool) -> str:
    """How an aim reads."""
    return "met" if met else "NOT met"


def rent(client: TronEnergyClient, node: TronNodeClient, sender: str, rows: list[dict[str, str]],
         batch_id: str, node_conn: str) -> tuple[dict[str, Any], int, Decimal]:
    """Prepare the batch as the example DAG does and rent its energy through the service:
    ``(plan, energy rented, TRX paid)``, once the wallet has the energy on chain."""
    def check(address: str) -> dict[str, Any]:
        result = client.check_address(address)
        return {**result.to_dict(), "transfer_energy": check_energy(result.transfer_count)}

    with ThreadPoolExecutor(8) as pool:
        checks = list(pool.map(check, sheet.recipients(rows)))
    batch = BatchParams.checked(sender_address=sender, rent_time="1",
                                max_spend_trx="100000000", batch_id=batch_id)
    chain = onchain.check_batch(rows, checks, sender,
                                ChainParams.checked(tron_node_conn_id=node_conn))
    plan = energy_plan.plan_energy(client, rows, checks, batch, chain)
    bought = [client.buy_energy(o["target_address"], o["energy_amount"], 1)
              for o in plan["buy_orders"]]
    rented, paid = wait_for(client, node, sender, bought, plan["total_energy"])
    return plan, rented, paid


@dataclass(frozen=True)
class Prepared:
    """A batch as prepared before the timed part: its rows, and the energy rented for them."""

    kind: Kind
    made: Sequence[tuple[str, str]]
    batch: Sequence[Payout]
    tokens: Mapping[str, Token]
    batch_id: str
    orders: int
    rented: int
    paid: Decimal
    seconds: float

    @property
    def planned_energy(self) -> int:
        """The energy the preparation planned (the rows' energy): what it rented."""
        return sum(transfer_energy(p) for p in self.batch)


def prepare(root_url: str, client: TronEnergyClient, call: Callable[..., Any], size: int,
            rng: random.Random, sender: str, kind: Kind, node_conn: str) -> Prepared:
    """The wallet funded, the recipients made, the rows checked and their energy rented:
    USDT's as the example DAG plans it, a second token's with the node's estimates per
    recipient through its contract, none for TRX."""
    fund(call, kind, sender, size)
    batch_id = f"bench-{kind.name}-{size}-{int(time.time())}"
    started = time.perf_counter()
    made = recipients(call, kind, size, rng)
    rows = [kind.row(address, rng) for address, _ in made]
    orders, rented, paid = 0, 0, Decimal(0)
    with TronNodeClient(root_url, usdt_contract=USDT) as plain:
        book = TokenBook(plain)
        if kind.name == "usdt":
            plan, rented, paid = rent(client, plain, sender, rows, batch_id, node_conn)
            orders = len(plan["buy_orders"])
            rows = [{**row, "energy": r["energy"]}
                    for row, r in zip(rows, plan["recipients"], strict=True)]
        batch = payouts(rows, batch_id=batch_id, tokens=book.token)
        if kind.name == "token":
            batch, rented, paid, orders = rent_token(client, plain, sender, batch, kind)
    return Prepared(kind, made, batch, book.by_name(), batch_id, orders, rented, paid,
                    time.perf_counter() - started)


def succeeded(transaction: Mapping[str, Any]) -> bool:
    """Executed, and (a contract call) its receipt says SUCCESS; a TRX transfer's receipt
    has no contract result, as java-tron's ``gettransactioninfobyid`` has none for it."""
    if transaction.get("status") != "executed":
        return False
    result = ((transaction.get("receipt") or {}).get("receipt") or {}).get("result")
    return result in ("SUCCESS", None) if transaction.get("token") == "TRX" else (
        result == "SUCCESS")


def one_to_one(ratio: Decimal) -> bool:
    """The aim of planned / charged: 1.0000 to four places."""
    return ratio.quantize(Decimal("0.0001")) == 1


def trx_report(prepared: Prepared, attempts: Sequence[Any],
               on_chain: Sequence[Mapping[str, Any]], cleared: Cleared | None) -> bool:
    """A TRX batch's planned fees against the receipts', and its amounts against the
    chain's; whether both are exact."""
    figures = trx_figures(cleared.trx if cleared else None, prepared.batch, attempts, on_chain)
    planned, charged = figures["planned_fee_sun"], figures["charged_fee_sun"]
    amounts_met = figures["moved_sun"] == figures["amounts_sun"] == figures["planned_amount_sun"]
    print(f"  TRX moved / sent      : {figures['moved_sun'] / 1e6:,.6f} / "
          f"{figures['amounts_sun'] / 1e6:,.6f} TRX (the pre-flight's plan: "
          f"{(figures['planned_amount_sun'] or 0) / 1e6:,.6f}): {verdict(amounts_met)}")
    if planned is None:
        print(f"  planned / charged     : the pre-flight made no plan of the TRX payouts; "
              f"charged {charged / 1e6:,.6f} TRX of fees: NOT met")
        return False
    ratio = Decimal(planned) / charged if charged else Decimal(planned == 0)
    met = one_to_one(ratio) and amounts_met
    plan = figures["planned"]
    print(f"  planned / charged     : {ratio:7.4f} ({planned / 1e6:,.6f} / {charged / 1e6:,.6f} "
          f"TRX of fees; planned: {plan['accounts_created']:,} accounts created "
          f"{plan['account_fee_sun'] / 1e6:,.6f}, bandwidth {plan['bandwidth_fee_sun'] / 1e6:,.6f}"
          f" ({plan['free_bandwidth']:,} bytes free, {plan['staked_bandwidth']:,} staked); "
          f"charged for bandwidth {figures['bandwidth_sun'] / 1e6:,.6f}); aim 1.0000: "
          f"{verdict(met)}")
    return met
