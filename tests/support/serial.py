"""The tests that must not run beside each other: the end-to-end deployments and drills.

They share the machine's PostgreSQL, Redis and CPU budget with timeouts of their own.
``tests/conftest.py`` marks them ``serial``; ``--serial=skip|only`` leaves them out or
runs only them, without collecting the others (scripts/test.sh runs the rest on xdist
workers, then them alone); and
under ``-n N --dist loadgroup`` with them in, this scheduler gives them all to one worker,
one after another, while the others share the rest.
(pytest-xdist 3.8's own ``--dist loadgroup`` reads ``xdist_group`` marks through the node
id, which pytest 9.2 no longer lets a plugin change: it spread them over the workers.)
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

SERIAL = ("tests/e2e/",)
"""Node id prefixes of the serial tests."""


def is_serial(nodeid: str) -> bool:
    return nodeid.startswith(SERIAL)


def left_out(relpath: str, choice: str) -> bool:
    """Whether ``--serial=<choice>`` need not collect ``relpath`` (a file or folder, relative
    to the root, ``/``-separated) at all: ``only`` imports no other test module (the serial
    leg starts in a second, not after collecting the whole suite), ``skip`` no serial one."""
    inside = f"{relpath}/".startswith(SERIAL)
    if choice == "skip":
        return inside
    if choice == "only":
        return not inside and not any(prefix.startswith(f"{relpath}/") for prefix in SERIAL)
    return False


class SerialGroupScheduling(LoadScopeScheduling):
    """``--dist load``, except that the serial tests form one unit of work: one worker."""

    def _split_scope(self, nodeid: str) -> str:
        return "serial" if is_serial(nodeid) else nodeid
