"""HMS 4's stored-only objects: kept and answered with HMS's names, uniqueness and errors, never
acted on (we run no scheduled query, stored procedure or workload plan). Scheduled queries and
their executions, stored procedures and packages, runtime statistics, replication metrics,
workload management resource plans, the schema registry and named serdes; each kind is rows
of ``meta`` under ``layout.registry_key``, read and written through one helper
(``core.named_rows``).

May import: ``catalog.core`` and below (``basics``, ``data``, ``events``), and
``catalog.objects`` for the databases they live in (the same rank).
"""
