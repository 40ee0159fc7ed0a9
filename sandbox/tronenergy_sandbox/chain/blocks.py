"""The chain's blocks: one every 3 s of sandbox time, derived from the clock, never stored.

A block's number follows from the world's clock: production runs in *segments*
(a first block number and the time it was produced), one every
``BLOCK_SECONDS * time_scale`` seconds after it; pausing closes the open segment
at the head, resuming opens a new one at the next slot. So the head, any block's
time and its id are pure functions of the clock and a few stored rows, and a
manual clock in a test moves the chain exactly as far as the test says.

A block id is java-tron's shape: 8 bytes of the number, then 24 bytes of a hash
(here SHA-256 of the chain's random seed and the number, so it differs per block
and per sandbox). Solidification trails the head by :data:`SOLIDIFY_BLOCKS`.

Block 0, the genesis, is the one fixed block: every sandbox answers ``getblockbynum
{"num": 0}`` with :data:`GENESIS_BLOCK_ID`, so a ``tron_node`` connection to a sandbox
names it once (``"network": "custom", "genesis_block_id": ...``) and the provider's chain
check (``TronNodeHook.check_chain``) holds against any sandbox, as against a real network.
"""

from __future__ import annotations

import hashlib
import math
import secrets
from dataclasses import dataclass

from tronenergy_protocol.address import ADDRESS_PREFIX, encode_address
from tronenergy_sandbox.database import Database

BLOCK_SECONDS = 3.0
"""One block every 3 s (times the time-scale)."""
SOLIDIFY_BLOCKS = 19
"""A block is solidified once 19 more blocks are on top of it."""
TAPOS_BLOCKS = 65_536
"""A transaction must name one of the last 65,536 blocks (its ``ref_block_bytes``)."""
GENESIS_BLOCK_ID = (bytes(8) + hashlib.sha256(b"tronenergy-sandbox genesis").digest()[8:]).hex()
"""The sandbox chain's block 0 id: 8 zero bytes (its number), then 24 bytes of the SHA-256
of a fixed text; the same in every sandbox, so tests and docs can name it."""
FIRST_BLOCK = 68_000_000
"""The head block of a new sandbox (late-2025 mainnet heights)."""

BLOCKS_SCHEMA = """
CREATE TABLE IF NOT EXISTS chain_segments (
    start_number INTEGER PRIMARY KEY, start_at REAL NOT NULL, end_number INTEGER);
"""


@dataclass(frozen=True)
class BlockRef:
    """One block: its number, its production time (epoch ms) and its id (hex)."""

    number: int
    timestamp_ms: int
    block_id: str

    @property
    def parent_number(self) -> int:
        return self.number - 1


