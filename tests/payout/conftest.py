"""Fixtures for the payout tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.chain import manual_chain
from support.payouts import Payouts


@pytest.fixture
def world(tmp_path: Path) -> Iterator[Payouts]:
    """A funded sender on a sandbox chain whose blocks move only when the test says."""
    with manual_chain() as chain:
        payouts = Payouts(chain, tmp_path)
        try:
            yield payouts
        finally:
            payouts.close()
