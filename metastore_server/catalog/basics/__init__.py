"""Shared basics of the catalog: HMS naming rules (``names``), the Thrift binary encoding of
stored objects (``serde``), values printed as Java prints them for HMS-worded messages
(``java_text``), partitions answered as their stored bytes (``encoded``), and the changes
object rooms announce to the listeners registered at start (``changes``).

May import: ``metastore_server.thrift_api``, ``planner``, ``storage``. Nothing else of the catalog.
"""
