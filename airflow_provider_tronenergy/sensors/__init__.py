"""Sensors: tasks that wait until something is finished (``order``: an energy order ends;
``transfer``: a matching transfer is stored); deferrable ones hand the wait to ``triggers``."""
