"""The pre-flight of a batch whose rows name tokens: each token's figures from its contract,
one check of the TRX for all of them.

A sheet row may name its token (:mod:`.sheet`); rows that name none, or all name the
network's USDT, go through :func:`~.onchain.preflight` unchanged. Otherwise the batch's
tokens are resolved once (:class:`~..node.tokens.TokenBook`: each contract's ``decimals()``
and ``symbol()`` read from the chain) and each row's amount checked again in its token's
decimals. Then, through the node connection bound to each contract
(:meth:`~..node.client.TronNodeClient.for_token`): the sender's balance of it, its energy
factor, and each recipient's transfer energy as the node estimates it for *that* contract
(a holder of one token may hold none of another). TRX rows need no energy: what they take
is read from the chain by the send path's own rule (:func:`~.trx.plan_trx` over
``node.trx_costs``: amounts, exact bytes, an account's creation for a recipient without
one). The sender's TRX must cover them, the activations, the bandwidth the token transfers
burn and the reserve, together.

A token the sender holds too little of is named with its rows only, and the batch is
refused before anything is bought (:class:`~.onchain.ChainRefused`): the preparation never
drops a payout. The answer keeps each row's token (``row_tokens``: the journal's name,
:attr:`~..node.tokens.Token.name`) and each token's figures (``tokens``), which the energy
plan sizes per contract (:mod:`.energy_plan`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from airflow_provider_tronenergy.fanout import failure_report, run_batch
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import trx_text
from airflow_provider_tronenergy.node.tokens import TRX, USDT, Token, TokenBook, TokenRefused
from airflow_provider_tronenergy.payout import onchain
from airflow_provider_tronenergy.payout.onchain import (
    NODE_CONCURRENCY,
    ChainRefused,
    ChainUnread,
    wallet_figures,
)
from airflow_provider_tronenergy.payout.params import NOTHING_MOVED, ChainParams
from airflow_provider_tronenergy.payout.rows import (
    Payout,
    PayoutInputError,
    amount_problem,
    units_of,
)
from airflow_provider_tronenergy.payout.trx import plan_trx
from tronenergy_protocol.energy import NEW_SLOT_ENERGY, penalized
from tronenergy_protocol.numbers import units_text

if TYPE_CHECKING:
    from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
    from airflow_provider_tronenergy.node.client import TronNodeClient

log = logging.getLogger(__name__)


def names_tokens(payouts: Sequence[Mapping[str, str]]) -> bool:
    """Whether any row names a token other than the network's USDT by name."""
    return any(p.get("token") not in (None, "", USDT) for p in payouts)


def check_batch(payouts: Sequence[Mapping[str, str]], checks: Sequence[Mapping[str, Any]],
                sender: str, settings: ChainParams) -> dict[str, Any]:
    """The pre-flight of a batch: :func:`preflight_tokens` when its rows name tokens, else
    :func:`~.onchain.preflight`; with no node, :func:`~.onchain.no_checks` (and then rows
    of tokens other than USDT and TRX are refused by the plan, which cannot size them)."""
    node = onchain.node_hook(settings.node_conn_id)
    if node is None:
        return onchain.no_checks()
    try:
        if names_tokens(payouts):
            return preflight_tokens(node, sender, payouts, checks,
                                    trx_reserve_sun=settings.trx_reserve_sun)
        return onchain.preflight(node, sender, payouts, checks,
                                 trx_reserve_sun=settings.trx_reserve_sun)
    finally:
        node.close()


