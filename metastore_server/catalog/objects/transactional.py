"""HMS's rules for transactional tables' properties on create and alter (HMS 3/4's
transactional validation listener, run for every table of the default catalog).

A table is transactional when its parameter ``transactional`` is ``true``; its
``transactional_properties`` say which kind: ``default`` (full ACID: ORC-like formats only,
not sorted) or ``insert_only`` (any format). These are pure functions: given the new
definition (and the stored one on alter) they return the parameters to store, or raise
HMS's MetaException with HMS's words. See ``docs/hms-api.md#transactional-tables``.
"""

from __future__ import annotations

from metastore_server.thrift_api import hms

#: Parameter keys (HMS matches them in any case and stores them in lower case).
TRANSACTIONAL = "transactional"
TRANSACTIONAL_PROPERTIES = "transactional_properties"
#: The two kinds of transactional table HMS knows.
DEFAULT = "default"
INSERT_ONLY = "insert_only"
KINDS = (DEFAULT, INSERT_ONLY)

#: Input and output formats that support full ACID (HMS: those implementing Hive's ACID
#: input/output format interfaces; Hive ships ORC's).
ACID_INPUT_FORMATS = frozenset({"org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"})
ACID_OUTPUT_FORMATS = frozenset({"org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"})

EXTERNAL_TABLE = "EXTERNAL_TABLE"
MANAGED_TABLE = "MANAGED_TABLE"


def qualified_name(table: hms.Table) -> str:
    """``db.table`` as HMS names a table in these messages."""
    return f"{table.dbName}.{table.tableName}"


def _find(params: dict[str, str], key: str) -> tuple[str | None, str | None]:
    """The spelling of ``key`` found in ``params`` in any case (the last one) and its value."""
    found: tuple[str | None, str | None] = (None, None)
    for name, value in params.items():
        if name.lower() == key:
            found = (name, value)
    return found


def _is(value: str | None, expected: str) -> bool:
    return value is not None and value.lower() == expected


def is_transactional(params: dict[str, str] | None) -> bool:
    """Whether stored parameters make a table transactional (``transactional`` = true)."""
    return _is((params or {}).get(TRANSACTIONAL), "true")


def is_insert_only(params: dict[str, str] | None) -> bool:
    """Whether stored parameters say insert-only (whether or not transactional)."""
    return _is((params or {}).get(TRANSACTIONAL_PROPERTIES), INSERT_ONLY)


def is_full_acid(params: dict[str, str] | None) -> bool:
    """Whether stored parameters make a full ACID table (transactional, kind ``default``)."""
    return is_transactional(params) and _is((params or {}).get(TRANSACTIONAL_PROPERTIES), DEFAULT)


def conforms_to_acid(table: hms.Table) -> bool:
    """Whether the table's input and output formats support full ACID."""
    sd = table.sd
    if sd is None:
        return False
    return sd.inputFormat in ACID_INPUT_FORMATS and sd.outputFormat in ACID_OUTPUT_FORMATS


def not_acid_format(table: hms.Table) -> hms.MetaException:
    """HMS's refusal of a full ACID table whose formats do not support it."""
    return hms.MetaException(
        message="The table must be stored using an ACID compliant format (such as ORC): "
        + qualified_name(table)
    )


def external_refused(table: hms.Table) -> hms.MetaException:
    """HMS's refusal of a transactional external table."""
    return hms.MetaException(
        message=f"{qualified_name(table)} cannot be declared transactional because it's an "
        "external table"
    )


def _normalize_kind(table: hms.Table, params: dict[str, str]) -> None:
    """Store ``transactional_properties`` under its lower-case key with a lower-case value,
    refusing a kind HMS does not know (MetaException, HMS's words)."""
    key, value = _find(params, TRANSACTIONAL_PROPERTIES)
    if key is None:
        return
    del params[key]
    kind = (value or "").lower()
    if kind not in KINDS:
        raise hms.MetaException(
            message=f"Invalid transactional properties specified for {qualified_name(table)} "
            f"with the error unknown value {kind} for transactional_properties"
        )
    params[TRANSACTIONAL_PROPERTIES] = kind


def _refuse_sorted(table: hms.Table, params: dict[str, str]) -> None:
    """HMS's refusal of a full ACID table with sort columns."""
    if is_full_acid(params) and table.sd is not None and table.sd.sortCols:
        raise hms.MetaException(
            message=f"Table {qualified_name(table)} cannot support full ACID functionality "
            "since it is sorted."
        )


