"""Managed data: the directories the metastore creates, deletes and moves, on every file
system through fsspec (``filesystems``, ``files``, ``operations``), and the warehouse's default
locations (``warehouse``).

May import: ``catalog.basics`` and the shared modules below the catalog (``audit``, ``thrift_api``).
"""
