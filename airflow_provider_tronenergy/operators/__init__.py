"""Operators: purchases (``purchase`` base, ``energy`` modes, ``reuse`` journal steps, ``guard``
money guards, ``quote`` arithmetic, ``params`` templated values), address batches (``batch``,
``address``, ``monitor``) and ``reconcile``."""
