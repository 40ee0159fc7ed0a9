"""The mapped shape of the payout example (bench/dags/batch_payout_mapped.py) keeps parsing.

bench/payout_scale.py runs it beside the example; it borrows the example's task
functions and params, so a change to the example must not silently break it. Runs of
each single-order operator it maps are tested in tests/operators and tests/sensors.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import batch_payout_preparation as example
from airflow.sdk.definitions.mappedoperator import MappedOperator

MAPPED_DAG = Path(__file__).resolve().parents[2] / "bench" / "dags" / "batch_payout_mapped.py"


def test_the_mapped_shape_is_the_example_with_a_task_per_order():
    spec = importlib.util.spec_from_file_location("batch_payout_mapped", MAPPED_DAG)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dag = module.dag
    mapped = sorted(t.task_id for t in dag.tasks if isinstance(t, MappedOperator))
    assert mapped == ["buy_for_holders", "buy_for_new_recipients", "wait_for_orders"]
    assert dict(dag.params) == dict(example.dag.params)
    # Everything but buying and waiting is the example's own.
    assert set(example.dag.task_ids) - {"buy_energy"} <= set(dag.task_ids)
