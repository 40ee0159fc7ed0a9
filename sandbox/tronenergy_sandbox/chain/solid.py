"""The state as of the solidified block: undo records for the unsolidified tail.

java-tron's solidity API reads the solidified database: ``WalletOnSolidity.futureGet``
runs the servlet's read with ``dbManager.setMode(false)``, which points the stores at
the snapshot of the latest solidified block (tronprotocol/java-tron
``framework/src/main/java/org/tron/core/services/interfaceOnSolidity/WalletOnSolidity.java``
at 2acc21a). So an account's balance, a USDT ``balanceOf`` or a transfer's energy read
on ``/walletsolidity`` do not see the last 19 blocks.

The sandbox keeps one current state and, for every change to an account table
(``TRACKED``), an undo record: the row as it was before, tagged with the block the
change lands in. A read as of block ``S`` takes, per row, the oldest record of a
change after ``S`` (the row before the tail began), else the current row. Records
of solidified blocks are pruned. Triggers write the records, so every writer
(transactions executed in their block, the control API, placed transfers, rentals
ending) is covered; a writer that knows its block says so (``_writing_in``), else a
change lands in the head block.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tronenergy_sandbox.chain.blocks import Blocks

UNDO_SCHEMA = """
CREATE TABLE IF NOT EXISTS chain_undo (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, block INTEGER NOT NULL, tbl TEXT NOT NULL,
    key TEXT NOT NULL, old TEXT);
CREATE INDEX IF NOT EXISTS chain_undo_key ON chain_undo (tbl, key, block);
CREATE INDEX IF NOT EXISTS chain_undo_block ON chain_undo (block);
"""
TRACKED: dict[str, tuple[str, ...]] = {
    "wallets": ("address",), "chain_accounts": ("address",),
    "holdings": ("address", "token"), "chain_permissions": ("address",),
    "token_balances": ("contract", "address")}
"""The account tables a solidity read answers from, and each one's key columns."""


def _key(prefix: str, columns: tuple[str, ...]) -> str:
    return " || '/' || ".join(f"{prefix}.{column}" for column in columns)


class SolidState(Blocks):
    """Undo records of the unsolidified tail, and reads as of the solidified block."""

    _as_of: int | None = None
    """While set (``solidified``), account reads answer the state as of this block."""
    _writing_block: int | None = None
    """The block the changes being written land in (None: the head block)."""

    def _init_undo(self) -> None:
        """The undo table and its triggers (after every tracked table exists)."""
        self.db.executescript(UNDO_SCHEMA)
        self.db.create_function("chain_block", 0, self._change_block)
        for table, keys in TRACKED.items():
            columns = [row[1] for row in self.db.execute(f"PRAGMA table_info({table})")]
            old = "json_object(" + ", ".join(f"'{c}', OLD.{c}" for c in columns) + ")"
            for event, key, value in (("INSERT", _key("NEW", keys), "NULL"),
                                      ("UPDATE", _key("OLD", keys), old),
                                      ("DELETE", _key("OLD", keys), old)):
                name = f"chain_undo_{table}_{event.lower()}"
                self.db.execute(f"DROP TRIGGER IF EXISTS {name}")
                self.db.execute(
                    f"CREATE TRIGGER {name} AFTER {event} ON {table} BEGIN "
                    "INSERT INTO chain_undo (block, tbl, key, old) "
                    f"VALUES (chain_block(), '{table}', {key}, {value}); END")

    def _change_block(self) -> int:
        return self._writing_block if self._writing_block is not None else self.head_number()

    @contextmanager
    def _writing_in(self, block: int) -> Iterator[None]:
        """The changes written inside land in ``block`` (a transaction's, a placed transfer's)."""
        before, self._writing_block = self._writing_block, block
        try:
            yield
        finally:
            self._writing_block = before

    def _prune_undo(self) -> None:
        """Forget the records of solidified blocks: no solidity read goes back past them."""
        self.db.execute("DELETE FROM chain_undo WHERE block <= ?", (self.solid_number(),))

    @contextmanager
    def solidified(self) -> Iterator[int]:
        """Account reads inside answer the state as of the solidified block (yielded).

        The caller brings the chain up to now first; nothing awaits inside (the world is
        read on the event loop's thread, one call at a time).
        """
        self._as_of = self.solid_number()
        try:
            yield self._as_of
        finally:
            self._as_of = None

    def read_block(self) -> int:
        """The block reads answer as of: the solidified one inside ``solidified``, else the head."""
        return self._as_of if self._as_of is not None else self.head_number()

    def read_time(self) -> float:
        """The time reads answer at: the solidified block's inside ``solidified``, else now."""
        return self.block_time(self._as_of) if self._as_of is not None else self.clock()

    def _row_as_read(self, table: str, key: str, current: Callable[[], Any]) -> Any:
        """A tracked row as of ``read_block`` (a mapping of its columns), None if absent."""
        if self._as_of is None:
            return current()
        row = self.db.execute(
            "SELECT old FROM chain_undo WHERE tbl = ? AND key = ? AND block > ? "
            "ORDER BY seq LIMIT 1", (table, key, self._as_of)).fetchone()
        if row is None:
            return current()
        return None if row[0] is None else json.loads(row[0])
