"""Tests of airflow_provider_tronenergy.purchase, one test_<module>.py per module tested."""
