"""The notification log (``log``: HMS's NOTIFICATION_LOG in the store) and its events as HMS
3/4's DbNotificationListener writes them: metadata events (``messages``), transaction, write id
and compaction events (``txn_messages``), statistics and constraint events
(``table_messages``), objects in Thrift's JSON protocol (``thrift_json``), the messages' formats
(``formats``); ``listener`` turns announced changes (``basics.changes``) into events.

May import: ``catalog.basics``, ``storage``.
"""
