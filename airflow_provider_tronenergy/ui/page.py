"""The Energy page as one HTML document: the figures of :func:`.data.page_data`, laid out.

Server-rendered: inline CSS, inline SVG charts (:mod:`.svg`), no script, nothing from
another origin, so it works offline and inside the UI's sandboxed iframe. Every value is
escaped. Links into Airflow's UI open in the top window (``target="_top"``): a DAG run,
a task's Required Actions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from decimal import Decimal
from html import escape
from typing import Any, Final
from urllib.parse import quote, urlencode

from airflow_provider_tronenergy.ui.svg import Series, amount, bars, meter

PRESETS: Final = (7, 30, 90, 365)
PAID, ACTIVATED, BURN, STORED, REDELIVERED = ("#2f6fb0", "#8bb5e0", "#d98c2b", "#3c8d5a",
                                              "#c0392b")
STYLE: Final = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:16px 20px;
color:#1f2933;background:#fff}h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;
margin:26px 0 8px;border-bottom:1px solid #e4e7eb;padding-bottom:4px}.muted{color:#616e7c}
form{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:10px 0}
input{font:inherit;padding:3px 6px}button{font:inherit;padding:3px 12px}
.presets a{margin-right:8px}.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{border:1px solid #e4e7eb;border-radius:6px;padding:8px 12px;min-width:150px}
.card b{display:block;font-size:18px}.card.alert{border-color:#c0392b;background:#fdf2f1}
table{border-collapse:collapse;width:100%;margin:6px 0}th,td{text-align:left;
padding:4px 8px;border-bottom:1px solid #eef0f2;vertical-align:top}th{font-weight:600;
background:#f7f8fa}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:12px;background:#f3f4f6;padding:1px 4px;border-radius:3px;
word-break:break-all}svg.chart{width:100%;max-width:880px;height:auto;display:block}
.grid{stroke:#e4e7eb}.tick,.label{font-size:11px;fill:#52606d}figure{margin:6px 0}
figcaption .key{margin-right:14px;font-size:12px}figcaption i{display:inline-block;
width:10px;height:10px;margin-right:4px;vertical-align:middle}
"""


def render(data: Mapping[str, Any], *, base: str, today: date, user: str) -> str:
    """The whole page (``base``: the UI's path prefix for links into it)."""
    period = data["period"]
    spend, chain = data["spend"], data["chain"]
    waiting, deposits = data["waiting"], data["deposits"]
    title = f"Energy, {period['first']} to {period['last']}"
    body = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">TRX spent on energy and activations, what burning would have '
        f"cost, what waits for a person, and the deposits the receiver stored. Days are UTC. "
        f"Read at {escape(data['generated_at'])} for {escape(user)} in "
        f"{data['timings_ms']['total']:.0f} ms.</p>",
        _period_form(period, today),
        _cards(spend["totals"], chain, waiting),
        _spend_section(spend),
        _chain_section(chain, data["orders_by_state"]),
        _tokens_section(data.get("tokens") or []),
        _waiting_section(waiting, base),
        _deposits_section(deposits, period),
        _batches_section(data["batches"], base),
        _sources(data["sources"], period),
    ]
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
            f"<body>{''.join(body)}</body></html>")


def _q(**params: str) -> str:
    return "?" + urlencode(params)


def _period_form(period: Mapping[str, Any], today: date) -> str:
    presets = " ".join(
        f'<a href="{escape(_q(**{"from": (today - timedelta(days=n - 1)).isoformat(), "to": today.isoformat()}))}">'  # noqa: E501
        f"last {n} days</a>" for n in PRESETS)
    return (f'<form method="get"><label>From <input type="date" name="from" '
            f'value="{escape(period["first"])}"></label><label>to <input type="date" '
            f'name="to" value="{escape(period["last"])}"></label><button>Show</button>'
            f'<span class="presets">{presets}</span></form>')


