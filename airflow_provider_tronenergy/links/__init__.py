"""Extra links: what a task's page in the Airflow UI opens (``explorer``: the block
explorer's page of the transactions a task made). Operators hold them; Airflow calls them in
the worker as the task ends and keeps each URL as an XCom, as the official providers'
``links`` packages do."""
