"""Sending payouts on the sandbox chain from tests: a funded sender, its signer, a journal.

``Payouts`` wraps one :class:`~support.chain.Chain`: the node client the provider uses
(over HTTP, to the sandbox), a sender key funded with TRX and USDT, recipients, and a
payout journal in a file of the test's own. ``sender(...)`` builds a
:class:`PayoutSender` the way the operator does, on the chain's clock (the sandbox's
manual clock is the worker's clock here: ``blocks(n)`` is not a future head);
``count(txid...)`` counts on the chain (``GET /sandbox/chain/transactions``), which is
what every drill checks.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.payout.rows import Payout, payouts
from airflow_provider_tronenergy.payout.send import PayoutSender, SendSettings
from airflow_provider_tronenergy.payout.watch import PayoutWatch
from airflow_provider_tronenergy.signer import LocalKeySigner
from support.chain import USDT, Chain


class Payouts:
    """A funded sender on one sandbox chain, and what a test needs to send from it."""

    def __init__(self, chain: Chain, tmp_path: Path, *, trx: str = "1000",
                 usdt: str = "100000", staked: int | None = None,
                 journal_url: str | None = None) -> None:
        self.chain = chain
        self.key, self.address = chain.account(trx=trx, usdt=usdt, staked=staked)
        self.signer = LocalKeySigner(self.key.hex())
        self.node = TronNodeClient(chain.sandbox.root_url, usdt_contract=USDT, max_retries=0)
        self.journal = PayoutJournal(journal_url or f"sqlite:///{tmp_path / 'payouts.db'}")

    def close(self) -> None:
        self.node.close()
        self.journal.close()

    def recipients(self, count: int, *, holders: bool = True) -> list[str]:
        """Activated addresses (USDT holders unless told otherwise)."""
        return [self.chain.control.activated(holder=holders) for _ in range(count)]

    def rows(self, recipients: list[str], amount: str = "1.5", *, batch_id: str = "b1",
             ids: bool = False) -> list[Payout]:
        return payouts([{"recipient": r, "amount": amount,
                         **({"payout_id": f"{batch_id}-{i}"} if ids else {})}
                        for i, r in enumerate(recipients)], batch_id=batch_id)

    def sender(self, scope: str = "worker-1", node: Any = None, **settings: Any
               ) -> PayoutSender:
        energy_fee = self.node.get_chain_parameters().energy_fee
        confirm = settings.pop("confirm_node", None)
        clock = settings.pop("clock", self.chain.clock)
        cosigners = settings.pop("cosigners", ())
        return PayoutSender(self.journal, node or self.node, self.signer,
                            SendSettings(contract=USDT, **settings), scope=scope,
                            energy_fee_sun=energy_fee, clock=clock, confirm_node=confirm,
                            cosigners=cosigners)

    def watch(self, batch_id: str = "b1", **kwargs: Any) -> PayoutWatch:
        """The batch's watch, on the chain's clock (a manual one moves only when told)."""
        return PayoutWatch(self.journal, self.node, batch_id,
                           **{"clock": self.chain.clock, "solidified": False, **kwargs})

    def on_chain(self) -> list[dict[str, Any]]:
        """Every transaction the chain executed from the sender."""
        return self.chain.transactions(owner=self.address)

    def successes_per_recipient(self) -> Counter[str]:
        """Successful USDT transfers per recipient: exactly one each is the rule."""
        return Counter(t["to"] for t in self.on_chain()
                       if ((t.get("receipt") or {}).get("receipt") or {}).get("result")
                       == "SUCCESS")

    def usdt(self, address: str) -> Decimal:
        return Decimal(self.node.get_usdt_balance(address)) / 1_000_000
