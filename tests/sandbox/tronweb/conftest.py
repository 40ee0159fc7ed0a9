"""TronWeb, installed once per lock (support.tronweb)."""

from __future__ import annotations

import pytest

from support.tronweb import tronweb_node_path


@pytest.fixture(scope="session")
def tronweb_node() -> str:
    """The ``node`` executable, with TronWeb installed beside the checks script."""
    return tronweb_node_path()
