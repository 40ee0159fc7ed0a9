"""TronPayoutOperator's pre-flight with the node connection naming a multicall (dag.test()).

The same case as ``test_payout_preflight``'s swept recipients: two holders prepared at
64,285 each, the sender staked for exactly that, one swept to zero before sending, no
burn allowed. With ``multicall`` on the ``tron_node`` connection the holders' balances
are read in one request instead of an estimate each, and the finding is the same: the
batch is refused, nothing signed.
"""

from __future__ import annotations

import pytest

from operators.test_payout_preflight import journal, node  # noqa: F401  # fixtures
from operators.test_payout_preflight import (
    test_recipients_emptied_since_preparation_are_counted_as_first_transfers as swept_case,
)
from support.sandbox import node_connection_json
from tronenergy_sandbox.chain.multicall import MULTICALL

pytestmark = pytest.mark.usefixtures("node_conn")


@pytest.fixture
def node_conn(sandbox, monkeypatch) -> str:
    """``tron_node_default``: the sandbox, naming its multicall."""
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", node_connection_json(
        sandbox, multicall=MULTICALL))
    return "tron_node_default"


def test_recipients_emptied_since_preparation_are_found_by_balance(
        run_dag, control, node, journal, capfd, caplog, monkeypatch):  # noqa: F811
    estimates = control.fault(kind="latency", path="/wallet/estimateenergy", latency_ms=0)
    swept_case(run_dag, control, node, journal, capfd, caplog, monkeypatch)
    fired = next(int(f["fired"]) for f in control.faults() if f["id"] == estimates["id"])
    # the test's own estimate of the swept one, then the pre-flight's kinds (a fresh
    # address, the holders' figure): none per holder (4 without the multicall)
    assert fired == 1 + 2
