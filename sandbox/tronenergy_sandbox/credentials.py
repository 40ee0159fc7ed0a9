"""The account's three secrets and signature scheme, kept in the world's database."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from tronenergy_sandbox.database import Database


@dataclass(frozen=True, repr=False)
class Credentials:
    api_key: str
    api_secret: str
    webhook_secret: str
    signature_scheme: str
    webhook_url: str | None

    def __repr__(self) -> str:  # the three secrets never reach a log line
        return f"Credentials(signature_scheme={self.signature_scheme!r}, ***)"


class CredentialStore(Database):
    """Secrets persist with ``--state``, so a restarted sandbox keeps its clients' keys."""

    def credentials(
        self,
        *,
        api_key: str | None,
        api_secret: str | None,
        webhook_secret: str | None,
        signature_scheme: str | None,
        webhook_url: str | None,
    ) -> Credentials:
        """Flags win; otherwise what the state file holds; otherwise fresh random values."""
        given = {
            "api_key": api_key,
            "api_secret": api_secret,
            "webhook_secret": webhook_secret,
            "signature_scheme": signature_scheme,
            "webhook_url": webhook_url,
        }
        defaults = {
            "api_key": "sbx_" + secrets.token_hex(12),
            "api_secret": secrets.token_hex(24),
            "webhook_secret": "whsec_" + secrets.token_hex(20),
            "signature_scheme": "v1",
            "webhook_url": "",
        }
        for key, value in given.items():
            if value is not None:
                self._set_meta(key, value)
            else:
                self._meta_default(key, defaults[key])
        return Credentials(
            api_key=self._meta("api_key") or "",
            api_secret=self._meta("api_secret") or "",
            webhook_secret=self._meta("webhook_secret") or "",
            signature_scheme=self._meta("signature_scheme") or "v1",
            webhook_url=self._meta("webhook_url") or None,
        )
