"""What a payout cost on chain, from its receipt: the figures the report and the event show.

Energy comes from the sender's own stake and delegations (a rental is a delegation)
first, then is burned at the chain's price up to the ``fee_limit``; bandwidth the same
way. The receipt says how much of each (``energy_usage``, ``energy_fee``, ``net_usage``,
``net_fee``, ``fee``), and those are the measured figures: nothing here is predicted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from airflow_provider_tronenergy.node.models import TransactionInfo, trx_text
from airflow_provider_tronenergy.node.tokens import Token
from airflow_provider_tronenergy.payout.by_token import KINDS, by_token, decimals_of, fee_split
from tronenergy_protocol.explorer import Explorer
from tronenergy_protocol.numbers import units_text

CONFIRMED_ON: Final = "confirmed_on"
"""A receipt's key (and the payout journal's column): the block it was read up to,
``solidified`` (final) or ``head`` (a block its fork may still leave). Receipts journaled
before it was kept have none: unknown."""
SOLIDIFIED: Final = "solidified"
HEAD: Final = "head"


def confirmed_on(receipt: Mapping[str, Any] | None) -> str | None:
    """A receipt's confirmation (``solidified`` or ``head``), or None when it does not say."""
    value = (receipt or {}).get(CONFIRMED_ON)
    return value if value in (SOLIDIFIED, HEAD) else None


KIND_COLUMNS: Final = {kind: f"fee_{kind}_sun" for kind in KINDS if kind != "unsplit"}
"""The payout journal's columns of a judged attempt's fee (``trx_burned_sun``) by kind, as
:func:`~.by_token.fee_split` splits it for the batch's reports (the one rule), written
with the receipt: a period's TRX burned per kind is integer sums, no JSON parse. What the
fee holds beyond them is ``unsplit`` (a receipt without ``energy_burned_sun``)."""


def kind_figures(receipt: dict[str, Any] | None, token: str, signatures: int | None
                 ) -> dict[str, int]:
    """The kind columns' values for a receipt of a payout of ``token`` signed by
    ``signatures`` keys: :func:`~.by_token.fee_split`'s."""
    split = fee_split(receipt or {}, token, signatures)
    return {column: split[kind] for kind, column in KIND_COLUMNS.items()}


def solidified_flag(value: Any) -> bool:
    """``confirm_solidified``: absent or empty is True (wait for solidified blocks, which
    no fork can leave); ``false`` is the written-out choice of the head block. Anything
    else is refused, never read as one or the other."""
    if value is None or value == "":
        return True
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in ("true", "1", "yes"):
        return True
    if word in ("false", "0", "no"):
        return False
    raise ValueError(f"confirm_solidified: must be true or false; got {str(value)[:40]!r}")


def confirmation(counts: Mapping[str | None, int]) -> str | None:
    """A batch's confirmation from its receipts' (``{confirmed_on: count}``): ``solidified``
    or ``head`` when all say so, ``head and solidified`` when both, ``unknown`` when some do
    not say, None with no receipt. The weakest counts: one receipt on the head is not
    final."""
    seen = [key for key, n in counts.items() if n]
    names = sorted(key for key in seen if key is not None)
    if not seen:
        return None
    return "unknown" if len(names) < len(seen) else " and ".join(names)


@dataclass(frozen=True)
class Outcome:
    """One payout transaction on chain."""

    txid: str
    block: int
    succeeded: bool
    result: str
    energy_total: int
    energy_from_stake: int
    """Energy from the sender's stake and delegations: the rental, when one was made."""
    energy_burned: int
    trx_burned_sun: int
    bandwidth: int
    bandwidth_burned_sun: int
    energy_burned_sun: int = 0
    """Sun burned for energy (the receipt's ``energy_fee``): what the ``fee_limit`` caps."""

    def to_dict(self) -> dict[str, Any]:
        """What the journal keeps and XCom carries: integers, and TRX as decimal text."""
        return {"txid": self.txid, "block": self.block, "result": self.result,
                "succeeded": self.succeeded, "energy_total": self.energy_total,
                "energy_from_stake": self.energy_from_stake,
                "energy_burned": self.energy_burned,
                "trx_burned": trx_text(self.trx_burned_sun),
                "trx_burned_sun": self.trx_burned_sun, "bandwidth": self.bandwidth,
                "bandwidth_burned_sun": self.bandwidth_burned_sun,
                "energy_burned_sun": self.energy_burned_sun}


