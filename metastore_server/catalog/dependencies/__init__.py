"""Dependent tables: the pure rules (``model``), resolution, reverse lookup and the
policies a base table's changes obey on the store (``store``), and the guard that holds them
across server processes on HBase (``guard``).

May import: ``catalog.reads`` and below.
"""
