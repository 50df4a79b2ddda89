"""Materialized views as HMS 4 keeps them for query rewriting (``materialized``): their
creation metadata, the views a rewrite may use, whether a view's source tables changed since
its snapshot, and the lock that lets one rebuild run at a time.

May import: ``catalog.objects``, ``catalog.txn`` and below.
"""
