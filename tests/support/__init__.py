"""Test helpers: launchers for the reference Hive Metastore and for our own server."""
