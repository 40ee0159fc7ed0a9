"""The Energy page in the Airflow UI: what energy cost, what it saved, what waits for a person.

``figures`` reads the provider's own stores (purchase journal, payout journal, callback
store, deposit ledger) into JSON-safe dicts for a period; ``page`` renders them as one
HTML page with inline SVG charts (nothing fetched from elsewhere); ``app`` serves it on
the API server behind Airflow's auth manager; ``plugin`` mounts it and adds the **Energy**
entry to the UI's navigation. Nothing else in the package imports this room.
"""
