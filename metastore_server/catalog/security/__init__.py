"""Who may do what, as HMS stores it: roles and memberships (``roles``), grants as stored rows
and their removal with dropped objects (``grants``), the objects privilege calls name
(``grant_targets``), the privilege calls themselves (``privileges``), and the delegation-token
store (``secrets``).

May import: ``catalog.reads`` and below.
"""
