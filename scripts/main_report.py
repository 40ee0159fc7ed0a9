"""The main job's report: what preparation predicted, then what the chain measured.

Plain lines for ``main_job`` to print: units in every header, and each batch figure
with one line of what it compares (the events' own ``figures`` where they say it).
Predicted figures (the node's estimates, priced before anything was sent) and
measured ones (the transfers' receipts) sit in separate, labelled tables.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def _total(rows: list[dict[str, Any]], key: str) -> Decimal:
    return sum((Decimal(str(row.get(key) or 0)) for row in rows), Decimal(0))


def _plain(value: Decimal) -> str:
    return f"{value.normalize():f}"


def short(tx: Any) -> str:
    """A transaction id as the report shows it: its first 16 hex digits."""
    return f"{str(tx)[:16]}..." if tx else "-"


def prepared_lines(ready: dict[str, Any], orders: list[dict[str, Any]]) -> list[str]:
    """The ``payout batch ready`` event as a person checks it (predicted before sending)."""
    lines = ["PREDICTED by batch_payout_preparation (the node's energy estimates, priced "
             "before sending)",
             f"{'recipient':36} {'amount':>10} {'energy':>9} {'energy cost':>12} "
             f"{'activated':>10}",
             f"{'':36} {'USDT':>10} {'energy':>9} {'TRX':>12}"]
    rows = ready["recipients"]
    names = {name: str(figures.get("symbol") or name) for name, figures
             in (ready["onchain"].get("tokens") or {}).items()}
    for row in rows:
        token = row.get("token")
        amount = f"{row['amount']} {names.get(token, token)}" if token else row["amount"]
        lines.append(f"{row['recipient']:36} {amount:>10} {row['energy']:>9,} "
                     f"{row['energy_cost']:>12} {'yes' if row['activated'] else '':>10}")
    usdt = [row for row in rows if row.get("token") in (None, "", "USDT")]
    lines += [f"{'total':36} {_plain(_total(usdt, 'amount')):>10} {ready['total_energy']:>9,} "
              f"{_plain(_total(rows, 'energy_cost')):>12} {ready['activations']:>10}",
              "(energy: the node's estimate for the row's token; energy cost: each recipient's "
              "share, by energy, of what the energy orders cost; total amount: USDT)", "",
              f"transfers prepared      {ready['transfers']}",
              *(["by token                " + "; ".join(
                  f"{names.get(name, name)}: {t['transfers']} paying {t['amount']}, "
                  f"{t['energy']:,} energy" for name, t in ready["by_token"].items())]
                if len(ready.get("by_token") or {}) > 1 else []),
              f"recipients activated    {ready['activations']} ({ready['activation_cost']} TRX)"]
    chain, confirmation = ready["onchain"], ready["confirmation"]
    if chain.get("onchain"):
        wallet = chain["wallet"]
        lines += [f"hot wallet before       {wallet['trx']} TRX, {wallet['usdt']} USDT, "
                  f"{wallet['energy_available']:,} energy available",
                  f"energy needed           {ready['total_energy']:,} energy "
                  f"({chain['estimated_by_node']} transfers estimated by the node)",
                  f"energy on hand used     {ready['energy_on_hand_used']:,} energy "
                  "(the wallet's own: not rented, so not saved by renting)"]
    else:
        lines += [f"on-chain checks         none ({chain.get('reason')})",
                  f"energy needed           {ready['total_energy']:,} energy"]
    count = len(ready["orders"])
    lines.append(f"energy rented           {ready['energy_bought']:,} energy for "
                 f"{ready['rent_time']} h in {count} order{'' if count == 1 else 's'}:")
    for order in ready["orders"]:
        lines.append(f"   {order['mode']:10} {order['energy']:>9,} energy  {order['cost']:>10} "
                     f"TRX  {order['status']}  tx {short(order.get('tx_hash'))}")
    for tx in confirmation.get("confirmed", []):
        lines.append(f"   confirmed on chain: tx {short(tx['tx_hash'])} in block "
                     f"{tx['block_number']}{' (solidified)' if tx['solidified'] else ''}")
    if confirmation.get("onchain") is not False:
        lines.append(f"energy available after  {confirmation['energy_available']:,} energy")
    prices = ready.get("prices") or {}
    if prices:
        source = prices["source"]
        lines.append(
            f"burn prices             {prices['energy_sun']} sun per energy "
            f"({source['energy_price']}), {prices['bandwidth_sun']} sun per bandwidth byte "
            f"({source['bandwidth_price']}), {Decimal(prices['activation_sun']) / 10**6} TRX "
            f"per account ({source['activation_fee']}); USDT energy factor "
            f"{prices['energy_factor']} ({source['energy_factor']})")
    lines.append("")
    lines += money_lines(ready)
    lines.append(f"sandbox orders placed   {len(orders)} "
                 f"({sum(o['kind'] == 'activate' for o in orders)} activations)")
    return lines


def rental_provided(ready: dict[str, Any]) -> int:
    """Predicted: the energy renting provides (what the estimates need beyond what is on hand)."""
    return int(min(ready["energy_bought"], ready["total_energy"] - ready["energy_on_hand_used"]))


def money_lines(ready: dict[str, Any]) -> list[str]:
    """The event's money figures, each with what it compares (its ``figures``, shortened)."""
    provided = rental_provided(ready)
    sun = (ready.get("prices") or {}).get("energy_sun", "?")
    factor = ready["saving_factor"]
    rows = [
        ("paid for energy", ready["energy_cost"],
         "what the orders cost (the recipients' energy cost sums to it)"),
        ("burning instead", ready["burn_cost_bought"],
         f"the {provided:,} energy renting provided, burned at {sun} sun per energy"),
        ("saved by renting", ready["saving"],
         "burning instead - paid for energy"
         + (f" (burning costs {factor}x as much)" if factor else "")),
        ("renting it all", ready["whole_batch_rental_cost"],
         f"all {ready['total_energy']:,} energy at {ready['price_per_10k']} TRX per 10,000 energy"),
        ("saved by energy on hand", ready["saving_vs_whole_rental"],
         "renting it all - paid for energy"),
        ("burning it all", ready["burn_cost"],
         f"all {ready['total_energy']:,} energy burned, none on hand"),
        ("activations", ready["activation_cost"],
         f"{ready['activations']} recipient{'' if ready['activations'] == 1 else 's'} "
         "activated"),
        ("total spent", ready["total_cost"], "paid for energy + activations"),
    ]
    return ([f"{'money, predicted':24}{'TRX':>12}  what it compares"]
            + [f"{name:24}{value:>12}  {what}" for name, value, what in rows])


