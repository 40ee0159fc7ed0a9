"""The deposit scan, read from the chain's blocks: :mod:`.core` (``DepositScan``, its
settings and report), :mod:`.checkpoint` (the checkpoint and backfill tables),
:mod:`.backfill` (an address read back to its registration once), :mod:`.budget` (the
request budget) and :mod:`.wait` (``HeadWatch``, the one wait for the head, for worker and
triggerer). Importing the package imports none of them: the ledger reads the tables, the
trigger the wait, each without the rest.
"""
