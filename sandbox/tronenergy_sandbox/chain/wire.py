"""java-tron's HTTP conventions, shared by the node's routes (``sandbox/node.py``, ``routes``).

Answers are plain JSON (no service envelope); a refused call answers
``{"code": NAME, "message": ...}`` inside ``result`` or at the top, as java-tron
prints a ``Return`` (the message's bytes in hex, as text with ``visible``); a
request it cannot read answers ``{"Error": "<exception class> : <message>"}``.
An unreadable body is an empty request.

A request is read as java-tron's servlets read it (:func:`call`): a GET's query
parameters, a POST's JSON body (or form fields); ``visible`` from the query
(``Util.getVisible``: ``"true"`` in any case) or the body (``Util.getVisiblePost``);
address fields in hex ``41...`` unless ``visible``, then base58check, the wrong form
refused as ``JsonFormat`` or ``Util.getHexAddress`` refuse it. Rules copied from
java-tron's ``framework/src/main/java/org/tron/core/services/http/Util.java``,
``PostParams.java`` and ``JsonFormat.java`` (tronprotocol/java-tron 1e35f79).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.responses import Response

from tronenergy_protocol.address import is_valid_address
from tronenergy_sandbox.api import sandbox
from tronenergy_sandbox.chain import codec
from tronenergy_sandbox.world import World


def answer(payload: dict[str, Any]) -> Response:
    """A JSON answer, as java-tron sends every one (status 200)."""
    return Response(json.dumps(payload), media_type="application/json")


def nothing() -> Response:
    """What a servlet with an empty ``doGet`` answers a GET: status 200, no body."""
    return Response(b"", media_type="text/plain")


def refusal(code: str, message: str, visible: bool = False) -> dict[str, Any]:
    """A ``Return`` that failed: its code name and its message (``Return.message`` is a
    name field in java-tron's ``HttpSelfFormatFieldName``: text with ``visible``, else hex)."""
    return {"code": code, "message": message if visible else message.encode().hex()}


def error(code: str, message: str, visible: bool = False) -> Response:
    """A refused call whose ``Return`` sits under ``result`` (trigger and estimate calls)."""
    return answer({"result": refusal(code, message, visible)})


def failure(exc: codec.CodecError) -> Response:
    """``Util.processError``: ``{"Error": "<exception class> : <message>"}``."""
    return answer({"Error": f"{exc.java_class} : {exc}"})


@dataclass(frozen=True)
class Call:
    """One request as a java-tron servlet reads it: its parameters, ``visible``, and the
    JSON text ``JsonFormat`` parses (a ParseException names the line:column it stopped at)."""

    params: dict[str, Any]
    visible: bool
    text: str
    get: bool

    def address(self, key: str) -> bytes:
        """An address field merged by ``JsonFormat`` (hex, or base58 with ``visible``)."""
        value = self.params.get(key)
        try:
            return codec.json_address(value, self.visible)
        except codec.CodecError as exc:
            if exc.java_class != codec.PARSE_EXCEPTION:
                raise
            raise codec.CodecError(f"{self._position(value)}: {exc}",
                                   java_class=exc.java_class) from None

    def hex_address(self, key: str) -> bytes:
        """An address read as ``Util.getHexAddress`` (with ``visible``) then
        ``ByteArray.fromHexString``: ``getaccountresource``, ``getaccountnet``."""
        value = self.params.get(key)
        if value is None:
            return b""  # getHexAddress(null) is null, fromHexString(null) empty
        text = str(value)
        if self.visible:
            return codec.from_base58_check(text)
        try:
            return codec.from_hex_string(text)
        except codec.CodecError:
            raise codec.CodecError(
                "exception decoding Hex string: invalid characters encountered in Hex string",
                java_class="class org.bouncycastle.util.encoders.DecoderException") from None

    def number(self, key: str) -> int | None:
        """An int64 parameter: a GET's text through ``Long.parseLong``; None when absent or
        not a whole number (a POST's non-integer is no request java-tron answers with data)."""
        value = self.params.get(key)
        if self.get and isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                raise codec.CodecError(f'For input string: "{value}"', java_class=
                                       "class java.lang.NumberFormatException") from None
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        return value

    def _position(self, value: Any) -> str:
        """Where the tokenizer stood: the value's token, 1-based line and column."""
        index = self.text.find(json.dumps(value)) if value is not None else -1
        if index < 0:
            return "1:1"
        line = self.text.count("\n", 0, index)
        column = index - (self.text.rfind("\n", 0, index) + 1)
        return f"{line + 1}:{column + 1}"


def parse_boolean(value: Any) -> bool:
    """Java's ``Boolean.parseBoolean`` of the value's text: ``"true"`` in any case."""
    return str(value).strip().lower() == "true" if value is not None else False


async def call(request: Request) -> Call:
    """The request as java-tron reads it (``Util.getVisible`` for a GET, ``PostParams`` for a
    POST: a JSON body, or form fields turned into one)."""
    if request.method == "GET":
        params: dict[str, Any] = dict(request.query_params)
        return Call(params, parse_boolean(params.get("visible")),
                    json.dumps(params, separators=(",", ":")), True)
    raw = (await request.body()).decode("utf-8", "replace")
    if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        try:
            json.loads(raw)
        except ValueError:
            raw = json.dumps(dict(parse_qsl(raw)))
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        value = None
    params = value if isinstance(value, dict) else {}
    return Call(params, parse_boolean(params.get("visible")) if "visible" in params else False, raw,
                False)


async def body(request: Request) -> dict[str, Any]:
    """The request's JSON object; ``{}`` when there is none or it is not an object."""
    try:
        value = json.loads(await request.body() or b"{}")
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {}


def address(payload: dict[str, Any], key: str = "address") -> str | None:
    """A base58 address field, or None when absent or invalid."""
    value = payload.get(key)
    return value if isinstance(value, str) and is_valid_address(value) else None


def visible(payload: dict[str, Any]) -> bool:
    """java-tron's ``visible``: base58 addresses in the answer (else hex)."""
    return payload.get("visible") is True


def world(request: Request) -> World:
    """The world the sandbox serving ``request`` holds."""
    return sandbox(request).world
