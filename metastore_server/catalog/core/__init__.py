"""What every catalog service shares: the context (store, warehouse, data operations, clock,
the write lock that makes one call one store transaction) in ``context``; exclusive claims for
stores without atomic batches (``claims``); the listing cache (``listing_cache``); and the
change listeners that object rooms announce their changes to (``changes``).

May import: ``catalog.basics``, ``catalog.data``, ``catalog.events``.
"""
