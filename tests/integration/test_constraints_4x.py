"""HMS 4's constraints beyond keys: unique, not null, default and check constraints, added
with a table or after it, listed by kind and all at once, dropped by name and with the table."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_table

DB = "ck4"
COLUMNS = [("id", "bigint"), ("email", "string"), ("qty", "int")]


def _by_kind(client: object, table: str) -> hms.SQLAllTableConstraints:
    request = hms.AllTableConstraintsRequest(dbName=DB, tblName=table, catName="hive")
    return client.get_all_table_constraints(request).allTableConstraints  # type: ignore[attr-defined]


def _request(kind: type, table: str) -> object:
    return kind(catName="hive", db_name=DB, tbl_name=table)


def test_created_with_the_table_listed_and_dropped(start_server) -> None:
    client = start_server().client()
    create_db(client, DB)
    client.create_table_with_constraints(
        make_table(DB, "Orders", columns=COLUMNS),
        [hms.SQLPrimaryKey(table_db=DB, table_name="orders", column_name="id", key_seq=1,
                           pk_name="pk_orders")],
        [],
        [hms.SQLUniqueConstraint(table_db=DB, table_name="orders", column_name="EMAIL",
                                 key_seq=1, uk_name="uk_email")],
        [hms.SQLNotNullConstraint(table_db=DB, table_name="orders", column_name="email",
                                  nn_name="nn_email")],
        [hms.SQLDefaultConstraint(table_db=DB, table_name="orders", column_name="qty",
                                  default_value="1", dc_name="dc_qty")],
        [hms.SQLCheckConstraint(table_db=DB, table_name="orders", column_name="qty",
                                check_expression="qty > 0", dc_name="cc_qty")],
    )  # fmt: skip
    unique = client.get_unique_constraints(_request(hms.UniqueConstraintsRequest, "orders"))
    assert [(u.column_name, u.uk_name) for u in unique.uniqueConstraints] == [("email", "uk_email")]
    not_null = client.get_not_null_constraints(_request(hms.NotNullConstraintsRequest, "orders"))
    assert [n.nn_name for n in not_null.notNullConstraints] == ["nn_email"]
    defaults = client.get_default_constraints(_request(hms.DefaultConstraintsRequest, "orders"))
    assert [(d.column_name, d.default_value) for d in defaults.defaultConstraints] == [("qty", "1")]
    checks = client.get_check_constraints(_request(hms.CheckConstraintsRequest, "orders"))
    assert [c.check_expression for c in checks.checkConstraints] == ["qty > 0"]
    every = _by_kind(client, "orders")
    assert [k.pk_name for k in every.primaryKeys] == ["pk_orders"]
    assert every.foreignKeys == []
    assert len(every.uniqueConstraints) == len(every.notNullConstraints) == 1
    assert len(every.defaultConstraints) == len(every.checkConstraints) == 1
    client.drop_constraint(
        hms.DropConstraintRequest(dbname=DB, tablename="orders", constraintname="cc_qty")
    )
    assert _by_kind(client, "orders").checkConstraints == []
    client.drop_table(DB, "orders", True)
    client.create_table(make_table(DB, "orders", columns=COLUMNS))
    again = _by_kind(client, "orders")
    assert again.uniqueConstraints == [] and again.notNullConstraints == []
    assert again.defaultConstraints == [] and again.primaryKeys == []


def test_added_after_the_table(start_server) -> None:
    client = start_server().client()
    create_db(client, DB)
    client.create_table(make_table(DB, "t", columns=COLUMNS))
    client.add_unique_constraint(hms.AddUniqueConstraintRequest(uniqueConstraintCols=[
        hms.SQLUniqueConstraint(table_db=DB, table_name="t", column_name=c, key_seq=i + 1,
                                uk_name="uk_two")
        for i, c in enumerate(["id", "email"])
    ]))  # fmt: skip
    client.add_not_null_constraint(hms.AddNotNullConstraintRequest(notNullConstraintCols=[
        hms.SQLNotNullConstraint(table_db=DB, table_name="t", column_name=c) for c in ("id", "qty")
    ]))  # fmt: skip
    client.add_default_constraint(hms.AddDefaultConstraintRequest(defaultConstraintCols=[
        hms.SQLDefaultConstraint(table_db=DB, table_name="t", column_name="email",
                                 default_value="'x'", dc_name="dc_e")
    ]))  # fmt: skip
    client.add_check_constraint(hms.AddCheckConstraintRequest(checkConstraintCols=[
        hms.SQLCheckConstraint(table_db=DB, table_name="t", column_name="qty",
                               check_expression="qty < 9", dc_name="cc_q")
    ]))  # fmt: skip
    every = _by_kind(client, "t")
    assert [(u.column_name, u.key_seq) for u in every.uniqueConstraints] == [
        ("id", 1), ("email", 2)
    ]  # fmt: skip
    assert sorted(n.column_name for n in every.notNullConstraints) == ["id", "qty"]
    assert len({n.nn_name for n in every.notNullConstraints}) == 2  # a name each, generated
    assert [d.dc_name for d in every.defaultConstraints] == ["dc_e"]
    assert [c.dc_name for c in every.checkConstraints] == ["cc_q"]
    with pytest.raises(hms.MetaException, match="Constraint name already exists: dc_e"):
        client.add_check_constraint(hms.AddCheckConstraintRequest(checkConstraintCols=[
            hms.SQLCheckConstraint(table_db=DB, table_name="t", column_name="qty",
                                   check_expression="qty < 5", dc_name="dc_e")
        ]))  # fmt: skip
    with pytest.raises(hms.MetaException, match="column not found: nope"):
        client.add_not_null_constraint(hms.AddNotNullConstraintRequest(notNullConstraintCols=[
            hms.SQLNotNullConstraint(table_db=DB, table_name="t", column_name="nope")
        ]))  # fmt: skip
    missing = client.get_unique_constraints(_request(hms.UniqueConstraintsRequest, "none"))
    assert missing.uniqueConstraints == []


def test_a_refused_constraint_leaves_no_table(start_server) -> None:
    client = start_server().client()
    create_db(client, DB)
    with pytest.raises(hms.InvalidObjectException):
        client.create_table_with_constraints(
            make_table(DB, "r", columns=COLUMNS), [], [], [],
            [hms.SQLNotNullConstraint(table_db=DB, table_name="r", column_name="nope")],
            [], [],
        )  # fmt: skip
    assert client.get_all_tables(DB) == []


def test_a_foreign_key_may_reference_a_unique_constraint(start_server) -> None:
    client = start_server().client()
    create_db(client, DB)
    client.create_table_with_constraints(
        make_table(DB, "users", columns=COLUMNS), [], [],
        [hms.SQLUniqueConstraint(table_db=DB, table_name="users", column_name="email",
                                 key_seq=1, uk_name="uk_mail")],
        [], [], [],
    )  # fmt: skip
    client.create_table(make_table(DB, "mails", columns=[("to_email", "string")]))

    def fk(column: str) -> hms.SQLForeignKey:
        return hms.SQLForeignKey(pktable_db=DB, pktable_name="users", pkcolumn_name=column,
                                 fktable_db=DB, fktable_name="mails", fkcolumn_name="to_email",
                                 key_seq=1, fk_name="fk_mail")  # fmt: skip

    with pytest.raises(hms.MetaException, match="not in its primary key or a unique"):
        client.add_foreign_key(hms.AddForeignKeyRequest(foreignKeyCols=[fk("qty")]))
    client.add_foreign_key(hms.AddForeignKeyRequest(foreignKeyCols=[fk("email")]))
    keys = client.get_foreign_keys(hms.ForeignKeysRequest(foreign_db_name=DB,
                                                          foreign_tbl_name="mails"))  # fmt: skip
    assert [(k.fk_name, k.pk_name) for k in keys.foreignKeys] == [("fk_mail", "uk_mail")]
