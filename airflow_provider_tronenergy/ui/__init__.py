"""The Energy page in the Airflow UI: what energy cost, what it saved, what waits for a person.

The figures, for a period (``period``), as JSON-safe dicts: ``purchases`` (money per day,
orders by state: the purchase journal), ``chain`` (energy rented against what the chain
charged the payouts: the payout journal's receipts), ``waiting`` (unknown purchases,
payouts failed on chain, each with what to do), ``arrivals`` (callbacks per hour,
redeliveries, conflicts, each consumer's lag: the callback store and the deposit ledger),
``batches`` (per ``payout batch ready`` event, read from Airflow's database by
``events``), all put together and timed by ``data``. ``page`` lays them out as one HTML
page with inline SVG charts (``svg``; nothing fetched from elsewhere); ``app`` serves it on
the API server behind Airflow's auth manager; ``plugin`` mounts it and adds the **Energy**
entry to the UI's navigation (``urls``: where). Nothing else in the package imports this
room.
"""
