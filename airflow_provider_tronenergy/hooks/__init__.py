"""Hooks: the connection turned into a client (``tronenergy``) and the one wait for an order
(``order_wait``) that tasks, sensors and triggers share."""
