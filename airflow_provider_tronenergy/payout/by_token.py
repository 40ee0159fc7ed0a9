"""A payout batch's figures per token: amounts in each token's own units, TRX spent by kind.

Amounts are exact: a token's smallest units are an integer, shown with its ``decimals()``
by integer division (``tronenergy_protocol.numbers.units_text``), never through a float or
a Decimal context that could round an 18-decimal amount. Two tokens are never added
together: each has its own line (:func:`by_token`), and TRX spent is TRX whatever was paid.

TRX spent is split by kind from each receipt (java-tron's ``TransactionInfo``, as
:mod:`~..node.trx_costs` cites it): ``fee`` is ``energy_fee`` + ``net_fee`` + the
transaction's own fee (``ret.fee``: ``getCreateNewAccountFeeInSystemContract`` when a TRX
transfer creates its recipient) + the multi-sign fee. So energy burned is ``energy_fee``,
bandwidth is ``net_fee`` (bytes burned, or ``getCreateAccountFee`` when a new account's
bytes are not staked), and the rest is account creation for a single-signature TRX
transfer, else ``other`` (a multi-sign fee, with any account creation of that transfer).
A receipt journaled without ``energy_burned_sun`` (kept since receipts were split) puts
its fee beyond bandwidth in ``unsplit``: never guessed. The payout journal writes the same
split beside each receipt it records (``payout.receipts.KIND_COLUMNS``): the Energy page
sums those, one rule for both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, Final

from airflow_provider_tronenergy.node.models import trx_text
from airflow_provider_tronenergy.node.tokens import (
    MAX_DECIMALS,
    MAX_SYMBOL,
    TRX,
    TRX_TOKEN,
    USDT,
    Token,
)
from tronenergy_protocol.explorer import Explorer
from tronenergy_protocol.numbers import units_text

__all__ = ["FIGURES", "KINDS", "MAX_DECIMALS", "MAX_SYMBOL", "TRX", "USDT", "USDT_DECIMALS",
           "by_token", "decimals_of", "fee_split", "shown_amount"]

KINDS: Final = ("energy", "bandwidth", "account_creation", "other", "unsplit")
"""The kinds of TRX a payout's transaction spends, as :func:`fee_split` names them."""
USDT_DECIMALS: Final = 6
FIGURES: Final[Mapping[str, str]] = {
    "tokens[].token": "the token as the journal names it: TRX, USDT (the network's) or its "
                      "contract",
    "tokens[].symbol": "the contract's symbol() as the chain answered it (untrusted text), "
                       "None when it answers none",
    "tokens[].decimals": "the contract's decimals() as the chain answered it",
    "tokens[].amount": "the batch's payouts of this token, in its own units, exactly",
    "tokens[].amount_confirmed": "of it, what confirmed payouts paid",
    "tokens[].energy_charged": "energy the chain charged this token's transfers (its "
                               "contract's; 0 for TRX)",
    "tokens[].trx_spent": "TRX this token's transfers burned, by kind: energy, bandwidth, "
                          "account_creation (TRX payouts creating their recipient), other "
                          "(multi-sign fees), unsplit (older receipts); total is the receipts' "
                          "fee",
    "tokens[].fee_limit": "TRX of fee_limit the signed transfers allowed, and used: the share "
                          "of it the energy burned (the most any one transfer used)",
    "tokens[].explorer": "the token's page on the block explorer (none for TRX)",
}
"""What each per-token figure of a batch's result says, one line each."""



def decimals_of(name: str, tokens: Mapping[str, Token]) -> int | None:
    """A journal name's decimals: TRX's and USDT's are known, a contract's as the chain
    said (``tokens``); None when it was not read."""
    if name in tokens:
        return tokens[name].decimals
    return {TRX: TRX_TOKEN.decimals, USDT: USDT_DECIMALS}.get(name)


def shown_amount(name: str, units: int | str, tokens: Mapping[str, Token] | None = None) -> str:
    """How a message names a journaled amount: ``1.5 USDT``, ``2 TRX``, ``100.5 E18 (T...)``
    for a contract read; ``7 units of token T...`` for one whose decimals were not read
    (the journal keeps none; never guessed)."""
    token = (tokens or {}).get(name)
    decimals = decimals_of(name, tokens or {})
    if decimals is None:
        return f"{units} units of token {name}"
    amount = units_text(int(units), decimals)
    if token is not None and token.contract and name != USDT:
        return f"{amount} {token.symbol or 'of token'} ({token.contract})"
    return f"{amount} {name}"