def _card(label: str, value: str, note: str = "", alert: bool = False) -> str:
    return (f'<div class="card{" alert" if alert else ""}"><span class="muted">'
            f"{escape(label)}</span><b>{escape(value)}</b>"
            f'<span class="muted">{escape(note)}</span></div>')


def _cards(totals: Mapping[str, Any], chain: Mapping[str, Any],
           waiting: Mapping[str, Any]) -> str:
    unknown, failed = waiting["purchases"]["count"], waiting["payouts"]["count"]
    return '<div class="cards">' + "".join([
        _card("TRX spent", f"{amount(Decimal(totals['spent_trx']))} TRX",
              f"energy {amount(Decimal(totals['energy_trx']))}, activations "
              f"{amount(Decimal(totals['activation_trx']))}"),
        _card("Burning would have cost", f"{amount(Decimal(totals['burn_trx']))} TRX"),
        _card("Saved", f"{amount(Decimal(totals['saving_trx']))} TRX"),
        _card("Energy rented", f"{chain['energy_rented']:,}", _n(totals["orders"], "order")),
        _card("Energy charged to payouts", f"{chain['energy_charged']:,}",
              f"TRX burned anyway {amount(Decimal(chain['trx_burned']))}"),
        _card("Waiting for a person", f"{unknown + failed}",
              f"{_n(unknown, 'purchase')}, {_n(failed, 'payout')}",
              alert=bool(unknown + failed)),
    ]) + "</div>"


