"""Partition timelines kept by the server: the upkeep in step with every partition write
(``keeper``), timelines in a table's parameters and changed by entries (``parameters``),
timelines rebuilt from the partitions (``rebuild``), and which partition columns are time
columns (``time_columns``). The timeline structures themselves are the pure top-level
``timeline`` package.

May import: ``catalog.reads`` and below.
"""
