"""Metastore calls made in-process by the REST catalog: the handler's Thrift methods, called
as the request's caller (its session current, its user stamped where an authenticated user
is), checked by the same authorizer as a Thrift call, and written to the audit log with
``via=rest``."""

from __future__ import annotations

import time
from typing import Any

from metastore_server.api.areas import DECLARED
from metastore_server.api.audit_fields import split_audit_target
from metastore_server.api.caller_fields import stamp_caller
from metastore_server.api.declaration import Stamp
from metastore_server.audit import audit_call
from metastore_server.caller import Session, serving
from metastore_server.catalog.basics.names import DEFAULT_CATALOG
from metastore_server.rest.errors import forbidden
from metastore_server.thrift_api import ThriftHiveMetastore, hms


class MetastoreCalls:
    """The handler's methods for one request's caller: ``calls.get_table("db", "t")``."""

    def __init__(self, handler: Any, session: Session, peer: str,
                 catalog: str = DEFAULT_CATALOG) -> None:  # fmt: skip
        self._handler = handler
        self.session = session
        self._peer = peer
        #: The HMS catalog the calls are made in (the path's ``prefix``; ``hive`` without).
        self.catalog = catalog

    def all_databases(self) -> list[str]:
        """The names of the catalog's databases."""
        if self.catalog == DEFAULT_CATALOG:
            return list(self.call("get_all_databases"))
        return list(self.call("get_databases", f"@{self.catalog}#"))

    def __getattr__(self, api: str) -> Any:
        if api.startswith("_") or not hasattr(ThriftHiveMetastore, api + "_args"):
            raise AttributeError(api)
        return lambda *arguments: self.call(api, *arguments)

    def table_ref(self, db: str, name: str) -> Any:
        """The stored table ``db.name`` (its stable id), or None; not a call of the API: ask
        only after a call that authorized this caller to read it."""
        return self._handler.catalog.tables.find(db, name)

    def authorize(self, api: str, *arguments: Any) -> None:
        """Check that this caller may call ``api`` with ``arguments`` (403 when not),
        without calling it: what a REST operation asks before it writes any file."""
        values = in_catalog(api, dict(zip(argument_names(api), arguments, strict=False)),
                            self.catalog)  # fmt: skip
        with serving(self.session):
            stamp_caller(_stamp_of(api), values, self.session)
            try:
                self._handler.authorize(api, values)
            except hms.MetaException as exc:
                raise forbidden(exc.message or "not allowed") from None

    def call(self, api: str, *arguments: Any) -> Any:
        """Call ``api`` with ``arguments`` (in the IDL's order) as this caller; raises the
        HMS exception the handler raises, a 403 ``RestError`` when the authorizer refuses."""
        names = argument_names(api)
        values = in_catalog(api, dict(zip(names, arguments, strict=False)), self.catalog)
        started = time.perf_counter()
        outcome, error = "ok", None
        try:
            with serving(self.session):
                stamp_caller(_stamp_of(api), values, self.session)
                try:
                    self._handler.authorize(api, values)
                except hms.MetaException as exc:
                    outcome, error = "refused", exc.message
                    raise forbidden(exc.message or "not allowed") from None
                return plain(self._handler.calls[api](*(values.get(n) for n in names)))
        except Exception as exc:
            if outcome == "ok":  # the error's type, as a Thrift call's audit line has it
                outcome, error = type(exc).__name__, f"{getattr(exc, 'message', exc)}"
            raise
        finally:
            db, table = split_audit_target(values)
            audit_call(method=api, peer=self._peer, ms=(time.perf_counter() - started) * 1000,
                       outcome=outcome, user=self.session.authenticated_user, db=db,
                       table=table, error=error, extras={"via": "rest"})  # fmt: skip


#: Arguments naming a database, by call (beside ``dbname``/``db_name`` of any call).
_DATABASE_ARGUMENTS = {"get_database": "name", "drop_database": "name"}
#: Arguments holding an object of a catalog (a table, a database), and its catalog field.
_OBJECT_ARGUMENTS = {"tbl": "catName", "new_tbl": "catName", "database": "catalogName",
                     "db": "catalogName"}  # fmt: skip


def in_catalog(api: str, values: dict[str, Any], catalog: str) -> dict[str, Any]:
    """``values`` of call ``api`` made in ``catalog``: database names prefixed (``@cat#db``,
    as Hive 3+ clients send them) and the objects made carrying the catalog; unchanged in the
    default catalog."""
    if catalog == DEFAULT_CATALOG:
        return values
    named = {"dbname", "db_name", _DATABASE_ARGUMENTS.get(api, "dbname")}
    for key, value in values.items():
        if key in named and isinstance(value, str):
            values[key] = f"@{catalog}#{value}"
        elif key in _OBJECT_ARGUMENTS and value is not None:
            setattr(value, _OBJECT_ARGUMENTS[key], catalog)
    return values


def plain(result: Any) -> Any:
    """A handler's answer as objects: answers kept as their wire encoding (stored tables,
    partitions, names) decoded, as a Thrift client would see them."""
    decode = getattr(result, "decode", None)
    return decode() if callable(decode) and not isinstance(result, bytes | str) else result


_NAMES: dict[str, tuple[str, ...]] = {}


def argument_names(api: str) -> tuple[str, ...]:
    """The names of ``api``'s arguments in their IDL order."""
    names = _NAMES.get(api)
    if names is None:
        spec = getattr(ThriftHiveMetastore, api + "_args").thrift_spec
        names = _NAMES[api] = tuple(field[1] for _, field in sorted(spec.items()))
    return names


def _stamp_of(api: str) -> Stamp | None:
    """How call ``api`` records its user (its declaration's stamp; None: it records none)."""
    declared = DECLARED.get(api)
    return declared.stamp if declared is not None else None
