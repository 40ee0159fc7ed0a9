"""The limits on uvicorn's h11 protocol: the fallback when httptools is not installed.

h11 parses inside uvicorn's ``handle_events`` loop without callbacks, so the
phase is read from h11's state after each read. h11 bounds the head's size by
itself too (``h11_max_incomplete_event_size``); the receiver sets it just above
its own limit, which therefore refuses first, with 431.
"""

from __future__ import annotations

from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from airflow_provider_tronenergy.callbacks.limits.conn import BODY, HEAD, WAIT, LimitedProtocol


class LimitedH11Protocol(LimitedProtocol, H11Protocol):
    """uvicorn's h11 protocol with the limits (h11 itself caps the head's size too)."""

    _seen_cycle: Any = None

    def _sync_phase(self) -> None:
        cycle = self.cycle
        if cycle is not None and cycle is not self._seen_cycle:
            self._seen_cycle = cycle
            if len(self.headers) > self.guard.limits.max_headers:
                # h11 has no hook before the app's task exists; it has not run yet, and it
                # is told the client left, so it reads nothing and answers nobody.
                cycle.disconnected = True
                cycle.message_event.set()
                self.guard.stats.head_too_large += 1
                self._refuse(431, "Request Header Fields Too Large",
                             f"more than {self.guard.limits.max_headers} header fields")
                return
            self._request_started()
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._phase != HEAD:
                self._enter_head()
        elif state is h11.SEND_BODY:
            self._phase = BODY
        else:
            self._phase = WAIT
