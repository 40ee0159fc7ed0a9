"""Triggers: wait for the service in the triggerer, so no worker slot is held while waiting."""
