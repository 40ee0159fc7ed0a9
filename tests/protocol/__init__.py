"""Tests of tronenergy_protocol (protocol/, the code the provider and the sandbox share), one
test_<module>.py per module tested.

A package, so test module names may repeat across rooms (tests/sensors/test_order.py and
tests/triggers/test_order.py).
"""
