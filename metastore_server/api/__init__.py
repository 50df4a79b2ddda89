"""The Thrift face: one module per area of the IDL, each a class whose methods are the area's
Thrift methods (argument checks, one call into ``catalog.facade.Catalog``, the answer built).

``handler.py`` composes the areas for the processor; ``arguments.py`` holds the name rules and
checks they share; ``area.py`` what each is built over; ``audit_fields.py`` what a call's audit
line names. May import ``catalog`` and the shared base modules, never ``server`` or above.
See ``docs/design.md#where-a-thrift-method-lives``.
"""