def fee_split(receipt: Mapping[str, Any], token: str, signatures: int | None) -> dict[str, int]:
    """A journaled receipt's fee (``trx_burned_sun``) in sun by kind (:data:`KINDS`); the
    kinds add up to the fee exactly."""
    fee = _int(receipt.get("trx_burned_sun"))
    bandwidth = min(fee, _int(receipt.get("bandwidth_burned_sun")))
    split = dict.fromkeys(KINDS, 0)
    split["bandwidth"] = bandwidth
    if "energy_burned_sun" not in receipt:
        split["unsplit"] = fee - bandwidth
        return split
    split["energy"] = min(fee - bandwidth, _int(receipt.get("energy_burned_sun")))
    rest = fee - bandwidth - split["energy"]
    split["account_creation" if token == TRX and (signatures or 1) <= 1 else "other"] = rest
    return split


def by_token(attempts: Iterable[Any], tokens: Mapping[str, Token] | None = None,
             explorer: Explorer | None = None) -> list[dict[str, Any]]:
    """One line per token of a batch's newest attempts (:class:`~.attempts.Attempt`), in
    first-seen order: amounts in its units, energy charged, TRX spent by kind, fee_limit
    use, and its explorer page (when ``explorer`` is given)."""
    tokens = tokens or {}
    lines: dict[str, dict[str, Any]] = {}
    for attempt in attempts:
        line = lines.get(attempt.token)
        if line is None:
            line = lines[attempt.token] = _empty(attempt.token, tokens.get(attempt.token))
        units = int(attempt.units)
        line["payouts"] += 1
        line["units"] += units
        if attempt.state.value == "confirmed":
            line["confirmed"] += 1
            line["units_confirmed"] += units
        if attempt.fee_limit_sun and not _is_trx(attempt.token):
            line["fee_limit_sun"] += int(attempt.fee_limit_sun)
        receipt = attempt.receipt
        if not receipt:
            continue
        line["transactions"] += 1
        line["energy_charged"] += _int(receipt.get("energy_total"))
        line["energy_burned"] += _int(receipt.get("energy_burned"))
        for kind, sun in fee_split(receipt, attempt.token, attempt.signatures).items():
            line["spent_sun"][kind] += sun
        if attempt.fee_limit_sun and "energy_burned_sun" in receipt:
            used = Decimal(_int(receipt["energy_burned_sun"])) / int(attempt.fee_limit_sun)
            line["fee_limit_used_max"] = max(line["fee_limit_used_max"], used)
    return [_shown(line, explorer) for line in lines.values()]


def _empty(name: str, token: Token | None) -> dict[str, Any]:
    contract = token.contract if token else (None if _is_trx(name) else
                                             (name if name != USDT else None))
    return {"token": name, "symbol": TRX if _is_trx(name) else (token.symbol if token else None),
            "contract": contract, "decimals": decimals_of(name, {name: token} if token else {}),
            "payouts": 0, "confirmed": 0, "units": 0, "units_confirmed": 0, "transactions": 0,
            "energy_charged": 0, "energy_burned": 0, "fee_limit_sun": 0,
            "fee_limit_used_max": Decimal(0), "spent_sun": dict.fromkeys(KINDS, 0)}


def _shown(line: dict[str, Any], explorer: Explorer | None) -> dict[str, Any]:
    """A line as the result carries it: JSON-safe text for every amount."""
    decimals = line["decimals"]
    spent = line.pop("spent_sun")
    used = line.pop("fee_limit_used_max")
    return {
        **{k: v for k, v in line.items() if k not in ("units", "units_confirmed",
                                                      "fee_limit_sun")},
        "units": str(line["units"]), "units_confirmed": str(line["units_confirmed"]),
        "amount": units_text(line["units"], decimals) if decimals is not None else None,
        "amount_confirmed": (units_text(line["units_confirmed"], decimals)
                             if decimals is not None else None),
        "trx_spent": {**{kind: trx_text(sun) for kind, sun in spent.items()},
                      "total": trx_text(sum(spent.values()))},
        "fee_limit": {"allowed": trx_text(line["fee_limit_sun"]),
                      "used_max": format(used.quantize(Decimal("0.0001")), "f")},
        "explorer": explorer.token(line["contract"]) if explorer else "",
    }


def _is_trx(name: str) -> bool:
    return name == TRX


def _int(value: Any) -> int:
    """A journaled integer figure; anything else (None, a bool, text) counts 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
