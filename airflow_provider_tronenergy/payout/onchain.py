"""What the chain says about a payout batch: can it be sent, what energy is on hand, did it arrive.

The three checks a payout team's operator otherwise makes by hand on a block
explorer, read from a TRON full node (:class:`~.hooks.tron_node.TronNodeHook`):

* :func:`preflight`, before any activation or purchase: the chain's prices
  (:func:`read_prices`: energy, bandwidth, account creation, USDT's energy factor),
  read once for the run; the hot wallet's USDT covers the batch, its TRX covers the
  activations, the bandwidth the transfers will burn and a reserve, at those
  prices; each transfer's energy as the node estimates it;
* :func:`shortfall_orders`: only the energy the wallet does not already have
  (``EnergyLimit - EnergyUsed`` less a margin) is rented;
* :func:`confirm_delegations`, after the service reports success: each order's
  delegation is in a block (solidified, when asked) and the energy is there;
* :class:`WalletEnergy`, before an order placed earlier is reused: its delegation is
  on chain and the wallet still has its energy (a rental the chain took back, or
  energy already spent, is not reused).

With ``tron_node_conn_id=None`` (written out by the person: :func:`node_hook`) nothing
here runs, and the run's log and its "batch ready" event say that no on-chain checks were
made; an id that names no connection, or an empty one, stops the run before anything is
bought (:class:`~..errors.ConnectionMissing`). All amounts are integers
(sun, USDT micro-units, energy) or exact decimal text. What the chain says against the
batch is a :class:`ChainRefused` (not retried); a node that does not answer is a
:class:`ChainUnread` (retried); the task's code turns them into its verdict
(``airflow_errors``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_provider_tronenergy.errors import NotRetryable, Retryable
from airflow_provider_tronenergy.fanout import failure_report, run_batch
from airflow_provider_tronenergy.money.burn import CHAIN, BurnPrices
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import (
    USDT_UNITS,
    ChainAccount,
    Resources,
    trx_text,
    usdt_text,
)
from airflow_provider_tronenergy.payout.params import NOTHING_MOVED, ChainParams
from tronenergy_protocol.energy import (
    BANDWIDTH_PER_TRANSFER,
    ENERGY_PER_TRANSFER,
    NEW_SLOT_ENERGY,
    penalized,
)
from tronenergy_protocol.numbers import parse_decimal

if TYPE_CHECKING:
    from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook

log = logging.getLogger(__name__)
NO_NODE = "no on-chain checks were made"
NODE_CONCURRENCY = 16
"""Node calls in flight at once while estimating a batch's transfers."""


class ChainRefused(NotRetryable, RuntimeError):
    """What the chain says stops the batch (a wallet short, a node's figures not believed,
    a delegation failed or not seen): a retry would read the same; the message names each
    reason and what was not bought, activated or published."""


class ChainUnread(Retryable, RuntimeError):
    """The node did not answer what the batch's preparation asked: nothing was bought or
    activated by this attempt, and a later try reads the chain again."""


PREPARATION_NEEDS = ("payout preparation needs a TRON node to check balances and "
                     "delegations")
WITHOUT_NODE = "plan without on-chain checks"


def node_hook(conn_id: str | None) -> TronNodeHook | None:
    """The node hook of ``conn_id``; None only when the person chose to go without one
    (``tron_node_conn_id=None``). Empty, or naming no connection: a
    :class:`~..errors.ConnectionMissing` (not retried) saying how to go without on purpose
    (:meth:`~..hooks.tron_node.TronNodeHook.chosen`)."""
    from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook

    return TronNodeHook.chosen(conn_id, needs=PREPARATION_NEEDS, without=WITHOUT_NODE)


def no_checks() -> dict[str, Any]:
    """What a run prepared without a node (``tron_node_conn_id=None``) records, and logs."""
    why = "tron_node_conn_id is None"
    log.warning("%s: %s (balances, energy on hand and delegations are not verified)",
                NO_NODE, why)
    return {"onchain": False, "reason": f"{NO_NODE}: {why}"}


def bandwidth_burn_sun(transfers: int, resources: Resources,
                       prices: BurnPrices | None = None) -> int:
    """TRX (sun) the transfers will burn for bandwidth beyond staked and free bandwidth.

    A transaction takes its whole size from one pool or burns it all
    (:meth:`~..node.models.Resources.transactions_covered`); the rest burn at the chain's
    bandwidth price.
    """
    covered = resources.transactions_covered(BANDWIDTH_PER_TRANSFER)
    price = (prices or BurnPrices()).bandwidth_sun
    return max(0, transfers - covered) * BANDWIDTH_PER_TRANSFER * price


