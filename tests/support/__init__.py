"""Test support shared by every test folder (imported as ``support.<module>``).

``sandbox`` (start one, a ``sandbox`` fixture, a connection to it), ``control`` (the
sandbox's control API), ``orders`` (a manual world clock for order tests),
``store_fixtures`` (the callback store transfer tests read), ``waiting``
(``wait_until``), ``dagrun`` and ``postgres`` (fixtures registered for the whole
suite), real receivers and servers (``callbacks``, ``receiver``, ``hostile``,
``airflow_api_server`` and ``api_server`` (one started and stopped), ``process``),
``signed`` (signed-request helpers), ``clients`` (client factories for the client
tests), ``triggers`` (a counting store and
a poll clock for the transfer-trigger tests), ``energy_history`` (a known history in the
stores the Energy page reads, and its figures), ``page_server`` and ``auth_manager`` (a real
API server with the page's plugin, users who sign in, and a permission granted to some)
and ``airflow_compat`` (differences between Airflow releases). Helpers live here only: a
folder's conftest.py holds fixtures.
"""
