"""Who signs a payout and under which name: each signer's checked signature in order, and
the scope a claim is made under."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from airflow_provider_tronenergy.signer import Signer, SignerError, signature_for


def signatures_of(signers: Sequence[Signer], txid: bytes) -> tuple[bytes, ...]:
    """Each signer's checked signature of ``txid``, in order. A cosigner that fails is
    named (its address; another failure's type, never its text, which may repeat a
    secret): a :class:`~..signer.SignerError` of the same kind, so the chunk is given up
    before anything is journaled as signed."""
    signatures = []
    for index, signer in enumerate(signers):
        try:
            signatures.append(signature_for(signer, txid))
        except SignerError as exc:
            if index == 0:
                raise
            raise type(exc)(f"cosigner {signer.address}: {exc}") from None
        except Exception as exc:
            if index == 0:
                raise
            raise SignerError(f"cosigner {signer.address} failed ({type(exc).__name__}): "
                              "nothing was signed") from None
    return tuple(signatures)


def scope_name(parts: Sequence[object], pid: Callable[[], int] | None = None) -> str:
    """Who claims: the task instance's try and the process, so a claim is never mistaken
    for another worker's."""
    import os
    import socket

    process = (pid or os.getpid)()
    return "/".join(str(p) for p in parts) + f"@{socket.gethostname()}:{process}"
