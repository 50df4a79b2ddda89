"""The Iceberg REST catalog API (``serve --rest-port``): the tables Iceberg's HiveCatalog keeps
in this metastore, served over HTTP to REST clients (pyiceberg's ``RestCatalog``, Spark's and
Trino's ``rest`` catalogs, DuckDB), through the same handler and rules as the Thrift API.

- ``process``: the catalog's process (uvicorn serving the Starlette application of ``routes``);
  ``sibling``: how ``serve`` runs it beside the Thrift server.
- ``routes``: the HTTP endpoints, JSON in and out; ``errors``: the spec's error model;
  ``auth``: who a request is (HTTP Basic, OAuth2 tokens).
- ``calls``: metastore calls made in-process, as a caller, authorized and audited.
- ``namespaces``: namespaces as databases; ``tables`` and ``iceberg_tables``: Iceberg tables as
  HMS tables and their metadata files; ``views`` and ``view_updates``: Iceberg views;
  ``purge``: a dropped table's files.
- ``commits``, ``transactions``, ``locks``: commits under the HMS table lock with a
  compare-and-set of the metadata file, one table or several.
"""
