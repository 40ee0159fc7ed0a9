"""The chain's state machine: signed transactions accepted, packed into blocks, executed.

``broadcast`` checks a transaction as java-tron's ``Wallet.broadcastTransaction``
and ``Manager.processTransaction`` do, in their order (contract, expiration
against the next slot, signature, TAPOS, size, expiration window, duplicate, then
a dry run of bandwidth and the contract), and keeps an accepted one for the next
block. Blocks come from the clock (``blocks``), so packing is lazy: every read
of the world (``advance``) first executes the transactions of every block
produced since, each at its block's time and with its block's parameters, and a
background producer (``producer``) does it on time when nobody reads. Execution
and charging are ``charging``'s; this module reads the accounts it needs and
writes what the outcome moves, and queues the ``tron.transfer`` callback of a
monitored recipient as ``POST /sandbox/transfers`` does.

The dry run at broadcast sees the pending state, as java-tron's does
(``pending``: what the transactions still waiting for their block move for the
owner and the recipient is added to their accounts). A transaction that no
longer passes when its block comes is dropped (it never reaches a block).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from tronpy.proto import tron_pb2

from tronenergy_sandbox.chain import codec, views
from tronenergy_sandbox.chain.attacks import SimulatedTransfers
from tronenergy_sandbox.chain.charging import (
    AccountState,
    Outcome,
    Refusal,
    execute,
)
from tronenergy_sandbox.chain.codec import TRANSFER, TRIGGER, Decoded
from tronenergy_sandbox.chain.ledger import USDT_UNITS
from tronenergy_sandbox.chain.parameters import ParameterBook
from tronenergy_sandbox.chain.pending import PendingEffects, effects
from tronenergy_sandbox.chain.permissions import (
    AccountPermissions,
    PermissionUpdateError,
    sign_weight,
)
from tronenergy_sandbox.chain.tokens import TokenLedger
from tronenergy_sandbox.chain.update_contract import UPDATE
from tronenergy_sandbox.deliveries import DeliveryQueue
from tronenergy_sandbox.monitoring import Monitoring

MAX_TRANSACTION_BYTES = 500 * 1024
"""java-tron's ``TRANSACTION_MAX_BYTE_SIZE``."""
MAX_EXPIRATION_MS = 24 * 3600 * 1000
"""An expiration at most 24 h after the head block (``MAXIMUM_TIME_UNTIL_EXPIRATION``)."""
USDT_CONTRACT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
"""Mainnet's USDT, the default; the world's ``usdt_contract`` follows the sandbox's config."""

TRANSACTIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS chain_transactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, txid TEXT NOT NULL UNIQUE, owner TEXT NOT NULL,
    to_address TEXT, token TEXT NOT NULL, amount TEXT NOT NULL, raw_hex TEXT NOT NULL,
    signatures TEXT NOT NULL, block_number INTEGER NOT NULL, accepted_at REAL NOT NULL,
    status TEXT NOT NULL, info TEXT);
