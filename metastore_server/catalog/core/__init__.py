"""What every catalog service shares: the context (store, warehouse, data operations, clock,
the write lock that makes one call one store transaction) in ``context``; exclusive claims for
stores without atomic batches (``claims``); the listing cache (``listing_cache``); one value
changed by compare-and-set (``shared_value``); and named Thrift objects kept as rows of ``meta``,
written by compare-and-set (``named_rows``: catalogs, data connectors and the stored-only kinds
of ``registry``). The context carries the announcer of written changes (``basics.changes``).

May import: ``catalog.basics``, ``catalog.data``, ``catalog.events``.
"""