class Blocks(Database):
    """The block clock, as a part of the world's database."""

    def _init_blocks(self) -> None:
        """Create the first segment: the head block is produced now (or continues a state)."""
        self.db.executescript(BLOCKS_SCHEMA)
        self._meta_default("chain_seed", secrets.token_hex(32))
        if self.db.execute("SELECT 1 FROM chain_segments LIMIT 1").fetchone() is None:
            # A state from before blocks were timed kept its head in meta block_number.
            first = int(self._meta("block_number") or FIRST_BLOCK)
            self.db.execute("INSERT INTO chain_segments VALUES (?, ?, NULL)",
                            (first, self.clock()))

    @property
    def block_seconds(self) -> float:
        """Seconds of the world's clock between two blocks."""
        return BLOCK_SECONDS * self.time_scale

    def _segments(self) -> list[tuple[int, float, int | None]]:
        rows = self.db.execute(
            "SELECT start_number, start_at, end_number FROM chain_segments "
            "ORDER BY start_number").fetchall()
        return [(int(r[0]), float(r[1]), None if r[2] is None else int(r[2])) for r in rows]

    def head_number(self, at: float | None = None) -> int:
        """The newest block produced at time ``at`` (default: now)."""
        at = self.clock() if at is None else at
        segments = self._segments()
        for index in range(len(segments) - 1, -1, -1):
            start, start_at, end = segments[index]
            if at < start_at and index > 0:
                continue  # this segment had not started: an earlier one holds the head
            # 1e-3 of a block: float clocks near 1.7e9 s carry ~2e-7 s of rounding.
            steps = max(0, math.floor((at - start_at) / self.block_seconds + 1e-3))
            number = start + steps
            return number if end is None else min(number, end)
        raise AssertionError("no block segment")  # _init_blocks always writes one

    def solid_number(self, at: float | None = None) -> int:
        """The newest solidified block."""
        return self.head_number(at) - SOLIDIFY_BLOCKS

    def block_time(self, number: int) -> float:
        """When block ``number`` was (or will be) produced, on the world's clock."""
        segments = self._segments()
        start, start_at, _ = segments[0]
        for segment in segments:
            if segment[0] <= number:
                start, start_at, _ = segment
        return start_at + (number - start) * self.block_seconds

    def block_id(self, number: int) -> str:
        """8 bytes of the number, then 24 bytes of this chain's hash of it; block 0 is
        :data:`GENESIS_BLOCK_ID`."""
        if number == 0:
            return GENESIS_BLOCK_ID
        seed = bytes.fromhex(self._meta("chain_seed") or "")
        digest = hashlib.sha256(seed + number.to_bytes(8, "big")).digest()
        return (number.to_bytes(8, "big") + digest[8:]).hex()

    def parent_id(self, number: int) -> str:
        """The id block ``number`` names as its parent; the genesis names none (zeros)."""
        return self.block_id(number - 1) if number > 0 else "0" * 64

    def witness(self) -> str:
        """The one witness producing this chain's blocks (an address derived from its seed)."""
        seed = bytes.fromhex(self._meta("chain_seed") or "")
        return encode_address(bytes([ADDRESS_PREFIX]) + hashlib.sha256(seed + b"w").digest()[:20])

    def block(self, number: int) -> BlockRef | None:
        """Block ``number`` if it has been produced, else None.

        The chain had a past: blocks before the sandbox's first came every interval before it,
        back to the genesis (block 0, produced at time 0 as java-tron's genesis is).
        """
        if number < 0 or number > self.head_number():
            return None
        if number == 0:
            return BlockRef(0, 0, GENESIS_BLOCK_ID)
        return BlockRef(number, int(self.block_time(number) * 1000), self.block_id(number))

    def block_by_id(self, block_id: str) -> BlockRef | None:
        """The produced block whose id is ``block_id`` (hex), else None."""
        try:
            raw = bytes.fromhex(block_id)
        except ValueError:
            return None
        if len(raw) != 32:
            return None
        found = self.block(int.from_bytes(raw[:8], "big"))
        return found if found is not None and found.block_id == block_id.lower() else None

    def tapos_block(self, ref_bytes: bytes, ref_hash: bytes) -> bool:
        """Whether (``ref_block_bytes``, ``ref_block_hash``) names one of the recent blocks.

        java-tron keeps the last 65,536 blocks keyed by bytes 6-8 of their number and
        compares bytes 8-16 of that block's id with the transaction's hash.
        """
        if len(ref_bytes) != 2 or len(ref_hash) != 8:
            return False
        head = self.head_number()
        low = int.from_bytes(ref_bytes, "big")
        number = head - ((head - low) % TAPOS_BLOCKS)
        return bytes.fromhex(self.block_id(number))[8:16] == ref_hash

    def paused(self) -> bool:
        """Whether block production is stopped (``POST /sandbox/chain/pause``)."""
        return self._segments()[-1][2] is not None

    def lag(self, ranges: bool = False) -> int:
        """Blocks a lagging backend lacks below the head it is asked about
        (``POST /sandbox/chain/lag``): its receipt reads (and, unless ``ranges`` is off, its
        range reads) answer as for a chain that short."""
        blocks = int(self._meta("block_lag") or 0)
        return blocks if not ranges or self._meta("block_lag_ranges") != "0" else 0

    def set_lag(self, blocks: int, *, ranges: bool = True) -> None:
        self._set_meta("block_lag", str(blocks))
        self._set_meta("block_lag_ranges", "1" if ranges else "0")

    def served_last(self, solidified: bool, *, ranges: bool = False) -> int:
        """The newest block a block read serves: the (solid) head, less the lag."""
        return (self.solid_number() if solidified else self.head_number()) - self.lag(ranges)

    def pause_blocks(self) -> int:
        """Stop producing blocks: the head stays where it is. Returns the head."""
        head = self.head_number()
        if not self.paused():
            start = self._segments()[-1][0]
            self.db.execute("UPDATE chain_segments SET end_number = ? WHERE start_number = ?",
                            (head, start))
        return head

    def resume_blocks(self) -> int:
        """Produce blocks again, the next one a block interval from now. Returns the head."""
        head = self.head_number()
        if self.paused():
            next_at = self.clock() + self.block_seconds
            if self._segments()[-1][0] == head + 1:
                # paused again before its first block: that empty segment starts anew
                self.db.execute("UPDATE chain_segments SET start_at = ?, end_number = NULL "
                                "WHERE start_number = ?", (next_at, head + 1))
            else:
                self.db.execute("INSERT INTO chain_segments VALUES (?, ?, NULL)",
                                (head + 1, next_at))
        return head