CREATE INDEX IF NOT EXISTS chain_transactions_due ON chain_transactions (status, block_number);
CREATE INDEX IF NOT EXISTS chain_transactions_owner ON chain_transactions (owner);
CREATE INDEX IF NOT EXISTS chain_transactions_to ON chain_transactions (to_address);
"""


class ChainTransactions(TokenLedger, AccountPermissions, PendingEffects, Monitoring,
                        DeliveryQueue, SimulatedTransfers):
    """Signed transactions from broadcast to receipt, as a part of the world's database."""

    usdt_contract: str = USDT_CONTRACT
    parameters: ParameterBook
    """The chain's fees and USDT's energy per block (the world creates it)."""

    def _init_transactions(self) -> None:
        self.db.executescript(TRANSACTIONS_SCHEMA)
        self._init_attacks()
        self._init_permissions()
        self._init_pending()

    def advance(self) -> None:
        """Orders up to now (``OrderBook``), then every block produced since: lazy packing.
        Not inside a solidity read (``solidified``): the caller advanced before it."""
        if self._as_of is not None:
            return
        super().advance()
        self.produce()
        self._prune_undo()

    # -- broadcast -------------------------------------------------------------------------

    def broadcast(self, tx: Decoded) -> Refusal | None:
        """Accept ``tx`` for the next block, or refuse it as java-tron would."""
        self.advance()
        if tx.contract_type is None:
            return Refusal("CONTRACT_VALIDATE_ERROR", "Contract validate error : No contract!")
        head = self.head_number()
        head_ms = int(self.block_time(head) * 1000)
        if tx.expiration < head_ms + int(self.block_seconds * 1000):
            return Refusal("TRANSACTION_EXPIRATION_ERROR", "Transaction expired")
        refused = self.permission_refusal(tx) or self._check_common(tx, head_ms)
        if refused is not None:
            return refused
        assert tx.owner is not None
        outcome = self._execute(tx, self.clock(), head + 1, pending=True)
        if isinstance(outcome, Refusal):
            return outcome
        self._accept(tx, head + 1)
        self._hold_pending(tx.txid, effects(tx, outcome))
        return None

    def pending(self) -> list[str]:
        """The txIDs accepted and not yet in a block (java-tron's pending list)."""
        self.advance()
        rows = self.db.execute("SELECT txid FROM chain_transactions WHERE status = 'pending' "
                               "ORDER BY seq").fetchall()
        return [str(row["txid"]) for row in rows]

    def pending_transaction(self, txid: str, visible: bool) -> dict[str, Any]:
        """``gettransactionfrompending``: a waiting transaction as java-tron prints one
        (``Util.printTransaction``: no ``ret`` yet), else ``{}``."""
        self.advance()
        row = self.db.execute("SELECT * FROM chain_transactions WHERE txid = ? AND status = "
                              "'pending'", (txid.lower(),)).fetchone()
        if row is None:
            return {}
        shown = codec.transaction_json(stored(row), visible)
        shown.pop("visible")
        return shown

    def _check_common(self, tx: Decoded, head_ms: int) -> Refusal | None:
        """TAPOS, size, the expiration window and duplicates (``Manager.processTransaction``)."""
        if not self.tapos_block(tx.ref_block_bytes, tx.ref_block_hash):
            return Refusal("TAPOS_ERROR", "Tapos check error.")
        size = tron_pb2.Transaction(raw_data=tx.raw, signature=list(tx.signatures)).ByteSize()
        if size > MAX_TRANSACTION_BYTES:
            return Refusal("TOO_BIG_TRANSACTION_ERROR",
                           f"Too big transaction, TxId {tx.txid}, the size is {size} bytes, "
                           f"maxTxSize {MAX_TRANSACTION_BYTES}")
        if not head_ms < tx.expiration <= head_ms + MAX_EXPIRATION_MS:
            return Refusal("TRANSACTION_EXPIRATION_ERROR", "Transaction expired")
        seen = self.db.execute("SELECT 1 FROM chain_transactions WHERE txid = ? AND status != "
                               "'dropped'", (tx.txid,)).fetchone()
        if seen is not None:
            return Refusal("DUP_TRANSACTION_ERROR", "Dup transaction.")
        return None

    def _accept(self, tx: Decoded, block: int) -> None:
        token, to, amount = _what_moves(tx, self.usdt_contract)
        self.db.execute(
            "INSERT INTO chain_transactions (txid, owner, to_address, token, amount, raw_hex,"
            " signatures, block_number, accepted_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " 'pending') ON CONFLICT (txid) DO UPDATE SET block_number = excluded.block_number,"
            " accepted_at = excluded.accepted_at, status = 'pending', info = NULL",
            (tx.txid, tx.owner, to, token, str(amount), tx.raw_hex(),
             json.dumps([s.hex() for s in tx.signatures]), block, self.clock()))

    # -- execution -------------------------------------------------------------------------

    def _account_state(self, address: str, at: float, free_net_limit: int,
                       contract: str | None) -> AccountState:
        """The account at ``at``, its usage recovered to the block produced by then; its
        units and holding of the token at ``contract`` (None: the transaction calls none)."""
        row = self._wallet_row(address)
        limit = self._energy_limit(address, at)
        used = self._usage(row, self.head_number(at))
        units = self.units_of(contract, address) if contract is not None else 0
        holds = contract is not None and self.holds_token(contract, address)
        if row is None:
            return AccountState(address, self.is_activated(address), energy_left=limit,
                                free_net_left=free_net_limit, token_units=units,
                                holds_token=holds)
        return AccountState(
            address, self.is_activated(address), trx_sun=int(row["trx_sun"]),
            token_units=units,
            energy_left=max(0, limit - used.energy),
            net_left=max(0, int(row["net_staked"]) - used.net),
            free_net_left=max(0, free_net_limit - used.free_net),
            holds_token=holds)

    def _execute(self, tx: Decoded, at: float, block: int, *,
                 pending: bool = False) -> Outcome | Refusal:
        """Run ``tx`` against the accounts as they stand at ``at`` (with ``pending``: and as
        the pending transactions leave them), with ``block``'s parameters."""
        params = self.parameters.current(block)
        assert tx.owner is not None
        token = None if tx.contract_type != TRIGGER or tx.contract_address is None \
            else self.token_energy(tx.contract_address, block)
        contract = tx.contract_address if token is not None else None
        free = params.free_net_limit
        owner = self._account_state(tx.owner, at, free, contract)
        _, to, _ = _what_moves(tx, self.usdt_contract)
        recipient = None if to is None else self._account_state(to, at, free, contract)
        if pending:
            owner = self._with_pending(owner, contract)
            recipient = None if recipient is None else self._with_pending(recipient, contract)
        return execute(tx, owner, recipient, token=token, params=params,
                       update_refusal=self._update_refusal(tx))

    def _update_refusal(self, tx: Decoded) -> str | None:
        """Why ``AccountPermissionUpdateActuator.validate`` refuses ``tx`` (None: it does
        not, or ``tx`` is no permission update)."""
        if tx.contract_type != UPDATE:
            return None
        try:
            self.new_permissions(tx.update)
        except PermissionUpdateError as exc:
            return str(exc)
        return None

    def next_packing_at(self) -> float | None:
        """When the next block holding a waiting transaction is produced (None: none waits)."""
        row = self.db.execute("SELECT MIN(block_number) FROM chain_transactions "
                              "WHERE status = 'pending'").fetchone()
        if row[0] is None or self.paused():
            return None  # resuming wakes the producer
        return self.block_time(int(row[0]))

    def produce(self) -> int:
        """Pack and execute the transactions of every block produced by now, and end the
        delegations whose time ran out, in the order they happened; how many transactions ran."""
        now = self.clock()
        head = self.head_number(now)
        due = self.db.execute(
            "SELECT * FROM chain_transactions WHERE status = 'pending' AND block_number <= ? "
            "ORDER BY block_number, seq", (head,)).fetchall()
        ending = self.db.execute("SELECT 1 FROM delegations WHERE returned = 0 AND until <= ? "
                                 "LIMIT 1", (now,)).fetchone()
        if not due and ending is None:
            return 0
        executed = 0
        with self._tx():
            for row in due:
                self._return_delegations(self.block_time(int(row["block_number"])))
                executed += self._pack(row)
            self._return_delegations(now)
        return executed

    def _pack(self, row: Any) -> int:
        """Execute one waiting transaction in its block, or drop it; 1 if it ran."""
        block = int(row["block_number"])
        at = self.block_time(block)
        tx = stored(row)
        self._release_pending(tx.txid)
        if tx.expiration < int(at * 1000):
            outcome: Outcome | Refusal = Refusal("TRANSACTION_EXPIRATION_ERROR",
                                                 "Transaction expired")
        else:
            outcome = self._execute(tx, at, block)
        with self._writing_in(block):
            return self._record(row, tx, outcome, block, at)

    def _record(self, row: Any, tx: Decoded, outcome: Outcome | Refusal, block: int,
                at: float) -> int:
        """Write a packed transaction's outcome (in its block: ``solid``'s undo records)."""
        if isinstance(outcome, Refusal):
            self.db.execute("UPDATE chain_transactions SET status = 'dropped', info = ? "
                            "WHERE seq = ?", (json.dumps({"code": outcome.code,
                                                          "message": outcome.message}),
                                              row["seq"]))
            return 0
        self._apply(tx, outcome, block)
        info = views.transaction_info(tx, outcome)
        self.db.execute("UPDATE chain_transactions SET status = 'executed', info = ? "
                        "WHERE seq = ?", (json.dumps(info), row["seq"]))
        if not outcome.failed and outcome.recipient is not None:
            self._notify(tx, outcome, block, at)
        return 1

    def _apply(self, tx: Decoded, outcome: Outcome, block: int) -> None:
        """Write what ``outcome`` moves in ``block``: fees, resources used (``recovery``),
        balances, new accounts, holders."""
        owner = tx.owner
        assert owner is not None
        self._ensure_wallet(owner)
        self.db.execute("UPDATE wallets SET trx_sun = trx_sun - ? WHERE address = ?",
                        (outcome.owner_trx_spent, owner))
        self._consume(owner, block, energy=outcome.energy_usage, net=outcome.net_usage,
                      staked_net=outcome.staked_net)
        if tx.contract_type == UPDATE:  # the permissions govern signatures from now on
            self.update_permissions(owner, tx.update)
        to = outcome.recipient
        if tx.contract_type == TRIGGER and tx.contract_address is not None:
            self._move_token(tx.contract_address, owner,
                             None if to is None or outcome.failed else to, outcome.units_moved)
        if to is None or outcome.failed or tx.contract_type != TRANSFER:
            return
        self._ensure_wallet(to)
        self.db.execute("UPDATE wallets SET trx_sun = trx_sun + ? WHERE address = ?",
                        (outcome.trx_moved, to))
        self.set_activated(to)

    def _notify(self, tx: Decoded, outcome: Outcome, block: int, at: float) -> None:
        """Queue the ``tron.transfer`` callback of a recipient monitored for this token."""
        token, _, _ = _what_moves(tx, self.usdt_contract)
        if token not in ("TRX", "USDT"):
            return  # the service's monitoring knows TRX and USDT only
        to = outcome.recipient
        assert to is not None
        url = self._watching_url(to, token)
        if url is None:
            return
        units = outcome.trx_moved if token == "TRX" else outcome.units_moved
        amount = (Decimal(units) / USDT_UNITS).normalize()
        data = {"tx_hash": tx.txid, "from": tx.owner, "to": to, "amount": format(amount, "f"),
                "token": token, "block_number": block, "block_timestamp": int(at * 1000)}
        self._enqueue(to, data, url, self.clock())

    # -- reads -----------------------------------------------------------------------------

    def _row(self, txid: str) -> Any:
        return self.db.execute("SELECT * FROM chain_transactions WHERE txid = ? AND status = "
                               "'executed'", (txid.lower(),)).fetchone()

    def transaction_info(self, txid: str, *, solidified: bool,
                         visible: bool = True) -> dict[str, Any]:
        """``gettransactioninfobyid``: a packed transaction's receipt, else a delegation's or a
        simulated transfer's, else ``{}``; the solidity API only once its block is solid."""
        self.advance()
        row = self._row(txid)
        if row is None:
            simulated = self._transfer_row(txid.lower())  # a simulated transfer: attacks.py
            if simulated is not None:
                last = self.solid_number() if solidified else self.head_number()
                return {} if simulated["block_number"] > last else \
                    self.transfer_receipt(simulated, visible)
            return self.simulated_receipt(txid.lower(), solidified=solidified)
        last = self.solid_number() if solidified else self.head_number()
        if row["block_number"] > last:
            return {}
        return views.with_block(json.loads(row["info"]), row["block_number"],
                                   self.block_time(row["block_number"]), visible)

    def block_receipts(self, number: int, *, solidified: bool = False,
                       visible: bool = True) -> list[dict[str, Any]]:
        """``gettransactioninfobyblocknum``: the receipts of block ``number``'s transactions in
        block order; ``[]`` for a block without any or not produced yet (not solid yet, on the
        solidity API), as java-tron answers both; a lagging backend (``lag``) answers ``[]``
        for the blocks it lacks. One read for a whole block: a sender following a batch
        reads blocks, not one receipt per transfer."""
        self.advance()
        last = self.served_last(solidified)
        if not 0 < number <= last:
            return []
        rows = self.db.execute("SELECT info FROM chain_transactions WHERE block_number = ? AND "
                               "status = 'executed' ORDER BY seq", (number,)).fetchall()
        at = self.block_time(number)
        return [views.with_block(json.loads(row["info"]), number, at, visible) for row in rows] \
            + self.simulated_block_receipts(number, visible)

    def transaction(self, txid: str, *, solidified: bool = False,
                    visible: bool = True) -> dict[str, Any]:
        """``gettransactionbyid``: a packed transaction as java-tron prints it, else ``{}``."""
        self.advance()
        row = self._row(txid)
        last = self.solid_number() if solidified else self.head_number()
        if row is None:
            return self.simulated_transaction(txid.lower(), solidified=solidified,
                                              visible=visible)
        if row["block_number"] > last:
            return {}
        return views.transaction_json(stored(row), json.loads(row["info"]), visible)

    def block_transactions(self, number: int, visible: bool = True) -> list[dict[str, Any]]:
        """The transactions packed into block ``number``, in order."""
        rows = self.db.execute("SELECT * FROM chain_transactions WHERE block_number = ? AND "
                               "status = 'executed' ORDER BY seq", (number,)).fetchall()
        return [views.transaction_json(stored(r), json.loads(r["info"]), visible)
                for r in rows]

    def chain_transactions(self, *, owner: str | None = None, to: str | None = None,
                           status: str = "executed") -> list[dict[str, Any]]:
        """The control API's list: transactions (executed by default) with their receipts."""
        self.advance()
        where, args = ["status = ?"], [status]
        for column, value in (("owner", owner), ("to_address", to)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        rows = self.db.execute(f"SELECT * FROM chain_transactions WHERE {' AND '.join(where)} "
                               "ORDER BY seq", args).fetchall()
        return [views.listing(row, self.block_time(row["block_number"]),
                              self._listed_decimals(row["token"])) for row in rows]

    def _listed_decimals(self, token: str) -> int | None:
        """The decimals a listed amount is shown in: TRX's and USDT's 6, else the token's."""
        return 6 if token in ("TRX", "USDT") else self.token_decimals(token)

    def transfer_refusal(self, owner: str, to: str, amount: int) -> str | None:
        """Why ``createtransaction`` refuses a TRX transfer (``TransferActuator.validate``)."""
        self.advance()
        fee = self.parameters.current().create_new_account_fee_in_system_contract
        if owner == to:
            return "Cannot transfer TRX to yourself."
        if not self.is_activated(owner):
            return "Validate TransferContract error, no OwnerAccount."
        if amount <= 0:
            return "Amount must be greater than 0."
        row = self._wallet_row(owner)
        need = amount + (0 if self.is_activated(to) else fee)
        if (int(row["trx_sun"]) if row else 0) < need:
            return "Validate TransferContract error, balance is not sufficient."
        return None

    def sign_weight(self, tx: Decoded, visible: bool) -> dict[str, Any]:
        """``getsignweight``: the permission ``tx`` names and the weight its signatures carry."""
        exists = tx.owner is not None and self.is_activated(tx.owner)
        return sign_weight(tx, self.permissions(tx.owner) if exists and tx.owner else None,
                           visible)


def stored(row: Any) -> Decoded:
    """A kept transaction, decoded again from its stored protobuf and signatures."""
    raw = tron_pb2.Transaction.raw.FromString(bytes.fromhex(row["raw_hex"]))
    return codec.decode(raw, [bytes.fromhex(s) for s in json.loads(row["signatures"])])


def _what_moves(tx: Decoded, usdt_contract: str) -> tuple[str, str | None, int]:
    """``(token, recipient, amount)``: TRX in sun, USDT in micro-units, another token (named
    by its contract address) in its units (a permission update moves no token: TRX, 0)."""
    if tx.contract_type == TRANSFER:
        return "TRX", tx.to, tx.amount
    if tx.contract_type == UPDATE:
        return "TRX", None, 0
    call = tx.transfer_call()
    token = "USDT" if tx.contract_address == usdt_contract else str(tx.contract_address)
    return token, None if call is None else call[0], 0 if call is None else call[1]
