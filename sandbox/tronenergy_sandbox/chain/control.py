"""The chain's control API (``/sandbox/chain``): what tests and checks drive and count.

Loopback-only like the rest of ``/sandbox`` (``sandbox/control.py``).
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from tronenergy_sandbox import params
from tronenergy_sandbox.api import sandbox
from tronenergy_sandbox.control import loopback_only, reply

router = APIRouter(prefix="/sandbox/chain", include_in_schema=False,
                   dependencies=[Depends(loopback_only)])
STATUSES = ("executed", "pending", "dropped")


@router.get("")
async def chain(request: Request) -> Response:
    """The head, the solidified block, whether production is paused, and the world's
    clock (``clock_ms``: a worker in another process judges the node's times against it
    when the sandbox's clock is a test's)."""
    world = sandbox(request).world
    world.advance()
    head = world.head_number()
    return reply(request, {"head": head, "solidified": world.solid_number(),
                           "block_id": world.block_id(head), "paused": world.paused(),
                           "block_interval_ms": round(world.block_seconds * 1000),
                           "clock_ms": int(world.clock() * 1000)})


@router.get("/transactions")
async def transactions(request: Request) -> Response:
    """``?owner=&to=&status=``: signed transactions (executed by default) and their receipts."""
    query = request.query_params
    owner = params.optional_address(query.get("owner") or None, "owner")
    to = params.optional_address(query.get("to") or None, "to")
    status = query.get("status") or "executed"
    if status not in STATUSES:
        raise params.invalid(f"status must be one of {', '.join(STATUSES)}")
    return reply(request, sandbox(request).world.chain_transactions(owner=owner, to=to,
                                                                    status=status))


@router.post("/lag")
async def lag(request: Request) -> Response:
    """``{"blocks": N, "ranges": true}``: block reads (``gettransactioninfobyblocknum``, and
    ``getblockbylimitnext`` unless ``ranges`` is false: the balancer sent those to an
    up-to-date backend) answer as a backend N blocks behind the head the head reads
    report, as one behind a load balancer does (``[]`` for a block it has not got); 0 ends
    it."""
    body = params.json_object(await request.body())
    blocks = params.integer(body.get("blocks"), "blocks", 0)
    if not 0 <= blocks <= 100_000:
        raise params.invalid("blocks must be between 0 and 100000")
    world = sandbox(request).world
    world.set_lag(blocks, ranges=body.get("ranges", True) is not False)
    return reply(request, {"lag": blocks})


@router.post("/pause")
async def pause(request: Request) -> Response:
    """Stop producing blocks (a node that lags): broadcasts wait for the next block."""
    head = sandbox(request).world.pause_blocks()
    return reply(request, {"paused": True, "head": head})


@router.post("/resume")
async def resume(request: Request) -> Response:
    """Produce blocks again, the next one a block interval from now."""
    state = sandbox(request)
    head = state.world.resume_blocks()
    if state.producer is not None:
        state.producer.wake()
    return reply(request, {"paused": False, "head": head})
