"""Per token paid out in the period: amounts in its own units, energy charged, TRX by kind.

From the payout journal, grouped by its ``token`` column (TRX, USDT, or a contract): the
confirmed payouts and their units, summed exactly by the database (:func:`_chunks`: the
units are text of up to 40 digits, summed whole up to 12 digits and in 12-digit slices
beyond, as 64-bit integers, then joined here: never a float, nor a SQLite ``NUMERIC``
that would be one), and over the receipts of the period's transactions (failed ones too,
from the journal's integer receipt columns) the energy the chain charged each contract and
the TRX burned, by kind: energy, bandwidth, account creation, other (the journal's kind
columns, ``payout.receipts.KIND_COLUMNS``, split by the rule the batch's reports use,
:func:`~..payout.by_token.fee_split`), ``unsplit`` the fee beyond them. Sun is summed in
12-digit slices too (:func:`_sun`), so no sum overflows a 64-bit integer.

The journal keeps no decimals or symbol: those of a contract come from the newest
``payouts sent`` events (their ``tokens``, read from the chain by the sending task;
:func:`token_facts` checks them again, a symbol stays untrusted text the page escapes).
A contract no event described is shown in its smallest units, and says so. Two tokens are
never added together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.money.burn import SUN
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.payout.attempts import PayoutState
from airflow_provider_tronenergy.payout.by_token import (
    KINDS,
    MAX_DECIMALS,
    MAX_SYMBOL,
    TRX,
    USDT,
    USDT_DECIMALS,
)
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.payout.receipts import KIND_COLUMNS
from airflow_provider_tronenergy.ui.period import Period
from tronenergy_protocol.address import is_valid_address
from tronenergy_protocol.explorer import Explorer, ExplorerError, explorer_of
from tronenergy_protocol.numbers import units_text

EXPLORER_KEY: Final = "explorer_url"
"""``[tronenergy] explorer_url``: the explorer the page links tokens to (mainnet TronScan
when unset)."""
SLICE: Final = 12
SLICES: Final = 4
"""Units are at most 40 digits (``payout.rows.MAX_UNIT_DIGITS``): four slices of 12; a
slice summed over 9 million rows still fits a 64-bit integer."""
KNOWN: Final = {TRX: (TRX, 6), USDT: (USDT, USDT_DECIMALS)}


@dataclass(frozen=True)
class TokenFacts:
    """A token's symbol (untrusted text from its contract), decimals and contract (USDT's
    is the network's), as an event said."""

    symbol: str | None
    decimals: int
    contract: str | None = None


def page_explorer() -> Explorer:
    """The explorer of ``[tronenergy] explorer_url``; a bad value is an error naming it."""
    raw = sqlstore.airflow_conf(EXPLORER_KEY)
    try:
        return explorer_of(raw)
    except ExplorerError as exc:
        raise ExplorerError(f"[tronenergy] {EXPLORER_KEY} (the Energy page's token links): "
                            f"{exc}") from None


def token_facts(lists: Iterable[Any]) -> dict[str, TokenFacts]:
    """Each contract's facts from ``payouts sent`` events' ``tokens`` lists, newest first
    (the first seen wins); anything malformed is skipped, never half-read."""
    facts: dict[str, TokenFacts] = {}
    for items in lists:
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, Mapping):
                continue
            name, decimals, symbol = item.get("token"), item.get("decimals"), item.get("symbol")
            if (not isinstance(name, str) or name in facts or name == TRX
                    or not (name == USDT or is_valid_address(name))):
                continue
            if (not isinstance(decimals, int) or isinstance(decimals, bool)
                    or not 0 <= decimals <= MAX_DECIMALS):
                continue
            if not (isinstance(symbol, str) and symbol.isprintable()
                    and 0 < len(symbol) <= MAX_SYMBOL):
                symbol = None
            contract = item.get("contract")
            facts[name] = TokenFacts(symbol, decimals, contract if isinstance(contract, str)
                                     and is_valid_address(contract) else None)
    return facts


