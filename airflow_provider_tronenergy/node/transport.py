"""tronpy's HTTP provider, made safe to point at a node nobody vouches for.

tronpy posts through a plain ``requests`` session: it follows redirects (and
sends ``TRON-PRO-API-KEY`` to wherever they lead: requests strips only
``Authorization``), reads any body whole, and bounds a call only per read. Here
every call goes through the client's :func:`~..client.deadline.exchange`: never
redirected, its answer capped (decompressed) and the whole call under one
deadline. Imported only when a node client is built (it imports tronpy).

With a :class:`~.pace.Pace` (the connection's ``requests_per_second``), every request,
resends included, waits for its slot first, and a 429 or 503 pushes the pace back for
every sharer by its ``Retry-After`` (else a backoff); the resend then waits for its
slot. A broadcast answered 503 is not resent within the call: only a 429 proves the node
did not take it (the payout room offers the same bytes again in its next step anyway).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urljoin

import requests
from tronpy.providers import HTTPProvider

from airflow_provider_tronenergy.client.bounded import BodyError
from airflow_provider_tronenergy.client.core import Timeout
from airflow_provider_tronenergy.client.deadline import (
    DeadlineAdapter,
    DeadlineExceeded,
    DeadlineRetry,
    current_deadline,
    exchange,
)
from airflow_provider_tronenergy.client.wire import redirect_message
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.pace import QUEUE_SECONDS, SLOWED, Pace, PaceTooFar

log = logging.getLogger(__name__)
API_KEY_HEADER = "TRON-PRO-API-KEY"
BROADCASTS = ("/wallet/broadcasthex", "/wallet/broadcasttransaction")
MIN_PAUSE_SECONDS = 1.0
"""How far a 429 or 503 without ``Retry-After`` pushes the pace back, at least."""
MAX_PAUSE_SECONDS = 300.0
"""The longest pause a ``Retry-After`` imposes on every sharer (a node asking for an hour
stops nobody for an hour: each call fails fast, not sent, until then)."""


class NodeRetry(DeadlineRetry):
    """The node client's resends: under the call's deadline, and through its pace if any.

    A 503 on a broadcast ends the call (the outcome is unknown: it stays unknown, and
    the payout room decides what follows); a 429 there is "not accepted" and resent.
    """

    pace: Pace | None = None

    def new(self, **kw: Any) -> NodeRetry:
        retry: NodeRetry = super().new(**kw)
        retry.pace = self.pace
        return retry

    def increment(self, method: str | None = None, url: str | None = None,
                  response: Any = None, error: Exception | None = None,
                  _pool: Any = None, _stacktrace: Any = None) -> NodeRetry:
        from urllib3.exceptions import MaxRetryError, ResponseError

        if response is not None and response.status in SLOWED:
            if self.pace is not None:
                try:
                    self.pace.slow(min(MAX_PAUSE_SECONDS, max(
                        _retry_after(self, response), self.get_backoff_time(),
                        MIN_PAUSE_SECONDS)))
                except Exception as exc:  # the store: never its text (it may hold its URL)
                    log.warning("node answered %d: the connection's pace could not be slowed "
                                "(%s)", response.status, type(exc).__name__)
            if response.status == 503 and (url or "").split("?")[0].endswith(BROADCASTS):
                reason = ResponseError("503 on a broadcast: its outcome is unknown, not resent")
                raise MaxRetryError(_pool, url or "", reason)
        retry: NodeRetry = super().increment(method, url, response, error, _pool, _stacktrace)
        if self.pace is not None:
            # The resend's slot, taken here so that a slot too far away ends the call with
            # the answer it has (urllib3 returns the last answer when this raises).
            deadline = current_deadline()
            try:
                self.pace.take(deadline.left() if deadline is not None else QUEUE_SECONDS)
            except Exception as exc:  # PaceTooFar, or the pace's store: never its text
                reason = ResponseError(f"no resend: {type(exc).__name__}")
                raise MaxRetryError(_pool, url or "", reason) from None
        return retry

    def sleep(self, response: Any = None) -> None:
        if self.pace is None:
            super().sleep(response)
        # With a pace, :meth:`increment` waited for the resend's slot already.


def _retry_after(retry: NodeRetry, response: Any) -> float:
    """The answer's ``Retry-After`` in seconds; 0 when absent or unreadable."""
    try:
        return float(retry.get_retry_after(response) or 0.0)
    except Exception:  # urllib3's InvalidHeader: a value neither seconds nor a date
        return 0.0


