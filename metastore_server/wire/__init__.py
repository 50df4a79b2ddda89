"""The Thrift binary codec and the shapes of stored and kept bytes, below the catalog.

What the server knows of Thrift's bytes lives here and nowhere else: following a message as it
arrives (``walk``, compiled), where a struct's fields lie (``walk.struct_fields``), partitions
read from and written as their wire bytes (``partitions``, compiled; ``adds``), objects as
stored bytes (``serde``, ``encoded``), replies framed around stored bytes (``stored_replies``),
the two HMS generations' request layouts (``layouts``), the Java TJSON of event messages
(``thrift_json``). It knows the IDL and nothing of the catalog, the api or the server.
"""
