"""TronEnergyTransferSensor's own checks, before it reads the store or defers (no Airflow run).

Its waiting is tested in real Airflow in test_transfer_dag.py.
"""

from __future__ import annotations

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.sensors.transfer import TronEnergyTransferSensor
from support import store_fixtures
from tronenergy_protocol.address import random_address

store_url = store_fixtures.store_url


def _sensor(**kwargs):
    return TronEnergyTransferSensor(
        proven=False, task_id="wait", address=random_address(), **kwargs)


def test_store_url_with_password_is_refused(store_url):
    store_fixtures.assert_store_password_refused(_sensor, store_url)


def test_sensor_refuses_an_inexact_min_amount_without_retry():
    for bad in ("10.0000001", "ten", "-1"):
        with pytest.raises(AirflowFailException, match="min_amount"):
            _sensor(min_amount=bad)._validate()
    sensor = _sensor(token="None", min_amount="10.5", from_address="")
    sensor._validate()
    assert (sensor.token, sensor.min_amount, sensor.from_address) == (None, "10.5", None)
