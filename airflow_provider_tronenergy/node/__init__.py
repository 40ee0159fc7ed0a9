"""The chain as a TRON full node reports it (``client``: reads through tronpy; ``models``:
accounts, resources, receipts in exact units). No Airflow import: ``hooks.tron_node`` wraps it."""
