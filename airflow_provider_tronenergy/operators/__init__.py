"""Operators: purchases (``purchase`` base, ``energy`` modes, ``batch_buy``; the journal steps
``reuse`` and ``ask``), address batches (``batch`` base, ``address``, ``monitor``), the payout
batch's ``approval`` and ``reconcile``. What they share without being operators lives below
them: ``money`` (quote, guards), ``fanout`` (bounded pool, shared 429 pause), ``templated``."""
