"""What every catalog service shares: the context (store, warehouse, data operations, clock,
the write lock that makes one call one store transaction) in ``context``; exclusive claims for
stores without atomic batches (``claims``); and the listing cache (``listing_cache``). The
context carries the announcer of written changes (``basics.changes``).

May import: ``catalog.basics``, ``catalog.data``, ``catalog.events``.
"""
