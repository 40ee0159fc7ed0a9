"""A task instance's extra links, read as the Airflow UI reads them (after a dag.test() run)."""

from __future__ import annotations

from typing import Any


def ui_extra_links(dag_id: str, run_id: str, task_id: str,
                   map_index: int = -1) -> dict[str, str | None]:
    """``GET /api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/links``'s
    ``extra_links``: the API server's own route, over the serialized DAG in the metadata
    DB (the links' names and XCom keys, never the provider's classes) and the XComs the
    worker pushed when the task ended. ``None`` is a link the UI shows disabled."""
    from airflow.api_fastapi.core_api.routes.public.extra_links import get_extra_links
    from airflow.models.dagbag import DBDagBag
    from airflow.utils.session import create_session

    with create_session() as session:
        answer: Any = get_extra_links(dag_id=dag_id, dag_run_id=run_id, task_id=task_id,
                                      session=session, dag_bag=DBDagBag(),
                                      map_index=map_index)
    return dict(answer.extra_links)


def pushed_trail(dag_id: str, run_id: str, task_id: str) -> Any:
    """What the operator pushed for its link (``links.explorer.XCOM_KEY``), decoded."""
    import json

    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    from airflow_provider_tronenergy.links.explorer import XCOM_KEY

    with create_session() as session:
        row = session.query(XComModel).filter(
            XComModel.dag_id == dag_id, XComModel.run_id == run_id,
            XComModel.task_id == task_id, XComModel.key == XCOM_KEY).one_or_none()
    if row is None:
        return None
    return json.loads(row.value) if isinstance(row.value, str) else row.value
