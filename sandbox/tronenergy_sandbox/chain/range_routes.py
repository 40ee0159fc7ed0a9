"""The node's block-range read: ``getblockbylimitnext``, full node and solidity.

Shaped as java-tron serves it (``framework/src/main/java/org/tron/core/services/http/
GetBlockByLimitNextServlet.java`` and, on ``/walletsolidity``, ``interfaceOnSolidity/http/
GetBlockByLimitNextOnSolidityServlet.java``): blocks ``startNum`` (included) to ``endNum``
(excluded), answered only when ``endNum > startNum`` and ``endNum - startNum <= 100``
(``BLOCK_LIMIT_NUM``), else ``{}``; the node returns the blocks it has (``BlockStore.
getLimitNumber``), so a range past the (solidified) head stops at it; ``Util.printBlockList``
prints ``{"block": [...]}``, each block as ``getblockbynum`` prints it.
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.responses import Response

from tronenergy_sandbox.chain import views, wire

router = APIRouter(include_in_schema=False)
BLOCK_LIMIT_NUM = 100
"""java-tron's most blocks per ``getblockbylimitnext``."""


async def _range(request: Request, *, solidified: bool) -> Response:
    body = await wire.body(request)
    start, end = body.get("startNum", 0), body.get("endNum", 0)
    if any(isinstance(n, bool) or not isinstance(n, int) for n in (start, end)) \
            or not (end > 0 and end > start and end - start <= BLOCK_LIMIT_NUM):
        return wire.answer({})
    world = wire.world(request)
    world.advance()
    visible = wire.visible(body)
    last = world.served_last(solidified, ranges=True)  # a lagging backend: at its own head
    blocks = []
    for number in range(max(start, 1), min(end, last + 1)):
        block = world.block(number)
        if block is None:
            break
        blocks.append(views.block_json(block, world.parent_id(number),
                                       world.block_transactions(number, visible),
                                       world.witness(), visible))
    return Response(json.dumps({"block": blocks}), media_type="application/json")


@router.post("/wallet/getblockbylimitnext")
async def block_range(request: Request) -> Response:
    return await _range(request, solidified=False)


@router.post("/walletsolidity/getblockbylimitnext")
async def solid_block_range(request: Request) -> Response:
    return await _range(request, solidified=True)
