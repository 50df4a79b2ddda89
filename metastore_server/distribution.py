"""The project's one distribution name, and how to install what a feature needs.

``pip install hbase-metastore`` is the Python client alone (thriftpy2 and pure-sasl); the
server is the ``server`` extra, and every feature extra (``rest``, ``ldap``, ``s3``, ``hdfs``,
``bench``) brings the server with it. Messages about a missing package name the extra through
:func:`install_hint`, so every one says the same name.
"""

from __future__ import annotations

#: The distribution name (pyproject.toml's ``project.name``).
NAME = "hbase-metastore"


def install_hint(extra: str) -> str:
    """The command that installs ``extra``, from a package index or from a checkout."""
    return f"pip install '{NAME}[{extra}]'; in a checkout: .venv/bin/pip install -e '.[{extra}]'"
