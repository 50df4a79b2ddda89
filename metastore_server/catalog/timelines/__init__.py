"""Partition timelines kept by the server (``keeper``) and which partition columns are time
columns (``time_columns``). The timeline structures themselves are the pure top-level
``timeline`` package.

May import: ``catalog.reads`` and below.
"""