def outcome_of(info: TransactionInfo) -> Outcome:
    """The payout's outcome from its (checked) receipt."""
    return Outcome(
        txid=info.tx_hash, block=info.block_number, succeeded=info.succeeded,
        result=info.receipt_result or ("FAILED" if info.failed else "SUCCESS"),
        energy_total=info.energy_usage_total, energy_from_stake=info.energy_usage,
        energy_burned=info.energy_burned, trx_burned_sun=info.fee,
        bandwidth=info.net_usage, bandwidth_burned_sun=info.net_fee,
        energy_burned_sun=info.energy_fee)


def totals(outcomes: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """A batch's sums over its outcomes' journaled receipts (``Outcome.to_dict()``)."""
    keys = ("energy_total", "energy_from_stake", "energy_burned", "trx_burned_sun",
            "bandwidth", "bandwidth_burned_sun")
    sums = dict.fromkeys(keys, 0)
    count = failed = 0
    for outcome in outcomes:
        count += 1
        failed += 0 if outcome.get("succeeded") else 1
        for key in keys:
            sums[key] += int(outcome.get(key) or 0)
    return {"transactions": count, "failed_on_chain": failed, **sums,
            "trx_burned": trx_text(sums["trx_burned_sun"])}


def payout_result(attempt: Any, row: int | None = None,
                  tokens: Mapping[str, Token] | None = None) -> dict[str, Any]:
    """One payout's line in a batch's result: its identity, token, amount in that token's
    units (None when its decimals were not read), state and measured figures.

    ``attempt`` is the journal's newest :class:`~.journal.Attempt` for the payout; ``row``
    its row in this batch (another batch may have signed it, at its own row).
    """
    receipt = attempt.receipt or {}
    decimals = decimals_of(attempt.token, tokens or {})
    return {"identity": attempt.identity, "row": attempt.row if row is None else row,
            "recipient": attempt.recipient, "token": attempt.token,
            "amount": None if decimals is None else units_text(int(attempt.units), decimals),
            "units": str(attempt.units), "state": attempt.state.value, "txid": attempt.txid,
            "attempt": attempt.attempt, "block": attempt.block_number,
            CONFIRMED_ON: confirmed_on(receipt) if attempt.receipt else None,
            **{key: receipt.get(key) for key in ("result", "energy_total", "energy_from_stake",
                                                  "energy_burned", "trx_burned", "bandwidth")}}


def batch_result(batch_id: str, attempts: Iterable[Any],
                 rows_by_identity: Mapping[str, int] | None = None,
                 tokens: Mapping[str, Token] | None = None,
                 explorer: Explorer | Callable[[], Explorer] | None = None) -> dict[str, Any]:
    """The batch's result (XCom, the ``payouts sent`` event): per payout (at its row in
    this batch, from ``rows_by_identity``), totals over the receipts of those that
    reached a block, on which blocks they were confirmed (:func:`confirmation`), and per
    token (:func:`~.by_token.by_token`: ``tokens`` the contracts read, by journal name;
    ``explorer``, or what reads it, for each token's page: one that cannot be read, a
    custom chain's without ``explorer_url``, leaves the pages out, as the task's links do:
    a link never decides a task whose money has moved)."""
    attempts = list(attempts)
    where = rows_by_identity or {}
    rows = [payout_result(a, where.get(a.identity), tokens) for a in attempts]
    receipts = [a.receipt for a in attempts if a.receipt]
    states: dict[str, int] = {}
    for row in rows:
        states[row["state"]] = states.get(row["state"], 0) + 1
    confirmed: dict[str | None, int] = {}
    for receipt in receipts:
        key = confirmed_on(receipt)
        confirmed[key] = confirmed.get(key, 0) + 1
    return {"batch_id": batch_id, "payouts": rows, "states": states,
            "totals": totals(receipts), "confirmation": confirmation(confirmed),
            "tokens": by_token(attempts, tokens, _explorer(explorer))}


def _explorer(given: Explorer | Callable[[], Explorer] | None) -> Explorer | None:
    if given is None or isinstance(given, Explorer):
        return given
    try:
        return given()
    except Exception:  # no page, never a failed task: the links say why in the log
        return None