def _chunks(units: Any, only: Any) -> list[Any]:
    """The sums of ``units`` over rows where ``only`` holds, as :data:`SLICES` + 1 integer
    sums to join: units of up to 12 digits (USDT's and TRX's payouts, most rows) cast
    whole, longer ones in 12-digit slices, high first (the database evaluates only the
    branch a row takes)."""
    short = sa.func.length(units) <= SLICE
    padded = sa.func.substr(sa.literal("0" * SLICE * SLICES) + units,
                            sa.func.length(units) + 1)
    return [*(sa.func.sum(sa.case((sa.and_(only, ~short), sa.cast(
        sa.func.substr(padded, 1 + SLICE * k, SLICE), sa.BigInteger)), else_=0))
        for k in range(SLICES)),
        sa.func.sum(sa.case((sa.and_(only, short), sa.cast(units, sa.BigInteger)), else_=0))]


def _joined(sums: list[Any]) -> int:
    """What :func:`_chunks` summed, as one exact integer."""
    total = 0
    for value in sums[:SLICES]:
        total = total * 10 ** SLICE + int(value or 0)
    return total + int(sums[SLICES] or 0)


def _sun(column: Any) -> list[Any]:
    """A sun column's sum as two 64-bit sums to join (:func:`_sun_joined`): its values'
    12-digit high and low parts (a value is at most 19 digits)."""
    return [sa.func.sum(column // 10 ** SLICE), sa.func.sum(column % 10 ** SLICE)]


def _sun_joined(high: Any, low: Any) -> int:
    return int(high or 0) * 10 ** SLICE + int(low or 0)


def token_use(payouts: PayoutJournal, period: Period,
              facts: Mapping[str, TokenFacts] | None = None,
              explorer: Explorer | None = None) -> list[dict[str, Any]]:
    """One line per token the period's payouts sent, most confirmed payouts first."""
    payouts.ensure_schema()
    facts = facts or {}
    a = payouts.attempts.c
    confirmed = a.state == PayoutState.CONFIRMED.value
    query = sa.select(
        a.token, sa.func.sum(sa.case((confirmed, 1), else_=0)), *_chunks(a.units, confirmed),
        sa.func.count(a.energy_total), sa.func.sum(a.energy_total), sa.func.sum(a.energy_burned),
        *_sun(a.trx_burned_sun), *(s for name in KIND_COLUMNS.values() for s in _sun(a[name]))
    ).where(
        a.created_at_ms >= period.start_ms, a.created_at_ms < period.end_ms).group_by(a.token)
    with payouts.db.engine.connect() as conn:
        rows = conn.execute(query).all()
    lines = [_line(row, facts, explorer) for row in rows]
    return sorted(lines, key=lambda line: (-line["confirmed"], line["token"]))


def _line(row: Any, facts: Mapping[str, TokenFacts],
          explorer: Explorer | None) -> dict[str, Any]:
    token, confirmed, *rest = row
    units = _joined(rest[:SLICES + 1])
    transactions, energy, energy_burned = (int(v or 0) for v in rest[SLICES + 1:SLICES + 4])
    fee, *kinds = (_sun_joined(*rest[i:i + 2]) for i in range(SLICES + 4, len(rest), 2))
    by_kind = dict(zip(KIND_COLUMNS, kinds, strict=True))
    by_kind["unsplit"] = fee - sum(kinds)
    symbol, decimals = KNOWN.get(token, (None, None))
    contract = None if token in KNOWN else token
    if token == USDT and token in facts:  # its decimals are known: only its contract
        contract = facts[token].contract
    elif token not in KNOWN and token in facts:
        symbol, decimals = facts[token].symbol, facts[token].decimals
    return {
        "token": token, "symbol": symbol, "decimals": decimals, "contract": contract,
        "confirmed": int(confirmed or 0), "units_paid": str(units),
        "amount_paid": units_text(units, decimals) if decimals is not None else None,
        "transactions": transactions, "energy_charged": energy,
        "energy_burned": energy_burned, "trx_burned": text(fee * SUN),
        "trx_burned_by_kind": {kind: text(by_kind[kind] * SUN) for kind in KINDS},
        "explorer": explorer.token(contract) if explorer and contract else "",
    }
