"""Extra links from a task to the block explorer: its delegations, activations, payouts.

Airflow 3 asks an operator's links for their URLs in the worker, as the task ends
(succeeded, failed or deferred), and keeps each URL as an XCom (``_link_<class>``)
that the UI reads. So an operator that makes transactions pushes what its link needs,
as soon as it knows it, under :data:`XCOM_KEY`: the explorer's root (its connection's
``explorer_url``), how many transactions and their identifiers; never a secret. A task
that failed after sending keeps its link; one that made nothing shows none.

One link per kind of transaction, because Airflow's links are fixed per operator and
give one URL each: the transaction's page when the task made exactly one; else the
page of the one address they all touch (a payout batch's sender, the wallet a batch of
orders delegates to), whose history lists them; else none (the task's return value
lists every transaction id). A payout batch that moved one TRC-20 token also links its
token's page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

from airflow.providers.common.compat.sdk import BaseOperatorLink, XCom

from airflow_provider_tronenergy.orders.wait import Log
from tronenergy_protocol.explorer import Explorer, explorer_of

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import BaseOperator, Context, TaskInstanceKey

XCOM_KEY: Final = "tron_explorer"
"""The XCom an operator pushes for its link: explorer root, kind, count, txid, address."""


def explorer_trail(explorer: Explorer, kind: str, *, count: int, txids: Iterable[str],
                   addresses: Iterable[str],
                   contracts: Iterable[str | None] = ()) -> dict[str, Any]:
    """What a link of ``kind`` needs, and no more: a batch of 10,000 payouts stores one
    address, not 10,000 ids (the return value has them).

    :param count: transactions the task made or ordered (an order whose delegation is not
        made yet counts: its receiver's page will show it).
    :param txids: the ids known of them.
    :param addresses: the address each touches (receiver of energy, activated, sender).
    :param contracts: the TRC-20 contract each transfers (None: TRX); a batch paying one
        token keeps it, for the token's page.
    """
    known = [txid for txid in txids if txid]
    distinct = set(addresses)
    tokens = set(contracts)
    trail = {"explorer": explorer.root, "kind": kind, "count": count,
             "txid": known[0] if count == 1 and len(known) == 1 else "",
             "address": distinct.pop() if len(distinct) == 1 else ""}
    token = tokens.pop() if len(tokens) == 1 else None
    return {**trail, "token": token} if token else trail


def publish(context: Context, explorer: Callable[[], Explorer], kind: str, *, count: int,
            txids: Iterable[str], addresses: Iterable[str], log: Log,
            contracts: Iterable[str | None] = ()) -> None:
    """Push the task's :func:`explorer_trail` (a later push in the same try replaces it).

    ``explorer`` reads the connection's root (checked before anything was bought or
    signed). A link never decides a task: money has moved by now, so a failure to
    publish is logged, not raised.
    """
    if count < 1:
        return
    try:
        context["ti"].xcom_push(key=XCOM_KEY, value=explorer_trail(
            explorer(), kind, count=count, txids=txids, addresses=addresses,
            contracts=contracts))
    except Exception as exc:
        log.warning("no %s link to the block explorer for this task: %s", kind, exc)


def link_for(trail: Any, kind: str) -> str:
    """The URL a link of ``kind`` shows for a pushed trail; ``""`` when there is none."""
    if not isinstance(trail, Mapping) or trail.get("kind") != kind:
        return ""
    count = trail.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return ""
    explorer = explorer_of(trail.get("explorer"))  # checked again: XCom is writable by tasks
    txid, address = trail.get("txid"), trail.get("address")
    if count == 1 and isinstance(txid, str) and txid:
        return explorer.transaction(txid)
    return explorer.address(address) if isinstance(address, str) and address else ""


def token_link_for(trail: Any, kind: str) -> str:
    """The token's page (``<root>/#/token20/<contract>``) for a trail of ``kind`` whose
    transactions all moved one TRC-20 token; ``""`` otherwise (TRX, several tokens)."""
    if not isinstance(trail, Mapping) or trail.get("kind") != kind:
        return ""
    token = trail.get("token")
    if not isinstance(token, str) or not token:
        return ""
    return explorer_of(trail.get("explorer")).token(token)  # checked again, as link_for


class _TronExplorerLink(BaseOperatorLink):
    """A link to the task's transactions of one kind, read from the task's XCom only."""

    kind: ClassVar[str] = ""

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        """The explorer URL, or ``""`` (Airflow shows no link) when the task made none."""
        return link_for(XCom.get_value(ti_key=ti_key, key=XCOM_KEY), self.kind)


class TronEnergyDelegationLink(_TronExplorerLink):
    """An energy order's delegation: the transaction, or the receiving wallet's page."""

    name = "TronScan: delegation"
    kind = "delegation"


class TronEnergyActivationLink(_TronExplorerLink):
    """An activation: the transaction, or the activated address's page."""

    name = "TronScan: activation"
    kind = "activation"


class TronPayoutLink(_TronExplorerLink):
    """A payout batch: the one transaction, or the sender's page (every payout in its list)."""

    name = "TronScan: payouts"
    kind = "payout"


class TronPayoutTokenLink(BaseOperatorLink):
    """A payout batch of one TRC-20 token: the token's page (holders, transfers, decimals)."""

    name = "TronScan: token"

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        """The token's page, or ``""`` (no link) for TRX or a batch of several tokens."""
        return token_link_for(XCom.get_value(ti_key=ti_key, key=XCOM_KEY), "payout")

