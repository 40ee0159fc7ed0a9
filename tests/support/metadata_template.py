"""A migrated Airflow metadata database for each e2e deployment, migrated once per session.

``airflow db migrate`` on an empty PostgreSQL database is some 6 CPU s and 15-25 s of
wall time (DDL commits) per deployment; the schema it makes is the same for every
deployment of one Airflow release. So the first deployment of a pytest session runs it,
for real, on a database of its own, kept as a template; each deployment then gets a
copy (``CREATE DATABASE ... TEMPLATE``, under a second), which holds exactly what the
migration wrote. The template is keyed by the Airflow release and auth manager (what
decides the schema), built under an advisory lock (two serial workers at once build it
once) and dropped when the session ends.
"""

from __future__ import annotations

import atexit
import hashlib
import subprocess
import uuid
from importlib.metadata import version
from typing import Any

LOCK_KEY = 0x7E_0A1F_10
"""pg_advisory_lock key of the template's building (any fixed number: ours alone)."""

def template_name(env: dict[str, str]) -> str:
    key = "|".join((version("apache-airflow"), env.get("AIRFLOW__CORE__AUTH_MANAGER", "")))
    return f"tronenergy_airflow_template_{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def _exists(admin: Any, name: str) -> bool:
    with admin.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        return cur.fetchone() is not None


def _drop(connect: Any, name: str) -> None:
    try:
        admin = connect("postgres")
    except Exception:  # the server is gone already: nothing to drop
        return
    admin.autocommit = True
    try:
        with admin.cursor() as cur:  # not while another process copies it
            cur.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.close()  # and with it the lock


def create_migrated_database(admin: Any, connect: Any, dbname: str, airflow: str,
                             env: dict[str, str], timeout: float) -> None:
    """Create ``dbname`` holding Airflow's migrated schema. ``admin``: an autocommit
    connection to the server's ``postgres`` database; ``connect(dbname)``: a new one;
    ``airflow``, ``env``: the ``airflow`` command and the deployment's settings (its
    ``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN`` is pointed at the template while it is
    migrated)."""
    template = template_name(env)
    with admin.cursor() as cur:
        cur.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
    try:
        if not _exists(admin, template):
            building = f"{template}_{uuid.uuid4().hex[:8]}"
            with admin.cursor() as cur:
                cur.execute(f'CREATE DATABASE "{building}"')
            own = {**env, "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN":
                   f"postgresql+psycopg2://postgres@127.0.0.1:5432/{building}"}
            try:
                migrated = subprocess.run([airflow, "db", "migrate"], env=own,
                                          capture_output=True, text=True, timeout=timeout)
                assert migrated.returncode == 0, (migrated.stdout + migrated.stderr)[-4000:]
                with admin.cursor() as cur:
                    cur.execute(f'ALTER DATABASE "{building}" RENAME TO "{template}"')
            except BaseException:
                with admin.cursor() as cur:
                    cur.execute(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')
                raise
            atexit.register(_drop, connect, template)
        with admin.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{dbname}" TEMPLATE "{template}"')
    finally:
        with admin.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))
