"""Human in the loop (Airflow 3.1+): what a task puts to a person as a Required Action and
writes from the answer into a journal. ``purchase`` (``Asker``: an unknown purchase outcome,
answered into the purchase journal; ``parks_tasks``: how this Airflow waits for an answer),
``payout`` (``PayoutAsker``: payouts that failed on chain, answered into the payout journal).
Held by the operators; nothing here is an operator."""
