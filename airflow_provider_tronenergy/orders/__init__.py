"""Waiting for an order: ``wait`` (``OrderWatch``: the one rule for what each answer about an
order means, for the task's loop, the sensor's poke and the trigger; ``order_event``),
``poll`` (``OrderPoller``: every deferred order wait of a connection in one triggerer reads
through one client, within one request budget, pausing together on a 429). Below the hooks,
which hand the waits out; no Airflow here."""
