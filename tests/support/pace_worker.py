"""A worker process reading a node through a paced client: ``python -m support.pace_worker``.

Two of them sharing one node URL, key and pace store are two Airflow workers sharing one
``tron_node`` connection; what the node saw is read at the sandbox, not here.
Arguments: node URL, API key, store URL, table prefix, rate, reads, threads; prints
``{"errors": [...]}``.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.pace.store import PaceStore, SqlPace, pace_key


def read_heads(url: str, api_key: str, store_url: str, prefix: str, rate: Decimal, reads: int,
               threads: int) -> list[str]:
    """``reads`` head-block reads over ``threads`` threads; the errors' texts."""
    pace = SqlPace(PaceStore(store_url, table_prefix=prefix), pace_key(url, api_key), rate)
    errors: list[str] = []
    with TronNodeClient(url, api_key=api_key, pace=pace, max_retries=3) as client:

        def one(_: int) -> None:
            try:
                client.get_now_block()
            except NodeError as exc:
                errors.append(str(exc))

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(reads)))
    return errors


def main(argv: list[str]) -> None:
    url, api_key, store_url, prefix, rate, reads, threads = argv
    errors = read_heads(url, api_key, store_url, prefix, Decimal(rate), int(reads),
                        int(threads))
    print(json.dumps({"errors": errors}))


if __name__ == "__main__":
    main(sys.argv[1:])
