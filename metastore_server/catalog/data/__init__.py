"""Managed data: the directories the metastore creates, deletes and moves, on every file
system through fsspec: file systems and places (``filesystems``), file operations on a place
(``files``), planning and making directories and deletions (``operations``), carrying a
deletion out (``deletions``), moving a directory (``moves``); and the warehouse's default
locations (``warehouse``).

May import: ``catalog.basics`` and the shared modules below the catalog (``audit``, ``thrift_api``).
"""
