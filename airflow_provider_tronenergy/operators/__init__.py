"""Operators: purchases (``purchase`` base, ``energy`` modes, ``batch_buy``), address batches
(``batch`` base, ``address``, ``monitor``), the payout batch's ``approval`` and ``payout``,
the ``keeper``, ``deposit_scan`` and ``reconcile``. What they share without being operators
lives below them: ``hitl`` (a question to a person), ``verdicts`` (the payout task's
verdict), ``links`` (extra links), ``money`` (quote, guards), ``fanout`` (bounded pool,
shared 429 pause), ``templated``."""
