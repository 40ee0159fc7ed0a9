"""Energy and bandwidth usage recovering over java-tron's 24 h window.

java-tron keeps an account's usage with the slot it was last consumed in and lets
it decay linearly to zero over ``windowSize`` slots (``WINDOW_SIZE_MS /
BLOCK_PRODUCED_INTERVAL``: 28,800 slots of 3 s); a read first decays it to the head
slot (``updateUsage``), a charge decays it and then adds the new cost. The
arithmetic is ``ResourceProcessor.increase`` (java-tron
``chainbase/src/main/java/org/tron/core/db/ResourceProcessor.java``) as it stood
before the per-account window sizes of unfreeze-v2 (``increaseV2``, not modelled:
the sandbox's window is always 28,800): average usage per slot kept with
``PRECISION``, ceil-divided in, decayed by ``(window - delta) / window`` in
double precision and ``Math.round``-ed. The sandbox's slot is its block number, so
the window scales with the sandbox's time scale (a block every 3 s x scale).
"""

from __future__ import annotations

import math

WINDOW_SLOTS = 28_800
"""24 h of 3 s slots (``ChainConstant.WINDOW_SIZE_MS / BLOCK_PRODUCED_INTERVAL``)."""
PRECISION = 1_000_000
"""``ChainConstant.PRECISION``."""


def _divide_ceil(numerator: int, denominator: int) -> int:
    return numerator // denominator + (1 if numerator % denominator else 0)


def increase(last_usage: int, usage: int, last_time: int, now: int,
             window: int = WINDOW_SLOTS) -> int:
    """``ResourceProcessor.increase``: ``last_usage`` decayed from ``last_time`` to ``now``,
    plus ``usage``."""
    average_last = _divide_ceil(last_usage * PRECISION, window)
    average = _divide_ceil(usage * PRECISION, window)
    if last_time != now:
        if last_time + window > now:
            # a double in java-tron too: usage, not money, and the same rounding as the chain
            decay = (window - (now - last_time)) / float(window)
            average_last = math.floor(average_last * decay + 0.5)  # Java's Math.round
        else:
            average_last = 0
    return (average_last + average) * window // PRECISION


def recovered(usage: int, last_time: int, now: int) -> int:
    """Usage as read at slot ``now`` (``updateUsage``). A usage with no slot (0: set before
    recovery was modelled) or from a later slot is taken as it stands."""
    if last_time <= 0 or now <= last_time:
        return usage
    return increase(usage, 0, last_time, now)


def consumed(usage: int, last_time: int, now: int, cost: int) -> int:
    """Usage after consuming ``cost`` at slot ``now``: decayed first, then added
    (``EnergyProcessor.useEnergy``, ``BandwidthProcessor``: two ``increase`` calls)."""
    return increase(recovered(usage, last_time, now), cost, now, now)
