"""Loopback ports no other test can take, for servers the tests cannot hand a socket to.

Airflow's api-server, a throw-away PostgreSQL and the like are told a port number and bind
it themselves. A number found by binding port 0 and closing the socket is one any later
``bind(0)`` (another test's server, in this process or any other) may be given before the
server binds it: the server then dies of EADDRINUSE, or a test talks to someone else's
server. So the numbers come from below the kernel's ephemeral range
(``/proc/sys/net/ipv4/ip_local_port_range``), which ``bind(0)`` and outgoing connections
never use, and each is reserved across processes by an ``fcntl`` lock on a file of its own
under the temporary directory, held until released (or the holder exits: the kernel drops
the lock), after a bind check that nothing holds it now.

A server of ours that can be handed a bound socket binds port 0 itself and says which port
it got (uvicorn ``Server.run(sockets=[...])``, the sandbox, the receiver): that needs no
reservation.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOCKS = Path(tempfile.gettempdir()) / "tronenergy-test-ports"
SPAN = 12_000
"""How many ports below the ephemeral range are ours to hand out."""
_held: dict[int, int] = {}
"""Reserved port -> the descriptor holding its lock, in this process."""


def reserved_range() -> range:
    """The ports handed out: up to ``SPAN`` of them, under the ephemeral range (or above it
    when that starts too low), never a privileged one."""
    try:
        low, high = (int(part) for part in EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999  # Linux's default
    below = range(max(1024, low - SPAN), low)
    above = range(high + 1, min(65536, high + 1 + SPAN))
    chosen = max(below, above, key=len)
    if len(chosen) < 100:
        raise RuntimeError(f"no room for reserved ports around the ephemeral range {low}-{high}")
    return chosen


def _bindable(port: int) -> bool:
    """Nothing holds ``port`` on any address (no SO_REUSEADDR: a lingering connection counts)."""
    with socket.socket() as probe:
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True


def _lock(port: int) -> int | None:
    """The descriptor holding ``port``'s lock, or None when another holder has it."""
    LOCKS.mkdir(mode=0o1777, parents=True, exist_ok=True)
    fd = os.open(LOCKS / f"{port}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def reserve_port(within: range | None = None) -> int:
    """A loopback port reserved for this process until :func:`release_port` (or its exit):
    no ``bind(0)`` anywhere and no other caller of this function gets it. ``within``: the
    ports to try (default :func:`reserved_range`)."""
    ports = within if within is not None else reserved_range()
    start = random.randrange(len(ports))  # callers at once rarely try the same files
    for offset in range(len(ports)):
        port = ports[(start + offset) % len(ports)]
        if port in _held:
            continue
        fd = _lock(port)
        if fd is None:
            continue
        if _bindable(port):
            _held[port] = fd
            return port
        os.close(fd)  # in use by something outside this scheme: leave it
    raise RuntimeError(f"every port in {ports.start}-{ports.stop - 1} is reserved or in use")


def release_port(port: int) -> None:
    """Give ``port`` back (what its server bound should be closed by now)."""
    fd = _held.pop(port, None)
    if fd is not None:
        os.close(fd)


@contextlib.contextmanager
def reserved_ports(count: int = 1) -> Iterator[list[int]]:
    """``count`` reserved ports, released on exit."""
    ports: list[int] = []
    try:
        for _ in range(count):
            ports.append(reserve_port())
        yield ports
    finally:
        for port in ports:
            release_port(port)


_closed: list[int] = []


def closed_port() -> int:
    """A loopback port with nothing listening on it (connection refused), for as long as this
    process lives: reserved here and never bound by anyone."""
    if not _closed:
        _closed.append(reserve_port())
    return _closed[0]
