"""Reading partitions: the partition reads the catalog offers (``partition_reads``: by values,
name, names, partial spec, filter and expression), each partition's row key, name and decoding
(``partition_rows``), the key ranges a request names (``request_ranges``), key ranges with
residual filters (``scan``), whole-table listings (``whole_listing``), the one place that
chooses between the listing cache and the store (``selection``), ``get_partition_values`` rows
(``values_reader``), get_partitions_by_expr expressions (``expr``), and EXPLAIN of a filter
(``explain``).

May import: ``catalog.objects`` and below.
"""
