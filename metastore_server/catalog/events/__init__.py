"""The notification log (``log``: HMS's NOTIFICATION_LOG in the store) and the JSON messages
of its events (``messages``, with Thrift's JSON protocol in ``thrift_json``), as HMS 2.3's
DbNotificationListener writes them; ``listener`` turns announced changes
(``basics.changes``) into events.

May import: ``catalog.basics``, ``storage``.
"""
