"""``tronenergy-doctor``: a deployment checked before money moves.

Each check is a function returning :class:`~.report.Check` lines (pass, fail with the
fix, or skipped because the person said so); :mod:`.run` runs them for one set of
connections and stores, :mod:`.cli` prints them (plain text or ``--json``) and exits
non-zero on any failure. Nothing it prints holds a secret (:func:`.report.redact`).
"""