def on_create(table: hms.Table) -> dict[str, str] | None:
    """The parameters to store for a table being created, HMS's way.

    ``transactional`` (any case) is dropped when ``false`` (absent means the same) and stored
    as ``transactional`` = ``true`` when true; any other value is refused. A transactional
    table gets ``transactional_properties`` = ``default`` unless it names a kind; the kind
    must be ``default`` or ``insert_only``. Full ACID needs ACID formats and no sort columns;
    an ``EXTERNAL`` = TRUE table cannot be transactional. Parameters are returned as given
    when ``transactional`` is absent (no table is made transactional implicitly: HMS does so
    only with ``metastore.create.as.acid``, off by default).
    """
    if not table.parameters:
        return table.parameters
    params = dict(table.parameters)
    key, transactional = _find(params, TRANSACTIONAL)
    if key is None:
        return params
    del params[key]
    if _is(transactional, "false"):
        return params
    if not _is(transactional, "true"):
        raise hms.MetaException(
            message="'transactional' property of TBLPROPERTIES may only have value 'true': "
            + qualified_name(table)
        )
    _, kind = _find(params, TRANSACTIONAL_PROPERTIES)
    if not _is(kind, INSERT_ONLY) and not conforms_to_acid(table):
        raise not_acid_format(table)
    if _is(params.get("EXTERNAL"), "true"):
        raise external_refused(table)
    params[TRANSACTIONAL] = "true"
    if kind is None:
        params[TRANSACTIONAL_PROPERTIES] = DEFAULT
    _normalize_kind(table, params)
    _refuse_sorted(table, params)
    return params


def on_alter(table: hms.Table, old: hms.Table) -> dict[str, str] | None:
    """The parameters to store for ``old`` altered to ``table``, HMS's way.

    A transactional table stays transactional (unless insert-only) and keeps its kind (an
    insert-only one may change it); a table becoming transactional is checked as on create
    (formats for full ACID, not external) and gets kind ``default`` unless it names one; a
    managed transactional table cannot become external. ``transactional`` = false counts as
    absent and is dropped. Nothing is checked when the new table has no parameters.
    """
    if not table.parameters:
        return table.parameters
    params = dict(table.parameters)
    key, value = _find(params, TRANSACTIONAL)
    if key is not None:
        del params[key]
    if _is(value, "false"):
        value = None
    _, old_value = _find(old.parameters or {}, TRANSACTIONAL)
    _, old_kind = _find(old.parameters or {}, TRANSACTIONAL_PROPERTIES)
    new_type = table.tableType or old.tableType
    if value is not None:
        if old.tableType == MANAGED_TABLE and new_type == EXTERNAL_TABLE:
            raise hms.MetaException(
                message=f"{qualified_name(table)} cannot be converted to external table as "
                "it is transactional table."
            )
        params[TRANSACTIONAL] = value
    valid = _becomes_transactional(table, params, value, old_value, new_type)
    if (old_value is None and value is None) or _same(old_value, value):
        valid = True  # unchanged (or never set)
    old_insert_only = is_insert_only(old.parameters)
    if not valid and not old_insert_only:
        raise hms.MetaException(
            message="TBLPROPERTIES with 'transactional'='true' cannot be unset: "
            + qualified_name(table)
        )
    _check_kind_change(table, params, old_value, old_kind, old_insert_only)
    _refuse_sorted(table, params)
    return params


def _same(old: str | None, new: str | None) -> bool:
    return old is not None and new is not None and old.lower() == new.lower()


def _becomes_transactional(
    table: hms.Table,
    params: dict[str, str],
    value: str | None,
    old: str | None,
    new_type: str | None,
) -> bool:
    """Check a table turning transactional on alter (kind ``default`` when it names none:
    formats for full ACID, not external); whether it does."""
    if not _is(value, "true") or _is(old, "true"):
        return False
    key, kind = _find(params, TRANSACTIONAL_PROPERTIES)
    if key is None:
        params[TRANSACTIONAL_PROPERTIES] = kind = DEFAULT
    if not _is(kind, INSERT_ONLY) and not conforms_to_acid(table):
        raise not_acid_format(table)
    if new_type == EXTERNAL_TABLE:
        raise external_refused(table)
    return True


def _check_kind_change(
    table: hms.Table,
    params: dict[str, str],
    old_value: str | None,
    old_kind: str | None,
    old_insert_only: bool,
) -> None:
    """A kind given on alter: any known one when the table had no ``transactional`` before,
    else the old one (an insert-only table may change it)."""
    key, kind = _find(params, TRANSACTIONAL_PROPERTIES)
    if key is None:
        return
    if old_value is None:
        _normalize_kind(table, params)
    elif not _same(old_kind, kind) and not old_insert_only:
        raise hms.MetaException(
            message="TBLPROPERTIES with 'transactional_properties' cannot be altered after "
            "the table is created"
        )