class BoundedProvider(HTTPProvider):  # type: ignore[misc]  # tronpy ships no types
    """One node root, its key sent there only; each call bounded in time and bytes."""

    def __init__(self, url: str, *, api_key: str | None, timeout: Timeout, max_answer_bytes: int,
                 max_retries: int, pool_size: int = 16, pace: Pace | None = None) -> None:
        super().__init__(url.rstrip("/") + "/", timeout=timeout.read)
        # tronpy sends keys only to URLs containing "trongrid", and then its own shared
        # keys when none is given: this provider sends the connection's key, or none.
        self.use_api_key = False
        if api_key:
            self.sess.headers[API_KEY_HEADER] = api_key
        self.bounds = timeout
        self.max_answer_bytes = max_answer_bytes
        self.pace = pace
        # Resends within the call's one deadline: none after it, no wait past it.
        retry = NodeRetry(total=max_retries, connect=max_retries, read=max_retries,
                              status=max_retries, redirect=0, backoff_factor=0.5,
                              status_forcelist=(429, 500, 502, 503, 504),
                              allowed_methods=frozenset({"POST"}),
                              respect_retry_after_header=True, raise_on_status=False,
                              raise_on_redirect=False)
        retry.pace = pace
        adapter = DeadlineAdapter(max_retries=retry, pool_maxsize=pool_size)
        self.sess.mount("http://", adapter)
        self.sess.mount("https://", adapter)

    def make_request(self, method: str, params: Any = None) -> dict[str, Any]:
        """POST ``params`` to ``method`` (``wallet/getaccount``...) and read its JSON object."""
        payload = self.json_answer(method, params)
        if not isinstance(payload, dict):
            raise ValueError("the node's answer is not a JSON object")
        return payload

    def json_answer(self, method: str, params: Any = None) -> Any:
        """POST ``params`` to ``method`` and decode its JSON answer, whatever its type: the
        few calls java-tron answers with an array (``gettransactioninfobyblocknum``)."""
        url = urljoin(self.endpoint_uri, method)
        request = self.sess.prepare_request(requests.Request("POST", url, json=params or {}))
        settings = self.sess.merge_environment_settings(url, {}, None, None, None)
        self._wait_for_slot(method)
        try:
            answer = exchange(
                self.sess.get_adapter(url), request, connect=self.bounds.connect,
                read=self.bounds.read, total=self.bounds.overall, limit=self.max_answer_bytes,
                verify=settings["verify"], proxies=settings["proxies"])
        except DeadlineExceeded as exc:
            raise NodeError(f"node call {method} failed: {exc}", path=method) from None
        except BodyError as exc:
            raise NodeError(f"node call {method} failed: {exc}", status=exc.status,
                            path=method) from None
        if 300 <= answer.status < 400:
            raise NodeError(f"node call {method} {redirect_message(answer.status, answer.headers)}",
                            status=answer.status, path=method)
        if answer.status >= 400:
            raise NodeError(f"node call {method} failed", status=answer.status, path=method)
        return json.loads(answer.body)

    def _wait_for_slot(self, method: str) -> None:
        """The pace's slot for this call's first request (none without a pace). A pace
        that cannot say (its store unreachable) sends nothing: the call fails as a node
        call that got no answer, retryable, and no request went out."""
        if self.pace is None:
            return
        try:
            self.pace.take(QUEUE_SECONDS)
        except PaceTooFar as exc:
            raise NodeError(f"node call {method} not sent: {exc}", path=method) from None
        except Exception as exc:  # the pace's store: never its text (it may hold its URL)
            raise NodeError(f"node call {method} not sent: the connection's pace could not be "
                            f"read ({type(exc).__name__})", path=method) from None
