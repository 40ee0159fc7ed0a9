"""The limits on uvicorn's httptools protocol (its own module: httptools is optional).

httptools reports a request's progress through callbacks, so the phase is
tracked there: the head is complete (the request goes to the app), the body is
complete. An exception raised in a callback stops the parser, and uvicorn then
calls ``send_400_response``; a head with too many fields answers 431 there.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from airflow_provider_tronenergy.callbacks.limits.conn import WAIT, LimitedProtocol
from airflow_provider_tronenergy.errors import CallbackError


class _TooManyHeaders(CallbackError):
    """Raised inside the parser's callback: parsing stops before the app runs."""


class LimitedHttpToolsProtocol(LimitedProtocol, HttpToolsProtocol):
    _too_many_headers = False

    def on_headers_complete(self) -> None:
        if len(self.headers) > self.guard.limits.max_headers:
            self._too_many_headers = True
            raise _TooManyHeaders
        super().on_headers_complete()
        self._request_started()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        cycle = self.cycle
        if cycle is not None and cycle.response_complete and not self._raw.is_closing():
            self._enter_head()  # answered before its body ended; now it has ended
        else:
            self._phase = WAIT

    def send_400_response(self, msg: str) -> None:
        if self._too_many_headers:
            self.guard.stats.head_too_large += 1
            self._refuse(431, "Request Header Fields Too Large",
                         f"more than {self.guard.limits.max_headers} header fields")
            return
        super().send_400_response(msg)

    def _has_pipelined(self) -> bool:
        return bool(self.pipeline)
