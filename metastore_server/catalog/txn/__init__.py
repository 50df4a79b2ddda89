"""Locks, transactions and compaction requests, kept in the store as HMS keeps them
(``transactions``), and the pure lock-compatibility rules (``lock_rules``).

May import: ``catalog.core`` and below.
"""
