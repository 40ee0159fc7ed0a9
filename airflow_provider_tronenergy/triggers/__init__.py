"""Triggers: wait in the triggerer, so no worker slot is held (``order``: one event when an
order ends; ``transfer``: stored transfers, one-shot or as an Asset watcher)."""
