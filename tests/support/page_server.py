"""A real Airflow API server with the Energy page's plugin, and users who sign in to it.

``running_page_server`` starts an API server (``support.api_server``) in a child process (its own
``AIRFLOW_HOME``, SQLite metadata DB, the simple auth manager's users ``admin`` (ADMIN),
``lead`` (OP) and ``viewer`` (VIEWER) with known passwords, ``support.auth_manager``
granting the page to OP and ADMIN). The plugin comes from the ``airflow.plugins`` entry
point when the installed metadata has it; a virtualenv installed before the entry point
was added gets the same class from the plugins folder instead (``plugins/`` in the home).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

import httpx

from support.api_server import running_api_server

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
PASSWORDS = {"admin": "admin-pw-1", "lead": "lead-pw-2", "viewer": "viewer-pw-3"}
ROLES = {"admin": "admin", "lead": "op", "viewer": "viewer"}
PLUGIN = "airflow_provider_tronenergy.ui.plugin:TronEnergyPagePlugin"


@dataclass
class PageServer:
    """The running server: its URL and its home."""

    root_url: str
    home: Path
    process: subprocess.Popen[str]

    def token(self, user: str) -> str:
        """A JWT for ``user``, from the auth manager's own sign-in endpoint."""
        answer = httpx.post(f"{self.root_url}/auth/token", trust_env=False, timeout=20,
                            json={"username": user, "password": PASSWORDS[user]})
        assert answer.status_code in (200, 201), answer.text
        return str(answer.json()["access_token"])


def plugin_entry_point_installed() -> bool:
    """Whether the installed metadata names the page's plugin (pyproject.toml does)."""
    return any(ep.value == PLUGIN for ep in entry_points(group="airflow.plugins"))


@contextmanager
def running_page_server(home: Path, env_extra: dict[str, str] | None = None
                        ) -> Iterator[PageServer]:
    """Start the API server in ``home``; stop it on exit."""
    home.mkdir(parents=True, exist_ok=True)
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    plugins = home / "plugins"
    plugins.mkdir(exist_ok=True)
    if not plugin_entry_point_installed():
        module, name = PLUGIN.split(":")
        (plugins / "tronenergy_energy_page.py").write_text(f"from {module} import {name}\n")
    pythonpath = os.pathsep.join([str(ROOT), str(TESTS), os.environ.get("PYTHONPATH", "")])
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "TRONENERGY_"))},
        "PYTHONPATH": pythonpath,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(plugins),
        "AIRFLOW__CORE__AUTH_MANAGER": "support.auth_manager.EnergyPageAuthManager",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS":
            ",".join(f"{user}:{role}" for user, role in ROLES.items()),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
        "AIRFLOW__API_AUTH__JWT_ISSUER": "airflow",
        "AIRFLOW__API_AUTH__JWT_SECRET": "energy-page-test-secret-" + "x" * 24,
        "PYTHONUNBUFFERED": "1",
        **(env_extra or {}),
    }
    with running_api_server(env) as (process, root_url):
        yield PageServer(root_url, home, process)
