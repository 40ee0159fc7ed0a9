"""Money before it is spent: ``quote`` (what a purchase or a plan costs, exact Decimal
arithmetic) and ``guard`` (``max_order_trx``, ``max_spend_trx`` and the balance, refused
before any call that spends). Below the operators and the payout plan, which both use them."""
