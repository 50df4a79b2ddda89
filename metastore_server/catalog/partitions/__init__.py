"""Partition writes with HMS's rules, and the partition writes the catalog offers
(``service.Partitions``, ``catalog.partitions``: the parts below, composed; reads are
``catalog.partition_reads``, of the reads room): ``adding`` (add, with the table's adding claim
on HBase), ``dropping`` (drop, with the data it deletes), ``altering`` (alter, rename, columns
pushed to partitions, rows of a renamed table), ``exchange``, what every writer holds
(``writer``), writing partition rows (``row_writes``), the dependency record of a dependent
table's partitions (``dependency_records``), and PartitionSpec both ways (``specs``).

May import: every catalog sub-room below it (``security``, ``timelines``, ``dependencies``, ...).
"""
