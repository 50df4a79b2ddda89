"""HMS's rules over the store, in sub-rooms that import one way (lowest first):

``basics`` < ``data``, ``events`` < ``core`` < ``objects``, ``txn``, ``registry`` < ``reads`` <
``security``, ``timelines``, ``dependencies`` < ``partitions`` < ``facade``.

``facade.Catalog`` composes them; the API layer (``metastore_server.api``) talks to it.
``tests/unit/test_layering.py`` checks the order.
"""