SENT_COLUMNS = (("charged", "payouts[].energy_total"),
                ("stake/rental", "payouts[].energy_from_stake"),
                ("burned", "payouts[].energy_burned"),
                ("TRX burned", "payouts[].trx_burned"))
"""The per-payout columns and the ``figures`` entry that says what each is."""


def sent_lines(sent: dict[str, Any]) -> list[str]:
    """Per recipient, what the chain did with its transfer (the ``payouts sent`` event)."""
    figures = sent.get("figures") or {}
    lines = ["MEASURED on chain by batch_payout_send (each transfer's receipt)",
             f"{'recipient':36} {'tx':19} {'block':>9} {'charged':>9} {'stake/rental':>12} "
             f"{'burned':>7} {'TRX burned':>10}  state",
             f"{'':36} {'':19} {'':>9} {'energy':>9} {'energy':>12} {'energy':>7} "
             f"{'TRX':>10}"]
    rows = sent["payouts"]
    for row in rows:
        lines.append(f"{row['recipient']:36} {short(row.get('txid')):19} "
                     f"{row.get('block') or '-':>9} {row.get('energy_total') or 0:>9,} "
                     f"{row.get('energy_from_stake') or 0:>12,} "
                     f"{row.get('energy_burned') or 0:>7,} {row.get('trx_burned') or '0':>10}  "
                     f"{row['state']}")
    lines.append(f"{'total':36} {'':19} {'':>9} {int(_total(rows, 'energy_total')):>9,} "
                 f"{int(_total(rows, 'energy_from_stake')):>12,} "
                 f"{int(_total(rows, 'energy_burned')):>7,} "
                 f"{_plain(_total(rows, 'trx_burned')):>10}")
    lines += [f"{name + ':':14}{figures.get(key, '?')}" for name, key in SENT_COLUMNS]
    lines.append(f"confirmed on  {confirmation_text(sent.get('confirmation'))}")
    return lines


