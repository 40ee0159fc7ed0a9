"""The ``payout batch ready`` events of a period, from Airflow's metadata database.

Only the values the page shows are read, and the database extracts them from each
event's extra (PostgreSQL, SQLite, MySQL: each its own JSON functions): a big batch's
extra lists every recipient, and a year of them would be gigabytes to load and parse.
Every event of the period gives its activations (a day's spend); the newest
:data:`~.batches.BATCH_ROWS` give the rest of their row. Events are found by their
asset's URI, ``[tronenergy] batch_ready_asset`` (the example DAGs' by default), as Airflow
stores it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.ui.batches import APPROVAL, BATCH_ROWS, FIELDS, BatchEvent
from airflow_provider_tronenergy.ui.period import Period

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

BATCH_READY_ASSET: Final = "tronenergy://payout-batch-ready"
CONF_KEY: Final = "batch_ready_asset"
PAYOUTS_SENT_ASSET: Final = "tronenergy://payouts-sent"
SENT_CONF_KEY: Final = "payouts_sent_asset"
SENT_EVENTS: Final = 200
"""The newest ``payouts sent`` events whose ``tokens`` name the contracts' decimals and
symbols (a token's facts do not change: the newest events suffice)."""
PATHS: Final[dict[str, tuple[str, ...]]] = {
    **{name: (name,) for name in FIELDS if name not in ("recipients", "approval")},
    "activation_sun": ("prices", "activation_sun"),
    **{f"approval.{key}": ("approval", key) for key in APPROVAL},
}
DAY_FIELDS: Final = ("activations", "activation_cost", "activation_sun")


def batch_ready_uri() -> str:
    """The URI of the asset whose events are the batches (``[tronenergy] batch_ready_asset``)."""
    return sqlstore.airflow_conf(CONF_KEY) or BATCH_READY_ASSET


def stored_uri(uri: str) -> str:
    """The URI as Airflow stores the asset a DAG declares with it: normalized by Airflow
    itself (``tronenergy://payout-batch-ready`` is kept as ``tronenergy://payout-batch-ready/``),
    so the page finds the events of the asset the DAGs name, however it is written. A URI
    no DAG could declare (Airflow refuses it) is kept: no event has it."""
    from airflow.sdk import Asset

    try:
        return str(Asset(uri).uri)
    except ValueError:
        return uri


def _value(column: Any, path: tuple[str, ...], dialect: str) -> Any:
    """The extra's value at ``path``, as the database hands it over (text or a number)."""
    if dialect == "postgresql":
        return sa.cast(column, sa.JSON)[path if len(path) > 1 else path[0]].as_string()
    json_path = "$." + ".".join(f'"{key}"' for key in path)
    if dialect == "mysql":
        return sa.func.json_unquote(sa.func.json_extract(column, json_path))
    return sa.func.json_extract(column, json_path)


def _count(column: Any, key: str, dialect: str) -> Any:
    """How many items the extra's list ``key`` has (None when it is not a list)."""
    if dialect == "postgresql":
        item = sa.cast(column, sa.JSON)[key]
        return sa.case((sa.func.json_typeof(item) == "array", sa.func.json_array_length(item)))
    path = f'$."{key}"'
    if dialect == "mysql":
        return sa.case((sa.func.json_type(sa.func.json_extract(column, path)) == "ARRAY",
                        sa.func.json_length(column, path)))
    return sa.case((sa.func.json_type(column, path) == "array",
                    sa.func.json_array_length(column, path)))


def read_batch_events(session: Session, period: Period, uri: str | None = None,
                      newest: int = BATCH_ROWS) -> list[BatchEvent]:
    """Every batch-ready event of ``period``: the newest ``newest`` whole, the others with
    their activations only (all the page needs of them)."""
    from airflow.models.asset import AssetEvent, AssetModel

    dialect = session.get_bind().dialect.name
    extra = AssetEvent.extra
    where = sa.and_(AssetModel.uri == stored_uri(uri or batch_ready_uri()),
                    AssetEvent.timestamp >= period.start, AssetEvent.timestamp < period.end)
    base = sa.select(AssetEvent.id, AssetEvent.timestamp, AssetEvent.source_dag_id,
                     AssetEvent.source_run_id).join(
        AssetModel, AssetModel.id == AssetEvent.asset_id).where(where)
    names = list(PATHS)
    whole = session.execute(base.add_columns(
        *(_value(extra, PATHS[name], dialect) for name in names),
        _count(extra, "recipients", dialect)).order_by(
        AssetEvent.timestamp.desc(), AssetEvent.id.desc()).limit(newest)).all()
    events = [_event(row[1:4], dict(zip([*names, "recipients"], row[4:], strict=True)),
                     dialect) for row in whole]
    seen = {row[0] for row in whole}
    if len(whole) == newest:  # older ones: their activations only
        rest = session.execute(base.add_columns(
            *(_value(extra, PATHS[name], dialect) for name in DAY_FIELDS))).all()
        events += [_event(row[1:4], dict(zip(DAY_FIELDS, row[4:], strict=True)), dialect)
                   for row in rest if row[0] not in seen]
    return events


def payouts_sent_uri() -> str:
    """The URI of the asset whose events are the batches sent (``[tronenergy]
    payouts_sent_asset``, else the example DAGs')."""
    return sqlstore.airflow_conf(SENT_CONF_KEY) or PAYOUTS_SENT_ASSET


def read_sent_tokens(session: Session, uri: str | None = None,
                     newest: int = SENT_EVENTS) -> list[Any]:
    """The ``tokens`` lists of the newest ``payouts sent`` events, newest first (each as
    the database hands it: JSON text, or a list), extracted by the database: an event's
    extra lists every payout."""
    import json

    from airflow.models.asset import AssetEvent, AssetModel

    dialect = session.get_bind().dialect.name
    rows = session.execute(sa.select(_value(AssetEvent.extra, ("tokens",), dialect)).join(
        AssetModel, AssetModel.id == AssetEvent.asset_id).where(
        AssetModel.uri == stored_uri(uri or payouts_sent_uri())).order_by(
        AssetEvent.timestamp.desc(), AssetEvent.id.desc()).limit(newest)).all()
    lists: list[Any] = []
    for (value,) in rows:
        try:
            lists.append(json.loads(value) if isinstance(value, str) else value)
        except ValueError:
            continue
    return lists


def _event(source: Sequence[Any], values: dict[str, Any], dialect: str) -> BatchEvent:
    timestamp, dag_id, run_id = source
    if dialect == "mysql":  # JSON_UNQUOTE turns a JSON null into the text "null"
        values = {k: None if v == "null" else v for k, v in values.items()}
    approval = {key: _flag(values.pop(f"approval.{key}", None))
                if key in ("required", "approved", "timed_out")
                else values.pop(f"approval.{key}", None) for key in APPROVAL}
    if any(value is not None for value in approval.values()):
        values["approval"] = approval
    return BatchEvent.read(int(timestamp.timestamp() * 1000), dag_id, run_id, values)


def _flag(value: Any) -> bool | None:
    """A JSON boolean as each database hands it over (true, 1, 'true')."""
    if value is None:
        return None
    return str(value).lower() in ("true", "1")
