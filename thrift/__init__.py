"""Thrift IDL files of the server, shipped as package data of ``metastore_server.idl``."""
