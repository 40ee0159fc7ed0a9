"""An auth manager as a deployment might configure the Energy page's permission.

Airflow's simple auth manager grants every custom view to every role (VIEWER and up), so
it cannot show a signed-in user the page refuses. This one is the simple auth manager of
a deployment that grants the page (custom view ``TRON Energy``, the name the docs give
deployers) to the OP and ADMIN roles only, as a FAB role permission or a Keycloak
resource would: a VIEWER is signed in, sees the rest of the UI, and is refused the page.
Named by ``[core] auth_manager`` in the API server the page tests start.
"""

from __future__ import annotations

from typing import Any

from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager

PAGE_RESOURCE = "TRON Energy"
PAGE_ROLES = ("OP", "ADMIN")


class EnergyPageAuthManager(SimpleAuthManager):
    """The simple auth manager, with the Energy page granted to OP and ADMIN only."""

    def is_authorized_custom_view(self, *, method: Any, resource_name: str,
                                  user: Any) -> bool:
        """OP and ADMIN may read ``TRON Energy``; other custom views as the simple manager."""
        if resource_name == PAGE_RESOURCE:
            return str(method) == "GET" and (user.role or "").upper() in PAGE_ROLES
        return bool(super().is_authorized_custom_view(method=method,
                                                      resource_name=resource_name, user=user))