def read_prices(node: TronNodeHook) -> BurnPrices:
    """The chain's prices and USDT's energy factor, read once for a run and checked.

    A node whose figures are outside what the chain could hold (a zero or a
    billion-sun energy price, a factor above java-tron's range) is not believed:
    the run stops before anything is bought or activated.
    """
    try:
        fees = node.get_chain_parameters()
        contract = node.get_contract_info()
    except ValueError as exc:
        raise ChainRefused(f"the node's chain parameters are not believed ({exc}); "
                           f"{NOTHING_MOVED}") from None
    if contract is None:
        raise ChainRefused(
            f"the node knows no contract at {node.usdt_contract} (the connection's "
            f"usdt_contract): its estimates cannot be for USDT; {NOTHING_MOVED}")
    prices = BurnPrices(energy_sun=fees.energy_fee, bandwidth_sun=fees.transaction_fee,
                        activation_sun=fees.activation_sun, source=CHAIN,
                        energy_factor=contract.energy_factor)
    log.info("chain prices (read from the node): %d sun per energy, %d sun per bandwidth "
             "byte, %s TRX per account created; USDT's energy factor %d", prices.energy_sun,
             prices.bandwidth_sun, trx_text(prices.activation_sun), contract.energy_factor)
    return prices


def preflight(node: TronNodeHook, sender: str, payouts: Sequence[Mapping[str, str]],
              checks: Sequence[Mapping[str, Any]], *, trx_reserve_sun: int) -> dict[str, Any]:
    """Read the hot wallet and refuse a batch it cannot send, naming every shortfall.

    Runs before any activation or purchase, so a refused batch moves nothing.
    Returns the wallet as read and each recipient's energy (the node's estimate,
    else the service's check-address rule), JSON-safe.
    """
    named = sorted({p["token"] for p in payouts if p.get("token") not in (None, "", "USDT")})
    if named:  # counted in USDT's decimals they would be wrong: never guessed
        raise ChainRefused(f"rows naming {', '.join(named)} are checked by "
                           f"token_preflight.check_batch, not this USDT pre-flight; "
                           f"{NOTHING_MOVED}")
    prices = read_prices(node)
    account = node.get_account(sender)
    resources = node.get_resources(sender)
    usdt = node.get_usdt_balance(sender)
    need_usdt = sum(int(parse_decimal(p["amount"], "amount") * USDT_UNITS) for p in payouts)
    activations = sum(bool(c["need_activate"]) for c in checks)
    activation_sun = activations * prices.activation_sun
    bandwidth_sun = bandwidth_burn_sun(len(payouts), resources, prices)
    need_trx = activation_sun + bandwidth_sun + trx_reserve_sun
    shortfalls = []
    if not account.activated:
        shortfalls.append(f"the hot wallet {sender} is not activated on chain")
    if usdt < need_usdt:
        shortfalls.append(f"USDT short by {usdt_text(need_usdt - usdt)}: the wallet holds "
                          f"{usdt_text(usdt)}, the batch pays out {usdt_text(need_usdt)}")
    if account.trx_sun < need_trx:
        shortfalls.append(
            f"TRX short by {trx_text(need_trx - account.trx_sun)}: the wallet holds "
            f"{trx_text(account.trx_sun)}, needs {trx_text(need_trx)} ({activations} "
            f"activations {trx_text(activation_sun)}, bandwidth burn {trx_text(bandwidth_sun)},"
            f" reserve {trx_text(trx_reserve_sun)})")
    if shortfalls:
        raise ChainRefused(
            f"the hot wallet cannot send this batch ({NOTHING_MOVED}):\n- "
            + "\n- ".join(shortfalls))
    energies, estimated = _energies(node, sender, payouts, checks)
    holder = holder_energy(energies, checks, prices.energy_factor or 0)
    log.info("on-chain pre-flight passed: %s TRX, %s USDT, %d energy available; %d of %d "
             "transfers estimated by the node", trx_text(account.trx_sun), usdt_text(usdt),
             resources.energy_available, estimated, len(energies))
    return {
        "onchain": True,
        "wallet": wallet_figures(sender, account, resources, len(payouts),
                                 {"usdt": usdt_text(usdt)}),
        "usdt_needed": usdt_text(need_usdt),
        "trx_needed": trx_text(need_trx),
        "bandwidth_burn": trx_text(bandwidth_sun),
        "energies": energies,
        "estimated_by_node": estimated,
        "holder_energy": holder,
        "prices": prices.to_dict(),
    }


def wallet_figures(sender: str, account: ChainAccount, resources: Resources, transfers: int,
                   held: Mapping[str, str]) -> dict[str, Any]:
    """The hot wallet as a pre-flight read it (``held``: its tokens' balances as text), for
    the batch-ready event and the approval request."""
    return {"address": sender, "trx": trx_text(account.trx_sun), **held,
            "energy_limit": resources.energy_limit, "energy_used": resources.energy_used,
            "energy_available": resources.energy_available,
            "bandwidth_available": resources.bandwidth_available,
            "bandwidth_staked": resources.staked_bandwidth_available,
            "bandwidth_free": resources.free_bandwidth_available,
            "transfers_bandwidth_covers": min(
                transfers, resources.transactions_covered(BANDWIDTH_PER_TRANSFER))}


