"""The payout room's input (airflow_provider_tronenergy.payout.batch): a run's batch id."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from airflow_provider_tronenergy.payout.batch import run_batch_id
from airflow_provider_tronenergy.payout.rows import PayoutInputError


def test_a_runs_batch_id_is_its_data_interval_kept_by_retries_and_clears():
    start = datetime(2026, 3, 1, 10, tzinfo=timezone.utc)
    run = {"data_interval_start": start, "data_interval_end": start + timedelta(hours=1),
           "run_id": "scheduled__2026-03-01T10:00:00+00:00", "try_number": 1}
    batch_id = run_batch_id(run)
    assert batch_id == "2026-03-01T10:00:00Z/2026-03-01T11:00:00Z"
    assert run_batch_id({**run, "try_number": 3}) == batch_id  # a retry, a clear
    later = {**run, "data_interval_start": start + timedelta(hours=1),
             "data_interval_end": start + timedelta(hours=2), "run_id": "scheduled__later"}
    assert run_batch_id(later) != batch_id  # the next scheduled run
    # A manual run's interval is its logical date.
    point = {**run, "data_interval_end": start}
    assert run_batch_id(point) == "2026-03-01T10:00:00Z"
    # Triggered without a logical date: no interval, the run itself is the batch.
    manual = {"data_interval_start": None, "data_interval_end": None, "run_id": "manual__x"}
    assert run_batch_id(manual) == run_batch_id(dict(manual))
    assert run_batch_id(manual) != run_batch_id({**manual, "run_id": "y"})
    assert run_batch_id(manual).startswith("run:")
    with pytest.raises(PayoutInputError, match="batch_id is empty"):
        run_batch_id({})
