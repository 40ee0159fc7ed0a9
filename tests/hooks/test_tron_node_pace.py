"""The tron_node connection's ``requests_per_second``: checked, and the client built with
the shared pace (kept in the purchase journal's database; issue 45)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from airflow_provider_tronenergy.hooks.tron_node import TronNodeConnectionError, TronNodeHook
from airflow_provider_tronenergy.pace.store import SqlPace, pace_key

API_KEY = "node-key-0a1b2c3d-6666-4bd1-9a3e-00000000beef"


def _connect(monkeypatch: pytest.MonkeyPatch, conn_id: str, **extra: object) -> TronNodeHook:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps({
        "conn_type": "tron_node", "host": "https://node.example/", "password": API_KEY,
        "extra": extra}))
    return TronNodeHook(conn_id)


def test_a_rate_gives_the_client_the_connections_shared_pace(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two connection ids on one URL and key share one pace row, in the journal's database."""
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'journal.db'}")
    paces = []
    for conn_id, rate in (("node_paced", "12.5"), ("node_paced_too", 12.5)):
        pace = _connect(monkeypatch, conn_id, requests_per_second=rate)._client._provider.pace
        assert isinstance(pace, SqlPace) and pace.rate == Decimal("12.5")
        assert str(tmp_path) in pace.store.db.safe_url
        paces.append(pace)
    assert paces[0].key == paces[1].key == pace_key("https://node.example", API_KEY)
    assert API_KEY not in repr(paces[0]) and API_KEY not in paces[0].key


def test_no_rate_is_unpaced(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in (None, ""):
        hook = _connect(monkeypatch, "node_free", requests_per_second=value)
        assert hook._client._provider.pace is None  # the client before its chain's check


@pytest.mark.parametrize("value", ["0", "-3", "fast", "1e3", True, "5000"])
def test_a_bad_rate_fails_naming_the_extra(monkeypatch: pytest.MonkeyPatch,
                                           value: object) -> None:
    hook = _connect(monkeypatch, "node_bad", requests_per_second=value)
    with pytest.raises(TronNodeConnectionError, match="requests_per_second") as info:
        hook.get_conn()
    assert "node_bad" in str(info.value) and API_KEY not in str(info.value)
    with pytest.raises(TronNodeConnectionError, match="requests_per_second"):
        TronNodeHook.node_settings(hook.get_connection("node_bad"))