def confirmation_text(confirmation: Any) -> str:
    """Which blocks the batch's receipts were confirmed on, as a person reads it."""
    if confirmation == "solidified":
        return "solidified blocks (final: no fork can leave them)"
    if confirmation == "head":
        return "head blocks (confirm_solidified=False: a fork may still drop a transfer)"
    if confirmation:
        return f"{confirmation} blocks (a fork may still drop those on the head)"
    return "no receipt yet"


def measured_lines(sent: dict[str, Any], ready: dict[str, Any]) -> list[str]:
    """The batch's measured figures next to what preparation predicted for the same thing."""
    figures = sent.get("figures") or {}
    on_hand = ready.get("energy_on_hand_used") or 0
    rows: list[tuple[str, str, Any, Any, str]] = [
        ("energy rented", "energy", sent["energy_rented"], None,
         figures.get("energy_rented", "")),
        ("energy charged", "energy", sent["energy_charged"], ready["total_energy"],
         figures.get("energy_charged", "")),
        ("charged / rented", "ratio", sent["charged_per_rented"], None,
         figures.get("charged_per_rented", "") + (
             f" (above 1: the wallet's own {on_hand:,} energy was drawn too)"
             if on_hand and sent["energy_charged"] > sent["energy_rented"] else "")),
        ("from stake and rentals", "energy", sent["energy_from_stake"], None,
         "energy the chain drew from the wallet's stake and rentals, not burned"),
        ("from the rental", "energy", sent["energy_from_rental"], rental_provided(ready),
         figures.get("energy_from_rental", "")),
        ("energy burned", "energy", sent["energy_burned"], max(0, ready["total_energy"]
                                                               - on_hand - ready["energy_bought"]),
         "energy the chain burned TRX for (the rental and stake fell short)"),
        ("TRX burned anyway", "TRX", sent["trx_burned"], None,
         figures.get("trx_burned", "") + (
             "; no energy burned, so all of it bandwidth"
             if not sent["energy_burned"] and Decimal(str(sent["trx_burned"])) else "")),
        ("bandwidth burned", "TRX", sent.get("bandwidth_burned"),
         (ready.get("onchain") or {}).get("bandwidth_burn"),
         figures.get("bandwidth_burned", "")),
        ("rental cost", "TRX", sent["rental_cost"], None,
         figures.get("rental_cost", "")),
        ("burning the rental used", "TRX", sent["burn_cost_of_rental_used"],
         ready["burn_cost_bought"], figures.get("burn_cost_of_rental_used", "")),
        ("saved by renting", "TRX", sent["saving_measured"], ready["saving"],
         figures.get("saving_measured", "")),
    ]

    def shown(value: Any) -> str:
        if value is None:
            return "-"
        return f"{value:,}" if isinstance(value, int) else str(value)

    return ([f"{'batch, measured on chain':24}{'measured':>12} {'predicted':>12}  "
             f"{'unit':6}  what it compares"]
            + [f"{name:24}{shown(value):>12} {shown(predicted):>12}  {unit:6}  {what}"
               for name, unit, value, predicted, what in rows]
            + ["(predicted: the same figure in the payout batch ready event; -: not a "
               "prediction (rented and paid are the orders', known before sending) or none made)"])


def report_lines(ready: dict[str, Any], sent: dict[str, Any], orders: list[dict[str, Any]],
                 new: list[int], credited: list[dict[str, Any]],
                 by_token: dict[str, int] | None = None) -> list[str]:
    """The whole report: predicted, then measured; the transactions each send run made (by
    token, as counted on chain) and the deposits the payout made."""
    txids = {p["txid"]: p["recipient"] for p in sent["payouts"]}
    return [*prepared_lines(ready, orders), "", *sent_lines(sent), "",
            *measured_lines(sent, ready), "",
            f"transactions sent       {new[0]} by the first run, {new[1]} by the second"
            " (counted on chain)",
            *(["payouts by token        " + ", ".join(
                f"{n} {token}" for token, n in sorted(by_token.items(),
                                                      key=lambda item: (-item[1], item[0])))
               + " (the first run's transactions on chain)"] if by_token else []),
            f"deposits credited       {len(credited)}: " + ", ".join(
                f"{d['amount']} {d['token']} to {d['to']} (tx {short(d['tx_hash'])}"
                + (", the payout to it)" if txids.get(d["tx_hash"]) == d["to"] else ")")
                for d in credited)]