def _spend_section(spend: Mapping[str, Any]) -> str:
    days = spend["days"]
    labels = [d["day"][5:] for d in days]
    every = max(1, len(days) // 12)
    chart = bars(labels, [
        [Series("energy", PAID, [Decimal(d["energy_trx"]) for d in days]),
         Series("activations", ACTIVATED, [Decimal(d["activation_trx"]) for d in days])],
        [Series("burning would have cost", BURN, [Decimal(d["burn_trx"]) for d in days])],
    ], title="TRX spent per day, and what burning would have cost", every=every)
    unpriced = spend["totals"]["without_figures"]
    note = (f'<p class="muted">{_n(unpriced, "placed order")} resolved by a person with '
            "only an order id: no cost in the journal, not counted.</p>" if unpriced else "")
    rows = "".join(
        f"<tr><td>{escape(d['day'])}</td><td class=n>{d['orders']:,}</td>"
        f"<td class=n>{d['energy']:,}</td><td class=n>{_trx(d['energy_trx'])}</td>"
        f"<td class=n>{d['activations']:,}</td><td class=n>{_trx(d['activation_trx'])}</td>"
        f"<td class=n>{_trx(d['burn_trx'])}</td><td class=n>{_trx(d['saving_trx'])}</td></tr>"
        for d in reversed(days) if d["orders"] or d["activations"])
    table = (_table(["Day", "Orders", "Energy", "Energy TRX", "Activations",
                     "Activation TRX", "Burning would cost", "Saved"], rows,
                    numeric=range(1, 8)) if rows else '<p class="muted">Nothing bought.</p>')
    return (f"<h2>Spend against burning</h2>{chart}{note}"
            f"<details><summary>Per day</summary>{table}</details>")


def _chain_section(chain: Mapping[str, Any], states: Mapping[str, int]) -> str:
    chart = meter([("energy rented", chain["energy_rented"], PAID),
                   ("charged to payouts", chain["energy_charged"], BURN),
                   ("of it from stake and rentals", chain["energy_from_stake"], ACTIVATED),
                   ("of it burned for", chain["energy_burned"], REDELIVERED)],
                  title="Energy rented against the energy the chain charged", unit="energy")
    ratio = chain["charged_per_rented"]
    state_rows = "".join(f"<tr><td>{escape(state)}</td><td class=n>{n:,}</td></tr>"
                         for state, n in states.items())
    return (f"<h2>Energy rented and used</h2>{chart}<p>{chain['transactions']:,} payout "
            f"transactions reached a block ({chain['failed_on_chain']:,} failed on chain); "
            f"they burned {_trx(chain['trx_burned'])} TRX anyway"
            + (f"; the chain charged {escape(ratio)} of the energy rented" if ratio else "")
            + ".</p><h2>Orders by status</h2>"
            + _table(["Journal state", "Purchase attempts"], state_rows, numeric=[1]))


def _tokens_section(tokens: Sequence[Mapping[str, Any]]) -> str:
    """Per token: its amounts in its own units (never added to another's), the energy the
    chain charged its contract, the TRX its transactions burned; the symbol is the
    contract's own text, escaped like every value."""
    rows = []
    for t in tokens:
        name = escape(str(t["symbol"] or "no symbol()"))
        link = (f'<a href="{escape(t["explorer"])}" target="_blank" rel="noopener noreferrer">'
                f"{name}</a>" if t.get("explorer") else name)
        contract = f"<br><code>{escape(t['contract'])}</code>" if t.get("contract") else ""
        paid = (f"{exact(t['amount_paid'])} {name}" if t["amount_paid"] is not None else
                f"{exact(t['units_paid'])} smallest units (no payouts sent event named its "
                "decimals)")
        rows.append(
            f"<tr><td>{link}{contract}</td><td class=n>{t['confirmed']:,}</td><td class=n>"
            f"{paid}</td><td class=n>{t['transactions']:,}</td><td class=n>"
            f"{t['energy_charged']:,}</td><td class=n>{_trx(t['trx_burned'])}</td></tr>")
    return ("<h2>Payouts by token</h2>" + (_table(
        ["Token", "Confirmed payouts", "Paid", "Transactions", "Energy charged",
         "TRX burned"], "".join(rows), numeric=[1, 2, 3, 4, 5]) if rows else
        '<p class="muted">No payout in this period.</p>'))


def exact(value: str) -> str:
    """An exact decimal amount with its thousands separated and every decimal kept (an
    18-decimal amount is never cut to six)."""
    whole, _, fraction = str(value).partition(".")
    sign = "-" if whole.startswith("-") else ""
    grouped = f"{int(whole.lstrip('-') or '0'):,}"
    return escape(sign + grouped + (f".{fraction}" if fraction else ""))


def _task_link(task: Mapping[str, Any] | None, base: str) -> str:
    if not task:
        return ""
    path = (f"{base}/dags/{quote(task['dag_id'], safe='')}/runs/"
            f"{quote(task['run_id'], safe='')}/tasks/{quote(task['task_id'], safe='')}/"
            f"required_actions?map_index={int(task['map_index'])}")
    return (f'<a href="{escape(path)}" target="_top">Required Action of '
            f"{escape(task['dag_id'])}.{escape(task['task_id'])}</a> (when its DAG asks)")


def _commands(commands: Sequence[str]) -> str:
    return "<br>".join(f"<code>{escape(c)}</code>" for c in commands)


def _waiting_section(waiting: Mapping[str, Any], base: str) -> str:
    purchases, payouts = waiting["purchases"], waiting["payouts"]
    p_rows = "".join(
        f"<tr><td><code>{escape(p['identity'])}</code><br>{escape(p['description'])}</td>"
        f"<td>{escape(p['sent_at'])}"
        f"{'<br><i>may still be in flight</i>' if p['in_flight'] else ''}</td>"
        f"<td>{escape(p['what'])}<br>{_commands(p['commands'])}<br>"
        f"{_task_link(p['task'], base)}</td></tr>" for p in purchases["listed"])
    o_rows = "".join(
        f"<tr><td><code>{escape(p['identity'])}</code><br>batch {escape(p['batch_id'])}, "
        f"{escape(str(p['amount']))} to {escape(p['recipient'])}</td>"
        f"<td>{escape(str(p['failed_at']))}<br>tx <code>{escape(str(p['txid']))}</code></td>"
        f"<td>{escape(p['what'])}<br>{_commands(p['commands'])}<br>"
        f"{_task_link(p['task'], base)}</td></tr>" for p in payouts["listed"])
    head = ["What", "When", "What to do"]
    return ("<h2>Waiting for a person</h2>"
            f"<h3>Purchases with an unknown outcome: {purchases['count']:,}</h3>"
            + (_table(head, p_rows) if p_rows else '<p class="muted">None.</p>')
            + f"<h3>Payouts failed on chain: {payouts['count']:,}</h3>"
            + (_table(head, o_rows) if o_rows else '<p class="muted">None.</p>'))


def _deposits_section(deposits: Mapping[str, Any], period: Mapping[str, Any]) -> str:
    stored, duplicates = deposits["stored_per_hour"], deposits["duplicates_per_hour"]
    first = date.fromisoformat(period["first"])
    if len(stored) <= 24 * 31:
        labels = [f"{(first + timedelta(hours=h)).isoformat()[5:]} {h % 24:02d}h"
                  for h in range(len(stored))]
        step, unit = 1, "hour"
    else:  # a long period: the same counts, a bar per day
        step, unit = 24, "day"
        labels = [(first + timedelta(days=d)).isoformat()[5:]
                  for d in range(len(stored) // 24)]
    s = [Decimal(sum(stored[i:i + step])) for i in range(0, len(stored), step)]
    d = [Decimal(sum(duplicates[i:i + step])) for i in range(0, len(duplicates), step)]
    chart = bars(labels, [[Series("stored", STORED, s, "callbacks"),
                           Series("redelivered", REDELIVERED, d, "callbacks")]],
                 title=f"Callbacks stored per {unit}", every=max(1, len(labels) // 12))
    conflicts = deposits["conflicts"]
    c_rows = "".join(
        f"<tr><td><code>{escape(c['tx_hash'])}</code></td><td>{escape(', '.join(c['fields']))}"
        f"</td><td>{escape(c['amount'])} {escape(c['token'])} to {escape(c['to'])}</td>"
        f"<td>{escape(str(c['at']))}</td></tr>" for c in conflicts["recent"])
    lag = deposits["lag"]
    l_rows = "".join(
        f"<tr><td>{escape(c['consumer'])}</td><td class=n>{c['offset']:,}</td>"
        f"<td class=n>{c['behind']:,}{'+' if c['behind_more'] else ''}</td>"
        f"<td>{escape(str(c['oldest_waiting_since'] or '-'))}</td>"
        f"<td class=n>{_duration(c['lag_seconds'])}</td></tr>" for c in lag["consumers"])
    return (f"<h2>Deposits</h2><p>{_n(deposits['stored'], 'callback')} stored, "
            f"{_n(deposits['duplicates'], 'redelivery', 'redeliveries')} answered as "
            f"duplicates, {_n(conflicts['count'], 'conflict')} kept.</p>{chart}"
            + _claims(deposits.get("claims"))
            + f"<h3>Conflicting callbacks: {conflicts['count']:,}</h3>"
            + (_table(["tx_hash", "Differs in", "Refused body", "At"], c_rows)
               if c_rows else '<p class="muted">None.</p>')
            + f"<h3>Consumers (the store's newest id: {lag['newest_id']:,})</h3>"
            + (_table(["Consumer", "Offset", "Behind", "Oldest waiting since", "Lag"],
                      l_rows, numeric=[1, 2, 4]) if l_rows else
               '<p class="muted">No consumer has read the store yet.</p>'))


def _claims(claims: Mapping[str, Any] | None) -> str:
    """Callbacks the chain has not proven (the deposit ledger's claims)."""
    if claims is None:
        return ""
    counts = claims["counts"]
    rows = "".join(
        f"<tr><td>{escape(c['state'])}</td><td>{escape(c['reason'])}: {escape(c['meaning'])}"
        f"</td><td>{escape(c['amount'])} {escape(c['token'])} to {escape(c['to'])}</td>"
        f"<td><code>{escape(c['command'])}</code></td></tr>" for c in claims["open"])
    return (f"<h3>Not proven on chain: {counts['waiting']:,} waiting, "
            f"{counts['disputed']:,} disputed</h3>"
            + (_table(["State", "Why", "The callback said", "Look"], rows) if rows else
               '<p class="muted">None: every stored callback into a deposit address is '
               "credited or was dismissed.</p>"))


def _batches_section(batches: Mapping[str, Any], base: str) -> str:
    rows = []
    for b in batches["batches"]:
        approval = b["approval"]
        who = (escape(str(approval.get("by") or "-"))
               + (" (timed out)" if approval.get("timed_out") else "")
               + ("" if approval.get("approved") in (None, True) else " (rejected)")
               if approval["required"] else "not needed")
        run = ""
        if b["dag_id"] and b["run_id"]:
            path = (f"{base}/dags/{quote(b['dag_id'], safe='')}/runs/"
                    f"{quote(b['run_id'], safe='')}")
            run = f'<a href="{escape(path)}" target="_top">{escape(b["run_id"])}</a>'
        sent = b["sent"] or {}
        chain = sent.get("chain") or {}
        states = ", ".join(f"{n} {escape(s)}" for s, n in sorted(sent.get("states", {}).items()))
        rows.append(
            f"<tr><td>{escape(str(b['batch_id']))}<br><span class=muted>{escape(b['at'])}"
            f"</span></td><td class=n>{b['recipients'] if b['recipients'] is not None else '-'}"
            f"</td><td class=n>{b['energy']:,}</td><td class=n>{_trx(b['total_trx'])}</td>"
            f"<td class=n>{_trx(b['saving_trx'])}</td><td>{who}</td><td>{run}</td>"
            f"<td>{states or '-'}"
            + (f"<br>energy {chain.get('energy_total', 0):,}, burned "
               f"{_trx(chain.get('trx_burned', '0'))} TRX" if chain else "")
            + _confirmation(sent.get("confirmation")) + "</td></tr>")
    more = (f'<p class="muted">The newest {batches["listed"]} of {batches["count"]:,} '
            "batches.</p>" if batches["count"] > batches["listed"] else "")
    return ("<h2>Batches</h2>" + (_table(
        ["Batch", "Recipients", "Energy", "Cost TRX", "Saved TRX", "Approved by",
         "DAG run", "Payouts sent"], "".join(rows), numeric=[1, 2, 3, 4])
        if rows else '<p class="muted">No payout batch ready event in this period.</p>')
        + more)


def _confirmation(confirmation: Any) -> str:
    """Which blocks a batch's receipts were confirmed on; the head is marked: a fork may
    still leave it."""
    if not confirmation:
        return ""
    text = escape(str(confirmation))
    return (f"<br>confirmed on {text} blocks"
            + (" (a fork may still leave the head)" if "head" in text else ""))


def _sources(sources: Mapping[str, Any], period: Mapping[str, Any]) -> str:
    items = "".join(f"<li>{escape(name.replace('_', ' '))}: <code>{escape(str(url))}</code>"
                    "</li>" for name, url in sources.items())
    data = escape(_q(**{"from": period["first"], "to": period["last"]}))
    return (f'<h2>Where this comes from</h2><ul class="muted">{items}</ul>'
            f'<p class="muted">The same figures as JSON: <a href="energy.json{data}">'
            "energy.json</a>.</p>")


def _table(head: Sequence[str], rows: str, numeric: Any = ()) -> str:
    cells = "".join(f'<th{" class=n" if i in numeric else ""}>{escape(h)}</th>'
                    for i, h in enumerate(head))
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{rows}</tbody></table>"


def _n(count: int, word: str, plural: str = "") -> str:
    """``1 order``, ``2 orders``."""
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


def _trx(value: str) -> str:
    return escape(amount(Decimal(value)))


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172_800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86_400} days"
