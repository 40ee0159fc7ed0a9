"""What a keeper does for one wallet now: hold, buy how much, ask, or refuse, and why.

Pure arithmetic on what was read (the chain's figures for the wallet, the keeper's own
orders, the service's price) so that the same reading always gives the same decision,
and a test can walk every rule without a chain:

1. The wallet's energy is what the chain says it can use now (``EnergyLimit -
   EnergyUsed``) plus what the keeper ordered that the chain does not show yet.
2. Below the floor: top it up to the target.
3. A rental of the keeper's that ends within ``renew_before_seconds``, while the wallet is in use
   (it used energy lately: ``EnergyUsed > 0``): rent what its recent use says the next
   rental needs (the energy used lately plus the floor, at most the target), less what
   the wallet will have once it ended. The chain takes a rental's share of the used
   energy back with it (java-tron's ``UnDelegateResourceActuator``), so what is left is
   the available energy in proportion to the limit that stays.
4. The amount is at least the service's minimum and at most its maximum; over the price
   cap nothing is bought; over what is left of the day's budget it is cut to fit, or
   nothing is bought when that is below the minimum; above ``approval_above_trx`` a person
   decides.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from airflow_provider_tronenergy.keeper.policy import KeeperPolicy
from airflow_provider_tronenergy.money.quote import rental_cost, text


class Action(str, enum.Enum):
    """What the keeper does for a wallet."""

    HOLD = "hold"
    BUY = "buy"
    ASK = "ask"
    CAPPED = "capped"
    OVER_BUDGET = "over_budget"
    REFUSED = "refused"
    """Decided to buy, but the service refused or the outcome is unknown (keeper.keep)."""

    def spends(self) -> bool:
        """Whether it leads to a purchase (asked ones only once a person approves)."""
        return self in (Action.BUY, Action.ASK)


@dataclass(frozen=True)
class Rental:
    """A rental of the keeper's running on the wallet: its energy, and when it ends."""

    order_id: str
    energy: int
    ends_at: float
    """Chain time (seconds): when the order was delegated plus its rent time."""


@dataclass(frozen=True)
class WalletView:
    """What was read about one wallet, at the chain's ``now`` (head block time, seconds)."""

    address: str
    limit: int
    used: int
    now: float
    incoming: int = 0
    """Energy the keeper ordered that the chain does not show yet."""
    rentals: tuple[Rental, ...] = ()

    @property
    def available(self) -> int:
        """What a transaction could use now (never negative)."""
        return max(0, self.limit - self.used)

    @property
    def in_use(self) -> bool:
        """The wallet used energy lately (the chain's usage recovers over 24 h)."""
        return self.used > 0

    def ending(self, within: float) -> int:
        """Energy of the keeper's rentals that end within ``within`` seconds."""
        return sum(r.energy for r in self.rentals if r.ends_at - self.now <= within)

    def available_after(self, ending: int) -> int:
        """What is left once ``ending`` energy of rentals ended (their share of use goes)."""
        if ending <= 0 or self.limit <= 0:
            return self.available
        staying = max(0, self.limit - ending)
        return self.available * staying // self.limit


@dataclass(frozen=True)
class Market:
    """The service's price for the policy's rent time, and its order bounds."""

    price_per_10k: Decimal
    min_energy: int
    max_energy: int


@dataclass(frozen=True)
class Decision:
    """One wallet's decision, with everything its log line and XCom say."""

    address: str
    action: Action
    energy: int
    cost: Decimal
    available: int
    incoming: int
    floor: int
    budget_left: Decimal
    reason: str

    def line(self) -> str:
        """The task log's one line: wallet, available, floor, bought, cost, budget left."""
        if self.action is Action.BUY:
            what = f"buys {self.energy:,} for {text(self.cost)} TRX"
        elif self.action is Action.ASK:
            what = f"asks a person about {self.energy:,} for {text(self.cost)} TRX"
        else:
            what = f"{self.action.value.replace('_', ' ')}, buys nothing"
        return (f"keeper {self.address}: available {self.available:,}"
                f"{f' (+{self.incoming:,} ordered)' if self.incoming else ''}, "
                f"floor {self.floor:,}: {what}; budget left {text(self.budget_left)} TRX; "
                f"{self.reason}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, exact."""
        return {"address": self.address, "action": self.action.value, "energy": self.energy,
                "cost": text(self.cost), "available": self.available,
                "incoming": self.incoming, "floor": self.floor,
                "budget_left": text(self.budget_left), "reason": self.reason}


def decide(policy: KeeperPolicy, wallet: WalletView, market: Market,
           spent_today: Decimal) -> Decision:
    """The decision for ``wallet`` (see the module's rules), given the day's spend so far."""
    left = max(Decimal(0), policy.max_daily_spend_trx - spent_today)
    have = wallet.available + wallet.incoming
    ending = wallet.ending(policy.renew_before_seconds)
    after = wallet.available_after(ending) + wallet.incoming

    def result(action: Action, energy: int, reason: str, cost: Decimal = Decimal(0)
               ) -> Decision:
        return Decision(wallet.address, action, energy, cost, wallet.available,
                        wallet.incoming, policy.floor, left, reason)

    if have < policy.floor:
        need, why = policy.target - have, f"below the floor by {policy.floor - have:,}"
    elif ending and wallet.in_use and after < policy.floor:
        minutes = policy.renew_before_seconds / 60
        # As much as the ending rentals' time saw used, above the floor, up to the target:
        # what the wallet's recent use says the next rental needs; leftovers end anyway.
        expected = min(policy.target, wallet.used + policy.floor)
        need, why = (expected - after,
                     f"{ending:,} rented energy ends within {minutes:g} min while the "
                     f"wallet is in use ({wallet.used:,} used lately, {after:,} would be "
                     "left)")
    else:
        waiting = f"; {wallet.incoming:,} ordered, not on chain yet" if wallet.incoming else ""
        return result(Action.HOLD, 0, f"at or above the floor{waiting}")
    if market.price_per_10k > policy.max_price_per_10k_trx:
        return result(Action.CAPPED, 0, f"{why}; the price {text(market.price_per_10k)} TRX "
                      f"per 10,000 energy is above the cap {text(policy.max_price_per_10k_trx)}")
    energy = min(max(need, market.min_energy), market.max_energy)
    cost = rental_cost(energy, market.price_per_10k)
    if cost > left:
        energy = int((left * 10_000 / market.price_per_10k).to_integral_value(ROUND_FLOOR))
        energy = min(energy, market.max_energy)
        while energy >= market.min_energy and rental_cost(energy, market.price_per_10k) > left:
            energy -= 1
        if energy < market.min_energy:
            return result(Action.OVER_BUDGET, 0, f"{why}; {text(left)} TRX left of the "
                          f"day's budget buys less than the service's minimum "
                          f"{market.min_energy:,}")
        cost = rental_cost(energy, market.price_per_10k)
        why += "; cut to what the day's budget has left"
    if policy.approval_above_trx is not None and cost > policy.approval_above_trx:
        return result(Action.ASK, energy, f"{why}; above approval_above_trx "
                      f"{text(policy.approval_above_trx)} TRX: a person decides", cost)
    return result(Action.BUY, energy, why, cost)
