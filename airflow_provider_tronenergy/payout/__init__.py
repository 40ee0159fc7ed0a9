"""Payouts from a hot wallet: a batch prepared (USDT), then sent (USDT, any TRC-20, TRX).

Preparation, what the preparation operators (``operators/payout_prep.py``) run:
``params`` (the batch's settings, checked from the operators' typed arguments),
``sheet`` (the CSV or the rows, checked), ``onchain`` (what a TRON node says:
pre-flight, energy on hand, delegations confirmed), ``energy_plan`` (the quote
against ``max_spend_trx`` and the balance, the orders), ``identity`` (which batch its
purchases belong to), ``approvals`` (what a person sees and answers before money
moves) and ``ready`` (the "batch ready" payload). Sending takes a ``batch.PayoutBatch``,
each row paying its own token (see docs/architecture.md's Parts). Below the operators
that run it, the room raises the provider's errors only (``errors``), never Airflow's, and
imports no operator.
"""
