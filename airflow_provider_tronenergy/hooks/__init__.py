"""Hooks: connections turned into clients (``tronenergy``: the service; ``tron_node``: a TRON
full node) and the one wait for an order (``order_wait``) that tasks, sensors and triggers share."""
