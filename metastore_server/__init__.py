"""A Hive-Metastore-compatible Thrift server on an embedded store or Apache HBase."""

__version__ = "0.1.0"
