"""A task's verdict on a domain room's errors, decided in one place per room, beyond the
provider's one rule (``airflow_errors``): ``payout`` (``task_verdict``, ``as_task``: the
payout room's errors, and a signer's refusal, as the send task's fail, retry or skip).
Held by the operators; nothing here is an operator."""
