"""What a deposit scan is given, checked before any read: its settings and its addresses.

:class:`ScanSettings` (docs/deposits.md lists each with its default), read strictly from a
task's templated values by :meth:`ScanSettings.from_values`; :func:`checked_addresses` and
:func:`checked_token`, the scan's deposit addresses and token. Anything else is a
:class:`ScanSettingsError` (not retried), raised before a node is asked anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from airflow_provider_tronenergy.deposits.scan.tokens import named
from airflow_provider_tronenergy.errors import TronEnergyProviderError
from airflow_provider_tronenergy.node.blocks import MAX_BLOCK_RANGE
from tronenergy_protocol.address import is_valid_address
from tronenergy_protocol.numbers import parse_int

SOLID: Final = "solid"
"""``start``: a first run's first block is the block it may trust now."""


class ScanSettingsError(TronEnergyProviderError, ValueError):
    """A scan's settings or addresses that cannot be followed: refused before any read."""


@dataclass(frozen=True)
class ScanSettings:
    """How a scan reads the chain (docs/deposits.md lists each with its default).

    :param start: a first run's first block, or ``"solid"``: the block it may trust now
        (the addresses' earliest registration block, when earlier, wins).
    :param max_blocks_per_run: blocks one run reads at most (a day is 28,800).
    :param max_concurrency: reads in flight at once.
    :param max_requests_per_second: node requests per second, at most (the head's too).
    :param confirmations: None: read solidified blocks only (final); N: blocks at least N
        below the head (faster, not final: use N >= 19 on mainnet).
    :param blocks_per_range: blocks per ``getblockbylimitnext`` (TRX; at most 100).
    :param page_blocks: blocks credited, and checkpointed, per transaction.
    """

    start: int | Literal["solid"] = SOLID
    max_blocks_per_run: int = 28_800
    max_concurrency: int = 8
    max_requests_per_second: float = 20.0
    confirmations: int | None = None
    blocks_per_range: int = 50
    page_blocks: int = 100

    def __post_init__(self) -> None:
        if self.start != SOLID and (isinstance(self.start, bool)
                                    or not isinstance(self.start, int) or self.start < 1):
            raise ScanSettingsError(f"start must be a block number or {SOLID!r}, "
                                    f"got {self.start!r}")
        for name, low, high in (("max_blocks_per_run", 1, 10_000_000), ("max_concurrency", 1, 64),
                                ("blocks_per_range", 1, MAX_BLOCK_RANGE),
                                ("page_blocks", 1, 10_000)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ScanSettingsError(f"{name} must be a whole number from {low} to {high:,}")
        if not 0 < self.max_requests_per_second <= 10_000:
            raise ScanSettingsError("max_requests_per_second must be above 0 (at most 10,000)")
        if self.confirmations is not None and (isinstance(self.confirmations, bool) or not
                                               isinstance(self.confirmations, int)
                                               or not 0 <= self.confirmations <= 10_000):
            raise ScanSettingsError("confirmations must be None (solidified) or 0 to 10,000")

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> ScanSettings:
        """Settings from a task's (templated, so possibly text) values; unknown names refused."""
        unknown = set(values) - set(cls.__dataclass_fields__)
        if unknown:
            raise ScanSettingsError(f"unknown scan settings: {', '.join(sorted(unknown))}")
        read: dict[str, Any] = {}
        try:
            for name, value in values.items():
                if value is None or value == "":
                    continue
                if name == "start":
                    read[name] = SOLID if str(value).strip() == SOLID else parse_int(value, name)
                elif name == "max_requests_per_second":
                    read[name] = float(str(value))
                else:
                    read[name] = parse_int(value, name)
        except ValueError as exc:
            raise ScanSettingsError(str(exc)) from None
        return cls(**read)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def checked_addresses(addresses: Iterable[str] | str | None) -> frozenset[str]:
    """The deposit addresses, every one base58check, at least one; else refused."""
    given = [addresses] if isinstance(addresses, str) else list(addresses or [])
    bad = [a for a in given if not isinstance(a, str) or not is_valid_address(a)]
    if bad:
        raise ScanSettingsError(f"deposit addresses must be TRON addresses (base58check): "
                                f"{bad[:5]!r}{' and more' if len(bad) > 5 else ''}")
    if not given:
        raise ScanSettingsError("no deposit address to scan for")
    return frozenset(given)


def checked_token(token: str) -> str:
    """``TRX``, ``USDT`` or a contract's address (``T...``); else refused."""
    try:
        return named(token)
    except ValueError as exc:
        raise ScanSettingsError(str(exc)) from None