def resolve(book: TokenBook, payouts: Sequence[Mapping[str, str]],
            sender: str = "") -> list[tuple[Token, int]]:
    """Each row's token and its amount in the token's units; every row whose token is
    refused, or whose amount its decimals cannot hold, or a TRX row to the sender itself
    (java-tron's ``TransferActuator``: "Cannot transfer TRX to yourself."), named at once
    (:class:`~.rows.PayoutInputError`, nothing moved)."""
    resolved: list[tuple[Token, int]] = []
    problems: list[str] = []
    for index, payout in enumerate(payouts):
        try:
            token = book.token(payout.get("token") or "")
        except TokenRefused as exc:
            problems.append(f"row {index}: {exc}")
            continue
        if token.is_trx and payout["recipient"] == sender:
            problems.append(f"row {index}: a TRX payout to the sender {sender} itself (the "
                            "chain refuses a TRX transfer to its own owner)")
            continue
        amount = Decimal(payout["amount"])
        problem = amount_problem(amount, token.decimals)
        if problem is not None:
            problems.append(f"row {index}: amount {payout['amount']} of {token.shown} {problem}")
            continue
        resolved.append((token, units_of(amount, token.decimals)))
    if problems:
        raise PayoutInputError(f"{len(problems)} payout row(s) cannot be paid in their token "
                               f"({NOTHING_MOVED}):\n  " + "\n  ".join(problems[:50]))
    return resolved



def _bound(client: TronNodeClient, token: Token) -> TronNodeClient:
    """The client reading ``token``'s contract (itself for the connection's USDT)."""
    return client if token.name == USDT else client.for_token(token.contract or "")


def _estimates(bound: TronNodeClient, sender: str,
               units: Mapping[str, int]) -> tuple[dict[str, int], int]:
    """Each recipient's transfer energy for the bound contract, as the node estimates it."""
    results, failures = run_batch(
        list(units), lambda r: {"address": r, "estimate":
                                bound.estimate_transfer_energy(sender, r, units[r])},
        max_concurrency=NODE_CONCURRENCY, log=log, verb="estimated on the node")
    if failures:
        raise ChainUnread(f"{failure_report('estimated', len(units), failures)}\n"
                          f"({NOTHING_MOVED})")
    missing = [r["address"] for r in results if r["estimate"] is None]
    if missing:  # no check-address rule exists for another token: never guessed
        raise ChainUnread(f"the node estimated no transfer of {bound.usdt_contract} to "
                          f"{', '.join(missing[:5])}; a later try asks again ({NOTHING_MOVED})")
    return {r["address"]: int(r["estimate"]) for r in results}, len(results)


def _token_figures(client: TronNodeClient, sender: str, token: Token,
                   rows: Sequence[tuple[int, str, int]], checks: Sequence[Mapping[str, Any]]
                   ) -> tuple[dict[str, Any], str | None]:
    """One TRC-20 token's figures: balance, energy factor, each recipient's estimate, the
    holder figure; and its shortfall, naming its rows, or None."""
    bound = _bound(client, token)
    held = bound.get_usdt_balance(sender)
    needed = sum(units for _, _, units in rows)
    if held < needed:
        lines = ", ".join(str(index) for index, _, _ in rows[:20])
        return {}, (f"{token.shown} short by {units_text(needed - held, token.decimals)}: the "
                    f"wallet holds {units_text(held, token.decimals)}, its {len(rows)} row(s) "
                    f"pay out {units_text(needed, token.decimals)} (rows {lines})")
    contract = bound.get_contract_info()
    if contract is None:
        raise ChainRefused(f"the node knows no contract at {token.contract} ({token.shown}); "
                           f"{NOTHING_MOVED}")
    first: dict[str, int] = {}
    for _, recipient, units in rows:
        first.setdefault(recipient, units)
    energies, estimated = _estimates(bound, sender, first)
    slot = penalized(NEW_SLOT_ENERGY, contract.energy_factor)
    holder = (onchain.holder_energy(energies, checks, contract.energy_factor)
              if token.name == USDT  # the service's check says who holds USDT
              else max(1, max(energies.values()) - slot))
    return {"contract": token.contract, "symbol": token.symbol, "decimals": token.decimals,
            "held": units_text(held, token.decimals),
            "needed": units_text(needed, token.decimals), "transfers": len(rows),
            "energy_factor": contract.energy_factor, "energies": energies,
            "estimated_by_node": estimated,
            # a later transfer to the same recipient finds it a holder (its slot written)
            "holder_energy": holder}, None


def _trx_rows(rows: Sequence[tuple[int, str, int]]) -> list[Payout]:
    return [Payout(identity=f"row:preflight:{index}", row=index, recipient=recipient,
                   units=units, amount=Decimal(units).scaleb(-6), token=TRX)
            for index, recipient, units in rows]


