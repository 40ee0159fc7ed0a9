"""Signers for tests: a hot wallet whose key is the signer connection, and the shape a KMS
or HSM adapter takes (``signer_class``)."""

from __future__ import annotations

import json
from typing import Any

from tronpy.keys import PrivateKey


def signing_wallet(control: Any, monkeypatch: Any, usdt: str) -> tuple[PrivateKey, str]:
    """A hot wallet with ``usdt``, TRX and staked energy, its key the signer connection."""
    key = PrivateKey.random()
    address = key.public_key.to_base58check_address()
    control.wallet(address, trx="200", usdt=usdt, staked=2_000_000)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    return key, address



class KmsLikeSigner:
    """Signs with a key it derives from a passphrase: the key never passes through Airflow."""

    def __init__(self, passphrase: str) -> None:
        self._key = PrivateKey.from_passphrase(passphrase.encode())

    @property
    def address(self) -> str:
        return str(self._key.public_key.to_base58check_address())

    def sign(self, txid: bytes) -> bytes:
        return bytes(self._key.sign_msg_hash(txid).to_bytes())


class LyingSigner(KmsLikeSigner):
    """Claims one address and signs with another key (a misconfigured signer)."""

    def __init__(self, passphrase: str, claimed: str) -> None:
        super().__init__(passphrase)
        self._claimed = claimed

    @property
    def address(self) -> str:
        return self._claimed


class ShortSigner(KmsLikeSigner):
    """Returns a 64-byte signature (no recovery id)."""

    def sign(self, txid: bytes) -> bytes:
        return super().sign(txid)[:64]