def holder_energy(energies: Mapping[str, int], checks: Sequence[Mapping[str, Any]],
                  energy_factor: int) -> int:
    """A transfer to a holder, by the node: what a recipient's later transfers cost.

    The largest estimate for a recipient that holds USDT; with none in the batch,
    the largest first-transfer estimate less its new storage slot at the contract's
    energy factor (java-tron: SSTORE 15,000 times the factor's penalty).
    """
    holders = [energies[c["address"]] for c in checks
               if c["address"] in energies and int(c["transfer_energy"]) <= ENERGY_PER_TRANSFER]
    if holders:
        return max(holders)
    firsts = [energies[c["address"]] for c in checks if c["address"] in energies]
    if not firsts:
        return ENERGY_PER_TRANSFER
    return max(1, max(firsts) - penalized(NEW_SLOT_ENERGY, energy_factor))


def _energies(node: TronNodeHook, sender: str, payouts: Sequence[Mapping[str, str]],
              checks: Sequence[Mapping[str, Any]]) -> tuple[dict[str, int], int]:
    """Each recipient's transfer energy: the node's estimate, else the check-address rule.

    One estimate per distinct recipient, :data:`NODE_CONCURRENCY` at a time (a
    10,000-recipient batch is 10,000 node calls); a node that fails a call fails the
    pre-flight (retryable), it does not silently fall back.
    """
    by_address = {c["address"]: int(c["transfer_energy"]) for c in checks}
    units: dict[str, int] = {}
    for payout in payouts:
        units.setdefault(payout["recipient"],
                         int(parse_decimal(payout["amount"], "amount") * USDT_UNITS))
    results, failures = run_batch(
        list(units), lambda recipient: {"address": recipient, "estimate":
                                        node.estimate_transfer_energy(sender, recipient,
                                                                      units[recipient])},
        max_concurrency=NODE_CONCURRENCY, log=log, verb="estimated on the node")
    if failures:
        raise ChainUnread(f"{failure_report('estimated', len(units), failures)}\n"
                          f"({NOTHING_MOVED})")
    energies = {r["address"]: r["estimate"] if r["estimate"] is not None
                else by_address[r["address"]] for r in results}
    return energies, sum(r["estimate"] is not None for r in results)


def shortfall_orders(need: int, on_hand: int, *, min_energy: int,
                     max_energy: int) -> list[dict[str, int]]:
    """Buy orders for exactly the energy missing: none when ``on_hand`` covers ``need``.

    Each order holds at most ``max_energy``; the last is raised to ``min_energy``
    when the shortfall is smaller (the service refuses smaller orders).
    """
    missing = max(0, need - on_hand)
    if missing == 0:
        return []
    sizes = [min(max_energy, missing - start) for start in range(0, missing, max_energy)]
    if sizes[-1] < min_energy:
        if len(sizes) > 1:  # borrow from the order before, both stay within the limits
            moved = min_energy - sizes[-1]
            sizes[-2] -= moved
            sizes[-1] = min_energy
        else:
            sizes[-1] = min_energy
    return [{"energy_amount": size} for size in sizes]


