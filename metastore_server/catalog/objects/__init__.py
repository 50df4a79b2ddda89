"""The catalog's objects with HMS's rules and messages: databases, tables (``TableRef``),
functions, types, indexes, constraints, column statistics, partition event marks, and the table
filter of ``get_table_names_by_filter``.

May import: ``catalog.core`` and below (``basics``, ``data``, ``events``).
"""
