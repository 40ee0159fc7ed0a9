"""The chain as a TRON full node reports it (``client``: reads through tronpy, sent by
``transport``; ``errors``: ``NodeError``; ``models``: accounts, resources, receipts in exact
units). No Airflow import: ``hooks.tron_node`` wraps it."""
