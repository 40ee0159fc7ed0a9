"""Callbacks the chain has not proven: kept, with the callback's and the chain's view.

A claim is one stored callback (keyed by its ``tx_hash``, as the store keys it) whose
proof did not credit it at once: ``waiting`` (its block is not solid yet, the node does
not know it yet or did not answer; retried by every sweep), ``disputed`` (the chain
contradicts it; never credited automatically), and later ``proven`` (the chain proved
it after all and it was credited) or ``dismissed`` (a person looked and wrote why).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy.deposits.proof import DISPUTED, PROVEN, WAITING, Said, Verdict
from airflow_provider_tronenergy.deposits.schema import CLAIMS

DISMISSED: Final = "dismissed"
STATES: Final = (WAITING, DISPUTED, PROVEN, DISMISSED)
OPEN: Final = (WAITING, DISPUTED)
"""The states a person or a sweep still has to act on."""


@dataclass(frozen=True)
class Claim:
    """One row of ``deposit_claims``."""

    said: Said
    state: str
    reason: str
    detail: str
    chain: dict[str, Any]
    first_seen: str
    last_tried: str
    tries: int
    note: str | None
    resolved_by: str | None

    @property
    def tx_hash(self) -> str:
        return self.said.tx_hash

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, for the CLI and the page."""
        from airflow_provider_tronenergy.deposits.proof import REASONS

        return {"tx_hash": self.tx_hash, "state": self.state, "reason": self.reason,
                "meaning": REASONS.get(self.reason, ""), "detail": self.detail,
                "callback": json.loads(self.said.to_json()), "chain": self.chain,
                "first_seen": self.first_seen, "last_tried": self.last_tried,
                "tries": self.tries, "note": self.note, "resolved_by": self.resolved_by}


def record(conn: Connection, insert: Any, said: Said, verdict: Verdict, now: str) -> None:
    """Keep (or update) the claim of ``said`` after a proof; a claim a person dismissed, or
    one proven, is left as it is. A callback proven at once leaves no claim."""
    if verdict.state == PROVEN:
        conn.execute(CLAIMS.update().where(CLAIMS.c.tx_hash == said.tx_hash,
                                           CLAIMS.c.state.in_(OPEN)).values(
            state=PROVEN, reason=PROVEN, detail="", chain=json.dumps(verdict.chain),
            last_tried=now, tries=CLAIMS.c.tries + 1))
        return
    values = {"state": verdict.state, "reason": verdict.reason, "detail": verdict.detail[:500],
              "last_tried": now}
    if verdict.chain or verdict.reason != "node_error":  # a failed read keeps what was seen
        values["chain"] = json.dumps(verdict.chain)
    upsert = insert(CLAIMS).values(
        tx_hash=said.tx_hash, store_id=said.store_id, to_address=said.to_address,
        token=said.token[:20], amount=said.amount[:100], said=said.to_json(),
        received_at_ms=said.received_at_ms, first_seen=now, tries=1,
        **{"chain": "{}", **values})
    conn.execute(upsert.on_conflict_do_update(
        index_elements=["tx_hash"], set_={**values, "tries": CLAIMS.c.tries + 1},
        where=CLAIMS.c.state.in_(OPEN)))


def waiting(conn: Connection, limit: int) -> list[Said]:
    """The claims a sweep tries again, least recently tried first (then oldest): a flood of
    claims that wait long is taken in turns, not the same oldest ones every sweep."""
    rows = conn.execute(sa.select(CLAIMS.c.said).where(CLAIMS.c.state == WAITING)
                        .order_by(CLAIMS.c.last_tried, CLAIMS.c.store_id).limit(limit)).scalars()
    return [Said.from_json(text) for text in rows]


def known(conn: Connection, tx_hashes: list[str]) -> set[str]:
    """Which of ``tx_hashes`` already have a claim (any state)."""
    if not tx_hashes:
        return set()
    return set(conn.execute(sa.select(CLAIMS.c.tx_hash).where(
        CLAIMS.c.tx_hash.in_(tx_hashes))).scalars())


def listing(conn: Connection, states: tuple[str, ...], limit: int) -> list[Claim]:
    rows = conn.execute(sa.select(CLAIMS).where(CLAIMS.c.state.in_(states))
                        .order_by(CLAIMS.c.store_id).limit(limit)).mappings().all()
    return [_claim(row) for row in rows]


def one(conn: Connection, tx_hash: str) -> Claim | None:
    row = conn.execute(sa.select(CLAIMS).where(
        CLAIMS.c.tx_hash == tx_hash.lower())).mappings().first()
    return None if row is None else _claim(row)


def counts(conn: Connection) -> dict[str, int]:
    """Claims per state (every state named, 0 when none)."""
    found: dict[str, int] = {row[0]: int(row[1]) for row in conn.execute(
        sa.select(CLAIMS.c.state, sa.func.count()).group_by(CLAIMS.c.state))}
    return {state: int(found.get(state, 0)) for state in STATES}


def dismiss(conn: Connection, tx_hash: str, note: str, by: str) -> bool:
    """A person's decision on an open claim: not credited, with why; False if none open."""
    done = conn.execute(CLAIMS.update().where(CLAIMS.c.tx_hash == tx_hash.lower(),
                                              CLAIMS.c.state.in_(OPEN)).values(
        state=DISMISSED, note=note[:1000], resolved_by=by[:250]))
    return bool(done.rowcount)


def _claim(row: Any) -> Claim:
    return Claim(said=Said.from_json(row["said"]), state=row["state"], reason=row["reason"],
                 detail=row["detail"], chain=json.loads(row["chain"] or "{}"),
                 first_seen=row["first_seen"], last_tried=row["last_tried"],
                 tries=int(row["tries"]), note=row["note"], resolved_by=row["resolved_by"])
