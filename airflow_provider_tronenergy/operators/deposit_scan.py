"""The deposit scan in Airflow: credit every deposit the chain holds, callback or not.

:class:`TronNodeDepositScanOperator` runs :class:`~airflow_provider_tronenergy.deposits.scan.core.
DepositScan` for each token it watches (``USDT``, ``TRX`` and any TRC-20 named by its
contract's address, whose decimals and symbol are read from the contract once per try:
``deposits.scan.tokens``) in the worker:
from the ledger's checkpoint up to the block it may trust, crediting what it finds. With
``follow_for_seconds`` it then follows the chain for that long: it waits until the head moves past
its checkpoint (the one rule, ``deposits.scan.wait.HeadWatch``: in the triggerer through
:class:`~airflow_provider_tronenergy.triggers.deposit_scan.TronNodeDepositScanTrigger` when
``deferrable``, else in the worker) and scans again, so a deposit is credited within about
one ``scan_interval_seconds`` of its block's solidification. Without
``follow_for_seconds``, one pass (a DAG scheduled every few minutes is the simple mode).

Bad input (an address not base58check, a setting out of range, a contract that answers no
``decimals()``) fails the task before anything is credited, and is not retried; a node or
ledger that fails is retried as usual (nothing is credited twice: the ledger's key decides).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from airflow.configuration import conf
from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseOperator,
)

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.deposits.scan.core import DepositScan, ScanReport
from airflow_provider_tronenergy.deposits.scan.settings import (
    ScanSettings,
    ScanSettingsError,
    checked_addresses,
    checked_token,
)
from airflow_provider_tronenergy.deposits.scan.tokens import resolve_all
from airflow_provider_tronenergy.deposits.scan.wait import NODE_NEEDED, HeadWatch, wait_for_head
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.templated import as_decimal, optional_text
from airflow_provider_tronenergy.triggers.deposit_scan import TronNodeDepositScanTrigger

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

NOTHING_READ = "nothing was read or credited"
SETTINGS = ("start", "max_blocks_per_run", "max_concurrency", "max_requests_per_second",
            "confirmations", "blocks_per_range")


class TronNodeDepositScanOperator(BaseOperator):
    """Credit every transfer of the watched tokens into ``addresses`` that the chain holds.

    :param addresses: the deposit addresses (base58check); templated.
    :param tokens: ``["USDT"]`` (the node connection's network's USDT), ``"TRX"`` too when
        TRX deposits are watched, and any TRC-20 by its contract's address (``T...``) or a
        name of the node connection's ``tokens`` extra, each credited by its contract
        (docs/deposit-scan.md); templated.
    :param start: a first run's first block, or ``"solid"`` (the head it may trust now);
        the earliest registration block of the addresses wins when earlier
        (docs/deposit-scan.md); templated.
    :param max_blocks_per_run: blocks one pass reads at most; templated.
    :param max_concurrency: reads in flight at once; templated.
    :param max_requests_per_second: node requests per second at most; templated.
    :param confirmations: empty: solidified blocks only; N: N below the head; templated.
    :param blocks_per_range: blocks per ``getblockbylimitnext`` (TRX); templated.
    :param follow_for_seconds: seconds to follow the chain after the first pass (0: one
        pass); templated.
    :param scan_interval_seconds: seconds between two reads of the head while following;
        templated.
    :param deferrable: wait between passes in the triggerer (default ``[operators]
        default_deferrable``).
    :param tron_node_conn_id: the ``tron_node`` connection; templated.

    The ledger is the configured one (``$TRONENERGY_DEPOSITS_DB``, ``[tronenergy]
    deposits_ledger``, or the SQLite file in ``$AIRFLOW_HOME``). Returns, per token (``TRX``,
    ``USDT``, or a contract's address), what the last pass read and the counts of every pass
    (``passes``, ``credited_count``).
    """

    template_fields: Sequence[str] = ("addresses", "tokens", *SETTINGS, "follow_for_seconds",
                                      "scan_interval_seconds", "tron_node_conn_id")
    ui_color = "#d6eaf8"

    def __init__(self, *, addresses: str | Sequence[str],
                 tokens: Sequence[str] = ("USDT",), start: int | str = "solid",
                 max_blocks_per_run: int | str = 28_800, max_concurrency: int | str = 8,
                 max_requests_per_second: float | str = 20, confirmations: int | str | None = None,
                 blocks_per_range: int | str = 50, follow_for_seconds: float | str = 0,
                 scan_interval_seconds: float | str = 30,
                 deferrable: bool = conf.getboolean("operators", "default_deferrable",
                                                    fallback=False),
                 tron_node_conn_id: str = TronNodeHook.default_conn_name,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.addresses = addresses
        self.tokens = tokens
        self.start = start
        self.max_blocks_per_run = max_blocks_per_run
        self.max_concurrency = max_concurrency
        self.max_requests_per_second = max_requests_per_second
        self.confirmations = confirmations
        self.blocks_per_range = blocks_per_range
        self.follow_for_seconds = follow_for_seconds
        self.scan_interval_seconds = scan_interval_seconds
        self.deferrable = deferrable
        self.tron_node_conn_id = tron_node_conn_id

    def _checked(self) -> tuple[frozenset[str], list[str], ScanSettings, float, float]:
        """The task's values, checked before anything is read."""
        try:
            addresses = checked_addresses(self.addresses)
            tokens = [self.tokens] if isinstance(self.tokens, str) else list(self.tokens or [])
            symbols = [checked_token(t) for t in tokens]
            if not symbols or len(set(symbols)) != len(symbols):
                raise ScanSettingsError("tokens must name USDT, TRX or TRC-20 contracts "
                                        "(T...), each once")
            settings = ScanSettings.from_values({n: getattr(self, n) for n in SETTINGS})
            follow_for = float(as_decimal(self.follow_for_seconds or 0, "follow_for_seconds"))
            interval = float(as_decimal(self.scan_interval_seconds, "scan_interval_seconds"))
        except ValueError as exc:
            raise AirflowFailException(f"{exc}; {NOTHING_READ}") from None
        if follow_for < 0 or not interval > 0:
            raise AirflowFailException(f"follow_for_seconds must be 0 or more and "
                                       f"scan_interval_seconds above 0; {NOTHING_READ}")
        return addresses, symbols, settings, follow_for, interval

    def execute(self, context: Context) -> dict[str, Any]:
        """One pass; then, with ``follow_for_seconds``, follow the chain until it is up."""
        _, _, _, follow_for, _ = self._checked()
        return self._follow(context, time.time() + follow_for, {})

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> dict[str, Any]:
        """The head moved (scan again and wait again), or the time is up. The trigger's
        event carries the deadline and the counts so far (figures only)."""
        carried = {str(token): list(counts) for token, counts in
                   (event.get("carried") or {}).items()}
        if event.get("status") == "error":
            _failed(event)
        if event.get("status") == "timeout":
            return {token: {"passes": n, "credited_total": total}
                    for token, (n, total) in carried.items()}
        return self._follow(context, float(event["end_time"]), carried)

    def _follow(self, context: Context, end_time: float, carried: dict[str, list[int]]
                ) -> dict[str, Any]:
        addresses, tokens, settings, _, interval = self._checked()
        from airflow_provider_tronenergy.deposits.ledger import DepositLedger

        with as_airflow():  # names no connection, or a node on another chain: failed for good
            node = TronNodeHook.required(optional_text(self.tron_node_conn_id),
                                         needs=NODE_NEEDED)
            node.check_chain()
        try:
            with as_airflow():  # a ledger on one host's file where tasks run on several
                ledger = DepositLedger()
        except BaseException:
            node.close()
            raise
        try:
            with as_airflow():  # a contract that answers no decimals(): failed for good
                kinds = resolve_all(node.get_conn(), tokens)  # each read once this try
            if len({kind.scope for kind in kinds}) != len(kinds):
                raise AirflowFailException(f"tokens name one contract twice ({', '.join(tokens)})"
                                           f"; {NOTHING_READ}")
            while True:
                scans = [DepositScan(ledger, node.get_conn(), addresses, token=kind,
                                     settings=settings, log=self.log) for kind in kinds]
                totals = _added(carried, [scan.run(credited_by=context["run_id"])
                                          for scan in scans])
                carried = {token: [row["passes"], row["credited_total"]]
                           for token, row in totals.items()}
                if time.time() >= end_time:
                    return totals
                after = min(scan.checkpoint() or 0 for scan in scans)
                if self.deferrable:
                    self.defer(trigger=TronNodeDepositScanTrigger(
                        tron_node_conn_id=self.tron_node_conn_id, after_block=after,
                        confirmations=settings.confirmations, poll_interval_seconds=interval,
                        end_time=end_time, carried=carried), method_name="execute_complete")
                event = wait_for_head(scans[0].tip, HeadWatch(
                    after, poll_interval=interval, end_time=end_time, log=self.log))
                if event["status"] == "error":
                    _failed(event)
                if event["status"] == "timeout":
                    return totals
        finally:
            ledger.close()
            node.close()


def _failed(event: Mapping[str, Any]) -> NoReturn:
    """A wait's ``error``: failed once when no retry helps (``"retryable": false``: a node
    connection that names nothing or is malformed, a node on another chain), else retried."""
    message = f"deposit scan: {event.get('message')}"
    if event.get("retryable") is False:
        raise AirflowFailException(message)
    raise AirflowException(message)


def _added(carried: dict[str, list[int]], reports: list[ScanReport]) -> dict[str, Any]:
    """The last pass per token, with every pass's counts added up (JSON-safe)."""
    added: dict[str, Any] = {}
    for report in reports:
        passes, total = carried.get(report.key, [0, 0])
        row = report.to_dict()
        row["passes"] = passes + 1
        row["credited_total"] = total + row["credited_count"]
        added[report.key] = row
    return added