def confirm_delegations(
    node: TronNodeHook, sender: str, orders: Sequence[Mapping[str, Any]], need: int, *,
    solidified: bool, timeout: float, poll_interval: float = 3.0,
    sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Wait until every order's delegation is on chain and the wallet has ``need`` energy.

    The service's ``success`` is not enough: each order's ``tx_hash`` must have a
    receipt in a block (from the solidity API when ``solidified``), and the wallet's
    available energy must cover the batch. Fails loudly, naming the order, when a
    delegation failed or is still unknown after ``timeout`` seconds.
    """
    deadline = clock() + timeout
    pending = {}
    for order in orders:
        if not order.get("tx_hash"):
            raise ChainRefused(
                f"order {order['order_id']} reported success without a tx_hash: its "
                "delegation cannot be confirmed; the batch is not published")
        pending[str(order["order_id"])] = str(order["tx_hash"])
    confirmed: list[dict[str, Any]] = []
    available = -1
    while True:
        for order_id, tx_hash in list(pending.items()):
            info = node.get_transaction_info(tx_hash, solidified=solidified)
            if info is None:
                continue
            if not info.succeeded:
                raise ChainRefused(
                    f"order {order_id}: its delegation {tx_hash} failed on chain "
                    f"(receipt {info.receipt_result}); the batch is not published")
            confirmed.append({"order_id": order_id, "tx_hash": tx_hash,
                              "block_number": info.block_number, "solidified": solidified})
            del pending[order_id]
        if not pending:
            available = node.get_resources(sender).energy_available
            if available >= need:
                break
        if clock() >= deadline:
            raise ChainRefused(_unconfirmed(pending, available, need, timeout, solidified))
        sleep(poll_interval)
    log.info("delegations confirmed on chain: %s; %d energy available for %d needed",
             ", ".join(f"{c['order_id']} in block {c['block_number']}" for c in confirmed)
             or "no orders", available, need)
    return {"confirmed": confirmed, "energy_available": available, "solidified": solidified}


def _unconfirmed(pending: Mapping[str, str], available: int, need: int, timeout: float,
                 solidified: bool) -> str:
    where = "solidified on chain" if solidified else "on chain"
    if pending:
        names = ", ".join(f"order {o} (tx {tx})" for o, tx in pending.items())
        return (f"{names}: the service reported success but the delegation is not {where} "
                f"after {timeout:g} s; the energy may never arrive, so the batch is not "
                "published. Check the order with the service before sending payouts.")
    return (f"every delegation is {where}, but the wallet has {available:,} energy available "
            f"for the batch's {need:,} after {timeout:g} s; the batch is not published")


class WalletEnergy:
    """Whether orders placed earlier still have their energy on their target's wallet.

    The journal knows an order was placed and for how long it was rented; only the
    chain knows whether the energy is still there: a delegation can be taken back
    early, and energy already spent (last period's payouts) is gone. Each target's
    available energy is read once, less ``kept`` (what the plan already counts on:
    the energy on hand it used and the margin); each order judged takes its energy
    from what is left, in order, so two orders never count the same energy.
    """

    def __init__(self, node: TronNodeHook, kept: Mapping[str, int] | None = None) -> None:
        self.node = node
        self._kept = dict(kept or {})
        self._left: dict[str, int] = {}

    def missing(self, target: str, energy: int, *, status: str, tx_hash: str) -> int:
        """Energy of an order (``status`` and ``tx_hash`` as the service says) not on chain.

        An order still pending or processing has not delegated yet: nothing is missing
        (it is on its way, and the confirmation step waits for it). A node that cannot
        be read fails the attempt, retryable, before anything is bought.
        """
        if status in ("pending", "processing"):
            return 0
        try:
            info = self.node.get_transaction_info(tx_hash) if tx_hash else None
            if info is None or not info.succeeded:
                log.warning("the delegation of %s energy to %s (tx %s) is not on chain",
                            f"{energy:,}", target, tx_hash or "none")
                return energy
            if target not in self._left:
                self._left[target] = (self.node.get_resources(target).energy_available
                                      - self._kept.get(target, 0))
        except (NodeError, ValueError) as exc:
            raise ChainUnread(f"cannot read {target}'s energy on chain ({exc}); nothing "
                              "was bought by this attempt") from None
        covered = max(0, min(energy, self._left[target]))
        self._left[target] -= covered
        if covered < energy:
            log.warning("%s has %s of the %s energy of its order left on chain (the rest was "
                        "taken back or spent)", target, f"{covered:,}", f"{energy:,}")
        return energy - covered

    def close(self) -> None:
        """Close the node's connection pool."""
        self.node.close()


def check_batch(payouts: Sequence[Mapping[str, str]], checks: Sequence[Mapping[str, Any]],
                sender: str, settings: ChainParams) -> dict[str, Any]:
    """The pre-flight of a USDT batch: :func:`preflight` with its node, or
    :func:`no_checks` (a batch whose rows name tokens:
    :func:`~.token_preflight.check_batch`)."""
    node = node_hook(settings.node_conn_id)
    if node is None:
        return no_checks()
    try:
        return preflight(node, sender, payouts, checks, trx_reserve_sun=settings.trx_reserve_sun)
    finally:
        node.close()


def confirm_batch(plan: Mapping[str, Any], orders: Sequence[Mapping[str, Any]],
                  settings: ChainParams, *, poll_interval: float = 3.0) -> dict[str, Any]:
    """The confirmation of a batch: :func:`confirm_delegations` when the plan was made on
    chain."""
    if not plan.get("onchain", {}).get("onchain"):
        return no_checks()
    node = node_hook(settings.node_conn_id)
    if node is None:  # the plan was checked on chain, this run's settings say no node
        raise ChainRefused(
            "the plan was checked on chain but tron_node_conn_id is None now: the delegations "
            "cannot be confirmed; the batch is not published")
    try:
        return confirm_delegations(node, plan["sender"], orders, int(plan["total_energy"]),
                                   solidified=settings.solidified,
                                   timeout=settings.confirm_timeout,
                                   poll_interval=poll_interval)
    finally:
        node.close()
