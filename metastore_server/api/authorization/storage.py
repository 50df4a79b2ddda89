"""``--authorization storage``: HMS's storage-based authorization. Creating, altering or
dropping a database, table or partition needs the caller's permission on the data's
directories, checked through the data layer (``catalog/data/permissions.py``):

- create: write on the parent of the object's directory (or its nearest existing ancestor);
  a table also needs write on its database's directory;
- alter: write on the parent of the object's directory (a new location: on its parent too; a
  rename that moves a table's data: removing the old directory, writing where the new goes);
- drop: removing the directory (write on its parent; a sticky parent: owning one of them); a
  table also needs write on its database's directory, and a cascading database drop each of
  its tables' removal;
- reads (``get_database``, ``get_table``): read on the directory, unless
  ``hive.security.metastore.authorization.auth.reads`` is false (HMS's default: true).

A refusal is HMS's MetaException with the file system's message; nothing of the call is
done. Each method declares what it needs (``@thrift(storage=...)``, built with
:mod:`.storage_rules`). See ``docs/security.md``.
"""

from __future__ import annotations

from typing import Any

import structlog

from metastore_server.api.areas import DECLARED
from metastore_server.api.authorization.storage_places import CHANGE, DELETE, READ, Need, Places
from metastore_server.api.authorization.storage_rules import Rule, StorageCheck
from metastore_server.caller import Session
from metastore_server.catalog import Catalog, StoragePermissions, permissions
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: HMS's switch of read checks, and its default.
AUTH_READS = "hive.security.metastore.authorization.auth.reads"


def _declared(kind: str) -> dict[str, StorageCheck]:
    return {
        name: d.storage
        for name, d in DECLARED.items()
        if d.storage is not None and d.storage.kind == kind
    }


#: Each Thrift method that creates, alters or drops a database, table or partition, with
#: what it needs (its ``storage=`` declaration). A method declaring none is not checked:
#: ``tests/unit`` holds every such method of the IDL to this table or to ``NOT_CHECKED``.
CHANGES: dict[str, Rule] = {name: c.rule for name, c in _declared("changes").items() if c.rule}
#: Methods named like changes of databases, tables or partitions that change no data
#: location, with why (held to the IDL by ``tests/unit``).
NOT_CHECKED: dict[str, str] = {name: c.why for name, c in _declared("not_checked").items()}
#: The reads HMS checks when ``auth.reads`` is on (its pre-read events).
READS: dict[str, Rule] = {name: c.rule for name, c in _declared("reads").items() if c.rule}


class StorageAuthorizer:
    """Checks each change (and read, with ``auth.reads``) against the file system's
    permissions of the caller."""

    def __init__(self, catalog: Catalog, *, auth_reads: bool = True) -> None:
        self.places = Places(catalog)
        self.permissions = StoragePermissions(catalog.ctx.data.filesystems)
        self.rules: dict[str, Rule] = {**CHANGES, **(READS if auth_reads else {})}

    def needs(self, api: str, values: dict[str, Any]) -> list[Need] | None:
        """What call ``api`` needs (None: it is not checked)."""
        rule = self.rules.get(api)
        return None if rule is None else rule(self.places, values)

    def check(self, api: str, values: dict[str, Any], session: Session) -> None:
        """Refuse (MetaException) a call whose caller lacks a permission it needs."""
        needs = self.needs(api, values)
        if not needs:
            return
        if not session.user:
            raise hms.MetaException(
                message="storage-based authorization: the call is made as no user "
                "(authenticate, or name one with set_ugi)"
            )
        try:
            who = self.permissions.principal(session.user)
            for need in dict.fromkeys(needs):
                if need.access == DELETE:
                    self.permissions.check_delete(need.location, who)
                elif need.access == CHANGE:
                    self.permissions.check_change(need.location, who)
                else:
                    access = permissions.READ if need.access == READ else permissions.WRITE
                    self.permissions.check(need.location, who, access)
        except permissions.Refused as exc:
            log.info("storage_authorization_refused", method=api, user=session.user,
                     reason=str(exc))  # fmt: skip
            raise hms.MetaException(message=str(exc)) from None


def _flag(settings: dict[str, Any], key: str, default: bool) -> bool:
    values = settings.get("config_values") or {}
    text = str(values.get(key, "")).strip().lower()
    return default if not text else text == "true"


def build(catalog: Catalog, settings: dict[str, Any]) -> StorageAuthorizer:
    """The storage authorizer of a server (``config_values``: its configuration, for
    ``auth.reads``)."""
    # Directories made for a caller become the caller's, as HMS makes them as the caller.
    catalog.ctx.data.give_to_caller = True
    return StorageAuthorizer(catalog, auth_reads=_flag(settings, AUTH_READS, True))
