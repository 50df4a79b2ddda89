"""Who may do what, as HMS stores it: roles and memberships (``roles``), privileges on every
kind of object (``privileges``), and the delegation-token store (``secrets``).

May import: ``catalog.reads`` and below.
"""
