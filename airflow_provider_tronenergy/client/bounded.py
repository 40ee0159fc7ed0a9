"""An answer's body read to a cap, decompressed by us, so a hostile server cannot fill memory.

A 300 MB body, or a 400 KB gzip that inflates to 400 MB, would otherwise be held
whole by the transport before any check could look at it. Both HTTP clients of
the service and the node client feed the raw bytes they receive through
:class:`BodyReader`, which inflates with a bounded output per step and stops at
``limit`` decompressed bytes. Framework-free: no HTTP library here.
"""

from __future__ import annotations

import zlib
from typing import Final

from airflow_provider_tronenergy.errors import TronEnergyProviderError

DEFAULT_MAX_ANSWER_BYTES: Final = 1_048_576
"""The service's largest answer (a page of 100 monitored addresses) is about 30 KB."""
NODE_MAX_ANSWER_BYTES: Final = 16_777_216
"""A node's block with its transactions can run to a few MB."""
CHUNK: Final = 65_536
_WBITS: Final = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS,
                 "deflate": zlib.MAX_WBITS}


class BodyError(TronEnergyProviderError, ValueError):
    """A body that was not read whole; ``status`` is the answer's, set by the transport."""

    status: int | None = None


class AnswerTooLarge(BodyError):
    """The body (decompressed) is longer than the cap; what was read is dropped."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"answer larger than {limit:,} bytes (max_answer_bytes); not read")
        self.limit = limit


class UnreadableEncoding(BodyError):
    """A Content-Encoding this client never asked for, or a body that does not inflate."""


def check_limit(value: int, what: str = "max_answer_bytes") -> int:
    """A cap in bytes: a positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive number of bytes")
    return value


class BodyReader:
    """Collects one body: ``feed`` raw chunks as they arrive, then ``finish``.

    ``encoding`` is the answer's Content-Encoding (``""`` for none). Only gzip and
    (zlib) deflate are inflated: what the clients accept.
    """

    def __init__(self, limit: int, encoding: str = "") -> None:
        self.limit = check_limit(limit)
        self._parts: list[bytes] = []
        self._size = 0
        name = encoding.strip().lower()
        if name in ("", "identity"):
            self._inflater: zlib._Decompress | None = None
        elif name in _WBITS:
            self._inflater = zlib.decompressobj(_WBITS[name])
        else:
            raise UnreadableEncoding(f"answer has Content-Encoding {encoding[:40]!r}, "
                                     "which this client did not ask for")

    def feed(self, raw: bytes) -> None:
        """Take the next raw chunk; raise :class:`AnswerTooLarge` past the cap."""
        if self._inflater is None:
            self._add(raw)
            return
        data = raw
        while data:
            # At most what the cap still allows (+1 to see it crossed) per step.
            try:
                out = self._inflater.decompress(data, self.limit - self._size + 1)
            except zlib.error:
                raise UnreadableEncoding("compressed answer does not inflate") from None
            self._add(out)
            data = self._inflater.unconsumed_tail
            if not out and not data:
                break

    def finish(self) -> bytes:
        """The whole body; a compressed body must also have ended cleanly."""
        if self._inflater is not None:
            self._add(self._inflater.flush(self.limit - self._size + 1))
            if not self._inflater.eof and self._size:
                raise UnreadableEncoding("compressed answer ends before its stream does")
        return b"".join(self._parts)

    def _add(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self.limit:
            self._parts.clear()
            raise AnswerTooLarge(self.limit)
        if data:
            self._parts.append(data)
