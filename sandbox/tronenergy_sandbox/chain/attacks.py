"""The world deposit attacks come from, and simulated transfers as the chain records them.

A simulated transfer (``POST /sandbox/transfers``) is a transaction of the chain: its
receipt carries the ``Transfer`` log of USDT's contract (a TRC-20 transfer) and
``gettransactionbyid`` prints a ``TransferContract`` for TRX, as java-tron does
(``views`` prints signed transactions the same way), in ``gettransactioninfobyid`` and
in its block's ``gettransactioninfobyblocknum``. What a deposit is proven by is
therefore there to read.

``POST /sandbox/attacks/transfer`` (``attack_routes``) makes the transfers a deposit
ledger must not be fooled by, or must not lose:

- ``"contract": "lookalike"`` (or any address): the log comes from another TRC-20
  contract that calls itself USDT (:data:`LOOKALIKE_USDT`); the callback still says
  ``USDT``, as a service that reads symbols would;
- ``"failed": true``: the transaction failed on chain (``REVERT``): nothing moves, yet
  the callback is sent;
- ``"callback": false``: the transfer happens and no callback is sent (the service
  missed it): only a chain scan finds it;
- ``"times": N``: a contract pays the amount N times in one transaction (N ``Transfer``
  logs; one callback, for one of them): N deposits.

``POST /sandbox/attacks/callback`` makes the service send a correctly signed
``tron.transfer`` callback with whatever fields it is given (any ``tx_hash``, amount,
token, recipient) to the address's webhook: the chain contradicts it, or does not know
the transaction at all.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from tronenergy_protocol.address import decode_address, encode_address
from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox.chain import codec
from tronenergy_sandbox.chain.accounts import ChainState
from tronenergy_sandbox.chain.views import (
    UNITS,
    USDT_CALL_ENERGY,
    raw_data,
    reverted,
    succeeded,
    transfer_call_data,
    transfer_log,
)
from tronenergy_sandbox.errors import WorldError

if TYPE_CHECKING:
    import sqlite3

LOOKALIKE_USDT: Final = encode_address(hashlib.sha256(b"sandbox look-alike USDT").digest()[:20])
"""A second TRC-20 contract whose ``symbol()`` is ``USDT`` too: fake-USDT sent to deposit
addresses is a known attack on exchanges. Its transfers are not USDT's."""
SHAPES_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS transfer_shapes (
    tx_hash TEXT PRIMARY KEY, contract TEXT, failed INTEGER NOT NULL DEFAULT 0,
    times INTEGER NOT NULL DEFAULT 1);
