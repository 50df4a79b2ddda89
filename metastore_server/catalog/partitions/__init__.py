"""Partition writes with HMS's rules: add (with HBase claims), drop, alter, rename,
exchange, and PartitionSpec both ways (``specs``).

May import: every catalog sub-room below it (``security``, ``timelines``, ``dependencies``, ...).
"""