def preflight_tokens(node: TronNodeHook, sender: str, payouts: Sequence[Mapping[str, str]],
                     checks: Sequence[Mapping[str, Any]], *,
                     trx_reserve_sun: int) -> dict[str, Any]:
    """The pre-flight of a batch whose rows name tokens (see the module); refuses before
    anything is bought, naming every shortfall."""
    prices = onchain.read_prices(node)
    client = node.get_conn()
    try:
        resolved = resolve(TokenBook(client), payouts, sender)
    except NodeError as exc:
        raise ChainUnread(f"the tokens' decimals could not be read ({exc}); "
                          f"{NOTHING_MOVED}") from None
    groups: dict[str, list[tuple[int, str, int]]] = {}
    tokens: dict[str, Token] = {}
    for index, (payout, (token, units)) in enumerate(zip(payouts, resolved, strict=True)):
        groups.setdefault(token.name, []).append((index, payout["recipient"], units))
        tokens[token.name] = token
    account = node.get_account(sender)
    resources = node.get_resources(sender)
    shortfalls = [] if account.activated else [f"the hot wallet {sender} is not activated "
                                               "on chain"]
    figures: dict[str, dict[str, Any]] = {}
    for name, rows in groups.items():
        if name == TRX:
            continue
        found, short = _token_figures(client, sender, tokens[name], rows, checks)
        if short:
            shortfalls.append(short)
        else:
            figures[name] = found
    token_transfers = sum(len(rows) for name, rows in groups.items() if name != TRX)
    trx = plan_trx(client, sender, _trx_rows(groups.get(TRX, [])), signatures=1,
                   permission_id=0, shared=token_transfers > 0, concurrency=NODE_CONCURRENCY)
    activations = sum(bool(c["need_activate"]) for c in checks)
    activation_sun = activations * prices.activation_sun
    bandwidth_sun = onchain.bandwidth_burn_sun(token_transfers, resources, prices)
    need_trx = trx.trx_needed_sun + activation_sun + bandwidth_sun + trx_reserve_sun
    if account.trx_sun < need_trx:
        shortfalls.append(
            f"TRX short by {trx_text(need_trx - account.trx_sun)}: the wallet holds "
            f"{trx_text(account.trx_sun)}, needs {trx_text(need_trx)} (TRX payouts "
            f"{trx_text(trx.amount_sun)} and their fees {trx_text(trx.fee_sun)}, "
            f"{trx.accounts_created} account(s) created; {activations} activations "
            f"{trx_text(activation_sun)}, bandwidth burn {trx_text(bandwidth_sun)}, reserve "
            f"{trx_text(trx_reserve_sun)})")
    if shortfalls:
        raise ChainRefused(f"the hot wallet cannot send this batch ({NOTHING_MOVED}):\n- "
                           + "\n- ".join(shortfalls))
    usdt = figures.get(USDT, {})
    log.info("on-chain pre-flight passed: %s TRX; %s; %d energy available",
             trx_text(account.trx_sun), ", ".join(
                 f"{f['needed']} of {tokens[n].shown}" for n, f in figures.items()) or "TRX only",
             resources.energy_available)
    return {
        "onchain": True,
        "wallet": wallet_figures(sender, account, resources, token_transfers,
                                 {"usdt": usdt["held"]} if usdt else {}),
        "row_tokens": [token.name for token, _ in resolved],
        "tokens": figures,
        "trx": {(k[:-4] if k.endswith("_sun") else k): trx_text(v) if k.endswith("_sun") else v
                for k, v in trx.figures().items()},
        **({"usdt_needed": usdt["needed"]} if usdt else {}),
        "trx_needed": trx_text(need_trx),
        "bandwidth_burn": trx_text(bandwidth_sun),
        "energies": usdt.get("energies", {}),
        "estimated_by_node": sum(int(f["estimated_by_node"]) for f in figures.values()),
        "holder_energy": usdt.get("holder_energy"),
        "prices": prices.to_dict(),
    }
