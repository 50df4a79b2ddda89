"""The Iceberg REST catalog API (``serve --rest-port``): the tables Iceberg's HiveCatalog keeps
in this metastore, served over HTTP to REST clients (pyiceberg's ``RestCatalog``, Spark's and
Trino's ``rest`` catalogs, DuckDB), through the same handler and rules as the Thrift API.

- ``process``: the catalog's process (uvicorn serving the Starlette application of ``routes``);
  ``sibling``: how ``serve`` runs it beside the Thrift server.
- ``routes``: the HTTP endpoints, JSON in and out; ``errors``: the spec's error model.
- ``calls``: metastore calls made in-process, as a caller, authorized and audited.
- ``namespaces``: namespaces as databases; ``tables``: Iceberg tables as HMS tables;
  ``commits``: commits under the HMS table lock with a compare-and-set of the metadata file.
"""
