"""Reading partitions: key ranges with residual filters (``scan``), whole-table listings and
the cache-or-store choice (``whole_listing``), partition reads by name, spec, filter and
expression (``partition_reads``, ``expr``), ``get_partition_values`` rows (``values_reader``),
and EXPLAIN of a filter (``explain``).

May import: ``catalog.objects`` and below.
"""
