"""Who may do what (``--authorization``): checks run before a call is served, as HMS's
pre-event listeners do, with the caller of :mod:`metastore_server.caller`.

- ``off`` (the default): every call is served, as HMS without an authorization manager.
- ``privileges``: the roles and privileges the server stores, enforced as HMS's SQL-standard
  based authorization defines them (:mod:`.privileges`);
- ``storage``: HMS's storage-based authorization: a change needs the caller's permission on
  the data's directories (:mod:`.storage`).
- each other mode is an :class:`Authorizer` registered in :data:`AUTHORIZATION_MODES` by
  its own module of this package; a refused call answers the exception HMS answers (its
  MetaException, or the call's declared one) and nothing of it is done.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

from metastore_server.caller import Session
from metastore_server.catalog import Catalog


class Authorizer(Protocol):
    """Decides whether a call may be served."""

    def check(self, api: str, values: dict[str, Any], session: Session) -> None:
        """Return when ``session``'s caller may make call ``api`` with ``values`` (its
        arguments by IDL name); raise the HMS exception the caller is answered otherwise."""


#: What builds a mode's authorizer: the catalog and the server's settings.
AuthorizerBuilder = Callable[[Catalog, dict[str, Any]], Authorizer]

#: ``--authorization`` mode -> the module of this package that builds it (``build``).
AUTHORIZATION_MODES: dict[str, str] = {"storage": "storage", "privileges": "privileges"}
#: Every ``--authorization`` value.
AUTHORIZATION_CHOICES = ("off", *AUTHORIZATION_MODES)


def build_authorizer(mode: str, catalog: Catalog, **settings: Any) -> Authorizer | None:
    """The authorizer of an ``--authorization`` mode (None for ``off``); ValueError for a
    mode that is not known or settings it cannot use."""
    if mode == "off":
        return None
    module = AUTHORIZATION_MODES.get(mode)
    if module is None:
        raise ValueError(
            f"authorization must be one of {', '.join(AUTHORIZATION_CHOICES)}, not {mode!r}"
        )
    builder: AuthorizerBuilder = importlib.import_module(f"{__name__}.{module}").build
    return builder(catalog, settings)