"""
_SHAPE: Final = ("s.contract AS shape_contract, COALESCE(s.failed, 0) AS failed, "
                 "COALESCE(s.times, 1) AS times")


class SimulatedTransfers(ChainState):
    """Simulated transfers as the chain prints them, and the attacks (a world mixin)."""

    usdt_contract: str

    def _init_attacks(self) -> None:
        self.db.executescript(SHAPES_SCHEMA)

    def _transfer_row(self, tx_hash: str) -> sqlite3.Row | None:
        return self.db.execute(  # type: ignore[no-any-return]
            f"SELECT t.*, {_SHAPE} FROM transfers t LEFT JOIN transfer_shapes s "
            "ON s.tx_hash = t.tx_hash WHERE t.tx_hash = ?", (tx_hash,)).fetchone()

    def transfer_receipt(self, row: sqlite3.Row, visible: bool) -> dict[str, Any]:
        """``gettransactioninfobyid`` of a simulated transfer (the block given by ``row``)."""
        block = int(row["block_number"])
        info: dict[str, Any] = {"id": row["tx_hash"], "blockNumber": block,
                                "blockTimeStamp": int(row["block_timestamp"]),
                                "contractResult": [""]}
        if row["token"] == "TRX":
            info["receipt"] = {"net_usage": 268}
            return info
        contract = row["shape_contract"] or self.usdt_contract
        info["contract_address"] = contract if visible else decode_address(contract).hex()
        if row["failed"]:
            return reverted(info, USDT_CALL_ENERGY)
        succeeded(info, USDT_CALL_ENERGY)
        units = int(Decimal(row["amount"]) * UNITS)
        info["log"] = [transfer_log(contract, row["from_address"], row["to_address"], units,
                                    visible=visible)] * int(row["times"])
        return info

    def simulated_transaction(self, tx_hash: str, *, solidified: bool,
                              visible: bool) -> dict[str, Any]:
        """``gettransactionbyid`` of a simulated transfer, else ``{}``."""
        row = self._transfer_row(tx_hash)
        last = self.solid_number() if solidified else self.head_number()
        if row is None or row["block_number"] > last:
            return {}
        units = int(Decimal(row["amount"]) * UNITS)
        owner = row["from_address"]
        if row["token"] == "TRX":
            kind = codec.TRANSFER
            value: dict[str, Any] = {"owner_address": owner, "to_address": row["to_address"],
                                     "amount": units}
        else:
            kind = codec.TRIGGER
            data = transfer_call_data(row["to_address"], units)
            value = {"owner_address": owner,
                     "contract_address": row["shape_contract"] or self.usdt_contract,
                     "data": data}
        raw = raw_data(kind, value, int(row["block_timestamp"]),
                       ref_block_id=self.block_id(int(row["block_number"])))
        shown = codec.transaction_json(  # raw_data names its addresses in base58
            codec.decode(codec.pack_raw(raw, visible=True), []), visible)
        shown.pop("visible")
        shown["txID"] = row["tx_hash"]  # the simulated hash names it (a random one)
        return {"ret": [{"contractRet": "REVERT" if row["failed"] else "SUCCESS"}], **shown}

    def simulated_block_receipts(self, number: int, visible: bool) -> list[dict[str, Any]]:
        """The receipts of the simulated transfers in block ``number``, in order."""
        rows = self.db.execute(
            f"SELECT t.*, {_SHAPE} FROM transfers t LEFT JOIN transfer_shapes s "
            "ON s.tx_hash = t.tx_hash WHERE t.block_number = ? ORDER BY t.rowid",
            (number,)).fetchall()
        return [self.transfer_receipt(row, visible) for row in rows]

    # -- the attacks -------------------------------------------------------------------------

    def attack_transfer(self, from_address: str, to_address: str, amount: Decimal, token: str,
                        *, contract: str | None, failed: bool, callback: bool,
                        times: int = 1) -> dict[str, Any]:
        """A transfer of a look-alike token, one that fails, one without a callback, or a
        contract paying ``amount`` ``times`` times in one transaction (one callback)."""
        token = token.upper()
        if token == "TRX" and (contract is not None or failed or times != 1):
            raise WorldError(ErrorCode.INVALID_PARAMETER,
                             "a TRX transfer has no contract and does not fail here")
        now = self.clock()
        with self._tx():
            if token == "USDT" and contract is None and not failed:
                self._move_usdt(from_address, to_address, int(amount * UNITS) * times)
            data = self._confirm_transfer(from_address, to_address, amount, token, now)
            if contract is not None or failed or times != 1:
                self.db.execute("INSERT INTO transfer_shapes VALUES (?, ?, ?, ?)",
                                (data["tx_hash"], contract, int(failed), times))
            url = self._watching_url(to_address, token) if callback else None
            delivery_id = None if url is None else self._enqueue(to_address, data, url, now)
        return {"tx_hash": data["tx_hash"], "block_number": data["block_number"],
                "contract": None if token == "TRX" else contract or self.usdt_contract,
                "delivery_id": delivery_id}

    def forge_callback(self, data: dict[str, Any]) -> dict[str, Any]:
        """Queue a signed callback with these fields to the webhook of ``data["to"]``."""
        url = self._watching_url(data["to"], data["token"]) or self._any_url(data["to"])
        if url is None:
            raise WorldError(ErrorCode.NOT_FOUND, f"address {data['to']} is not monitored")
        delivery_id = self._enqueue(data["to"], data, url, self.clock())
        return {"tx_hash": data["tx_hash"], "delivery_id": delivery_id}

    def _any_url(self, address: str) -> str | None:
        row = self.db.execute("SELECT webhook_url FROM monitored WHERE address = ? AND "
                              "is_active = 1", (address,)).fetchone()
        return None if row is None else str(row["webhook_url"])

    if TYPE_CHECKING:  # provided by the world's other parts (ledger, monitoring, deliveries)
        def _move_usdt(self, from_address: str, to_address: str, units: int) -> None: ...

        def _watching_url(self, address: str, token: str) -> str | None: ...

        def _enqueue(self, address: str, data: dict[str, Any], url: str,
                     now: float) -> int | None: ...
