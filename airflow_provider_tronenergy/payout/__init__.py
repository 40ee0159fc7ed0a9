"""Preparing a USDT payout batch, the library half of the payout example DAG.

``params`` (the run's parameters, checked), ``plan`` (rows, the quote against
``max_cost_trx`` and the balance, the orders, the "batch ready" payload), ``onchain``
(what a TRON node says: pre-flight, energy on hand, delegations confirmed) and
``approvals`` (what a person sees and answers before money moves). Below the
operators that run it; it imports only downwards (``money``, ``fanout``, hooks, node,
client, protocol), never an operator.
"""
