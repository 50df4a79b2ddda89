"""Functions: create, get, list, alter, drop (permanent UDF definitions of a database)."""

from __future__ import annotations

import copy

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.changes import CREATE, DROP, FUNCTION, Change
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.databases import Databases
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, to_bytes


class Functions:
    """Function rows on the store."""

    def __init__(self, ctx: CatalogContext, databases: Databases) -> None:
        self._ctx = ctx
        self._databases = databases

    def find(self, db: str, name: str) -> hms.Function | None:
        """The function, or None."""
        row = self._ctx.store.get(layout.FUNCTIONS, layout.function_key(db, name))
        return None if row is None else from_bytes(hms.Function, row[layout.OBJECT])

    def get(self, db: str, name: str) -> hms.Function:
        """The function; NoSuchObjectException when missing."""
        function = self.find(db, name)
        if function is None:
            raise hms.NoSuchObjectException(message=f"Function {db}.{name} does not exist")
        return function

    def names(self, db: str, pattern: str | None = None) -> list[str]:
        """Function names of a database matching an HMS pattern, sorted."""
        matcher = names.NamePattern(pattern)
        start, stop = layout.children_range(db)
        found = [
            layout.name_from_child_key(key)
            for key, _ in self._ctx.store.scan(layout.FUNCTIONS, start, stop)
        ]
        return sorted(name for name in found if matcher.matches(name))

    def all(self) -> list[hms.Function]:
        """Every function of every database."""
        return [
            from_bytes(hms.Function, row[layout.OBJECT])
            for _, row in self._ctx.store.scan(layout.FUNCTIONS)
        ]

    def create(self, function: hms.Function) -> None:
        """Create a function in an existing database."""
        if function is None or not function.functionName:
            raise hms.InvalidObjectException(message="Function name cannot be empty")
        db = names.normalize(function.dbName)
        name = names.normalize(function.functionName)
        if not names.is_valid_name(name):
            raise hms.InvalidObjectException(
                message=f"{function.functionName} is not a valid object name"
            )
        if function.className is None:
            raise hms.InvalidObjectException(message="Function class name cannot be null")
        if not function.className:
            raise hms.InvalidObjectException(message="Function class name cannot be empty")
        stored = copy.deepcopy(function)
        stored.dbName, stored.functionName, stored.catName = db, name, None
        stored.createTime = stored.createTime or self._ctx.now()
        with self._ctx.write_lock:
            if self._databases.find(db) is None:
                raise hms.NoSuchObjectException(message=db)
            key = layout.function_key(db, name)
            created = self._ctx.store.mutate(
                [Put(layout.FUNCTIONS, key, {layout.OBJECT: to_bytes(stored)})],
                Condition(layout.FUNCTIONS, key, layout.OBJECT, None),
            )
            if created:
                self._ctx.changes.announce(
                    Change(FUNCTION, CREATE, after=stored, when=self._ctx.now())
                )
        if not created:
            raise hms.AlreadyExistsException(message=f"Function {name} already exists")

    def alter(self, db: str, name: str, new_function: hms.Function) -> None:
        """Replace a function's definition (it may not be renamed to an existing name)."""
        if new_function is None:
            raise hms.InvalidOperationException(message="New function cannot be null")
        with self._ctx.write_lock:
            current = self.find(db, name)
            if current is None:
                raise hms.MetaException(message=f"function {name} doesn't exist")
            stored = copy.deepcopy(new_function)
            stored.dbName = names.normalize(stored.dbName) or db
            stored.functionName = names.normalize(stored.functionName) or name
            if not names.is_valid_name(stored.functionName):
                raise hms.InvalidOperationException(
                    message=f"{new_function.functionName} is not a valid object name"
                )
            stored.catName = None
            stored.createTime = current.createTime
            ops: list[Put | Delete] = []
            new_key = layout.function_key(stored.dbName, stored.functionName)
            condition = None
            if (stored.dbName, stored.functionName) != (db, name):
                ops.append(Delete(layout.FUNCTIONS, layout.function_key(db, name)))
                condition = Condition(layout.FUNCTIONS, new_key, layout.OBJECT, None)
            ops.append(Put(layout.FUNCTIONS, new_key, {layout.OBJECT: to_bytes(stored)}))
            if not self._ctx.store.mutate(ops, condition):
                raise hms.MetaException(
                    message=f"Function {stored.dbName}.{stored.functionName} already exists"
                )

    def drop(self, db: str, name: str) -> None:
        """Drop a function; NoSuchObjectException when missing."""
        with self._ctx.write_lock:
            key = layout.function_key(db, name)
            row = self._ctx.store.get(layout.FUNCTIONS, key)
            missing = hms.NoSuchObjectException(message=f"Function {name} does not exist")
            if row is None:
                raise missing
            function = from_bytes(hms.Function, row[layout.OBJECT])
            still = Condition(layout.FUNCTIONS, key, layout.OBJECT, row[layout.OBJECT])
            if not self._ctx.store.mutate([Delete(layout.FUNCTIONS, key)], still):
                raise missing  # another server process dropped it meanwhile
            self._ctx.changes.announce(
                Change(FUNCTION, DROP, before=function, when=self._ctx.now())
            )
