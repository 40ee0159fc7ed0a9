"""ASCII digits at the remaining boundaries: service answers, connection extras, CLI flags."""

from __future__ import annotations

import json

import pytest
from airflow.models.connection import Connection

from airflow_provider_tronenergy.client import UnexpectedResponseError
from airflow_provider_tronenergy.client.models import Order
from airflow_provider_tronenergy.hooks.tronenergy import (
    TronEnergyConnectionError,
    TronEnergyHook,
)
from tronenergy_sandbox.cli import parser as sandbox_parser


@pytest.mark.parametrize("cost", ["٢.٩٢٥", "２.９", "1e3", "NaN"])
def test_service_amounts_in_other_digits_are_unexpected(cost: str):
    with pytest.raises(UnexpectedResponseError):
        Order.from_data({"order_id": "o", "status": "success", "cost": cost})
    assert str(Order.from_data({"order_id": "o", "status": "success",
                                "cost": "2.925"}).cost) == "2.925"


@pytest.mark.parametrize("hours", [["١"], "0.25, ٢٤", ["1e0"]])
def test_rent_time_extras_in_other_digits_are_refused(hours: object):
    conn = Connection(conn_id="x", conn_type="tronenergy", host="http://127.0.0.1:1/v1",
                      login="k", password="s",
                      extra=json.dumps({"purchase_rent_times": hours}))
    with pytest.raises(TronEnergyConnectionError, match="ASCII"):
        TronEnergyHook.client_settings(conn)


def test_sandbox_balance_flag_in_other_digits_is_refused(capsys):
    with pytest.raises(SystemExit):
        sandbox_parser().parse_args(["--balance", "١٠٠٠"])
    assert "ASCII" in capsys.readouterr().err
    assert str(sandbox_parser().parse_args(["--balance", "12.5"]).balance) == "12.5"
