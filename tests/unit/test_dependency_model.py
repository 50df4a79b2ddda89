"""The pure rules of dependent tables: properties, prefixes, records, resolution, completeness."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from metastore_server.planner.evaluate import compile_predicate
from metastore_server.planner.grammar import parse_filter
from metastore_server.timeline import TimePartition, UpdatePeriod

from metastore_server.catalog.dependencies import model as dm
from metastore_server.catalog.dependencies.model import (
    CompletenessRule,
    Dependency,
    DependentSpec,
    DropPolicy,
    SchemaChangePolicy,
    TableName,
)

T_KEYS = [("ds", "string"), ("hr", "int")]
T2_KEYS = [("ds", "string"), ("hr", "int"), ("min", "int")]
T_COLUMNS = [("key", "string"), ("value", "string")]
HOURLY_DS_HR = CompletenessRule(UpdatePeriod.HOURLY, ("ds", "hr"))

# --- properties --------------------------------------------------------------------------------


def test_not_dependent_without_properties():
    assert DependentSpec.from_parameters(None) is None
    assert DependentSpec.from_parameters({}) is None
    assert DependentSpec.from_parameters({"transient_lastDdlTime": "1", "comment": "x"}) is None


def test_defaults_are_refuse():
    spec = DependentSpec.from_parameters({dm.BASE_KEY: "Demo.T"})
    assert spec == DependentSpec(TableName("demo", "t"))
    assert spec.on_base_drop is DropPolicy.REFUSE
    assert spec.on_schema_change is SchemaChangePolicy.REFUSE
    assert spec.completeness is None


def test_full_spec_parses_case_insensitively():
    spec = DependentSpec.from_parameters(
        {
            "metastore.dependent.base": " demo.t ",
            "metastore.dependent.on.base.drop": "MARK_INCOMPLETE",
            "metastore.dependent.on.base.schema.change": "Propagate",
            "metastore.dependent.completeness.period": "hourly",
            "metastore.dependent.completeness.columns": "DS, hr",
        }
    )
    assert spec == DependentSpec(
        TableName("demo", "t"),
        DropPolicy.MARK_INCOMPLETE,
        SchemaChangePolicy.PROPAGATE,
        CompletenessRule(UpdatePeriod.HOURLY, ("ds", "hr")),
    )


@given(
    st.sampled_from(DropPolicy),
    st.sampled_from(SchemaChangePolicy),
    st.none() | st.tuples(st.sampled_from(UpdatePeriod), st.sampled_from([("dt",), ("ds", "hr")])),
)
def test_parameters_round_trip(drop, change, rule):
    completeness = None if rule is None else CompletenessRule(*rule)
    spec = DependentSpec(TableName("db", "t_1"), drop, change, completeness)
    params = {dm.BASE_KEY: "db.t_1", dm.ON_BASE_DROP_KEY: drop.value,
              dm.ON_SCHEMA_CHANGE_KEY: change.value}  # fmt: skip
    if completeness is not None:
        params[dm.COMPLETENESS_PERIOD_KEY] = completeness.period.name
        params[dm.COMPLETENESS_COLUMNS_KEY] = ",".join(completeness.columns)
    assert all(key in dm.TABLE_KEYS for key in params)
    assert DependentSpec.from_parameters({**params, "other": "x"}) == spec


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({dm.BASE_KEY: "t"}, "metastore.dependent.base: expected a table as db.table, got 't'"),
        ({dm.BASE_KEY: "db."}, "metastore.dependent.base: expected a table as db.table"),
        ({dm.BASE_KEY: "d-b.t"}, "metastore.dependent.base: invalid database name 'd-b'"),
        ({dm.BASE_KEY: "db.t", dm.ON_BASE_DROP_KEY: "ignore"},
         "metastore.dependent.on.base.drop: 'ignore' is not one of refuse | allow | "
         "mark_incomplete"),
        ({dm.BASE_KEY: "db.t", dm.ON_SCHEMA_CHANGE_KEY: "allow"},
         "metastore.dependent.on.base.schema.change: 'allow' is not one of refuse | propagate"),
        ({dm.BASE_KEY: "db.t", dm.COMPLETENESS_PERIOD_KEY: "HOURLY"},
         "metastore.dependent.completeness.period is set but "
         "metastore.dependent.completeness.columns is not"),
        ({dm.BASE_KEY: "db.t", dm.COMPLETENESS_COLUMNS_KEY: "ds"},
         "metastore.dependent.completeness.columns is set but "
         "metastore.dependent.completeness.period is not"),
        ({dm.BASE_KEY: "db.t", dm.COMPLETENESS_PERIOD_KEY: "HOURS",
          dm.COMPLETENESS_COLUMNS_KEY: "ds"},
         "metastore.dependent.completeness.period: 'HOURS' is not one of SECONDLY"),
        ({dm.BASE_KEY: "db.t", dm.COMPLETENESS_PERIOD_KEY: "DAILY",
          dm.COMPLETENESS_COLUMNS_KEY: "ds,,hr"},
         "metastore.dependent.completeness.columns: empty time column name"),
        ({dm.BASE_KEY: "db.t", dm.COMPLETENESS_PERIOD_KEY: "DAILY",
          dm.COMPLETENESS_COLUMNS_KEY: "ds,DS"},
         "metastore.dependent.completeness.columns: repeated time column"),
        ({dm.BASE_KEY: "db.t", "metastore.dependent.on.base.dorp": "allow"},
         "unknown table property 'metastore.dependent.on.base.dorp'"),
        ({dm.ON_BASE_DROP_KEY: "allow"},
         "metastore.dependent.on.base.drop is set but metastore.dependent.base"),
    ],
)  # fmt: skip
def test_bad_properties(params, message):
    with pytest.raises(ValueError, match="^" + message.replace("|", r"\|")):
        DependentSpec.from_parameters(params)


# --- prefix and schema -------------------------------------------------------------------------


@pytest.mark.parametrize("keys", [[("ds", "string")], [("DS", "STRING"), ("Hr", "int")]])
def test_good_prefixes(keys):
    dm.check_prefix(keys, T_KEYS)
    dm.check_prefix(keys, T2_KEYS)


def test_prefix_types_ignore_case_and_blanks():
    dm.check_prefix([("v", "varchar( 10 )")], [("v", "VARCHAR(10)")])


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ([], "a dependent table must be partitioned by a prefix of its base's keys"),
        ([("hr", "int")], "partition key 1 of the dependent table is 'hr' but the base's is 'ds'; "
                          "the keys must be a prefix of the base's \\(ds string, hr int\\)"),
        ([("ds", "string"), ("h", "int")], "partition key 2 of the dependent table is 'h' but "
                                           "the base's is 'hr'"),
        ([("ds", "date")], "partition key 'ds' is date in the dependent table but string in "
                           "the base"),
        ([("ds", "string"), ("hr", "int"), ("min", "int")],
         r"the dependent table has 3 partition keys but its base has only 2 \(ds string, hr int\)"),
    ],
)  # fmt: skip
def test_bad_prefixes(keys, message):
    with pytest.raises(ValueError, match="^" + message):
        dm.check_prefix(keys, T_KEYS)


def test_prefix_of_unpartitioned_base():
    with pytest.raises(ValueError, match=r"base has only 0 \(none\)"):
        dm.check_prefix([("ds", "string")], [])


def test_check_columns():
    dm.check_columns([], T_COLUMNS)
    dm.check_columns([("KEY", "STRING"), ("value", "string")], T_COLUMNS)
    with pytest.raises(ValueError, match="^column 2 of the dependent table is 'value int' but "
                                         "the base has 'value string'"):  # fmt: skip
        dm.check_columns([("key", "string"), ("value", "int")], T_COLUMNS)
    with pytest.raises(ValueError, match="declares 3 columns but its base has 2"):
        dm.check_columns([*T_COLUMNS, ("hr", "int")], T_COLUMNS)
    with pytest.raises(ValueError, match="declares 1 columns but its base has 2"):
        dm.check_columns(T_COLUMNS[:1], T_COLUMNS)


def test_check_completeness_rule():
    dm.check_completeness_rule(HOURLY_DS_HR, [("ds", "string")], T_KEYS)
    dm.check_completeness_rule(HOURLY_DS_HR, T_KEYS, T_KEYS)
    with pytest.raises(ValueError, match="'dt' is not a partition key of the base"):
        dm.check_completeness_rule(CompletenessRule(UpdatePeriod.HOURLY, ("dt",)),
                                   [("ds", "string")], T_KEYS)  # fmt: skip
    region = [("region", "string"), ("ds", "string"), ("hr", "int")]
    with pytest.raises(ValueError, match="must include the first time column 'ds'"):
        dm.check_completeness_rule(HOURLY_DS_HR, [("region", "string")], region)


# --- records -----------------------------------------------------------------------------------


def test_record_text():
    dep = Dependency("demo", "t", (("DS", "2024-01-01"),))
    assert dep.spec == (("ds", "2024-01-01"),)
    assert dep.to_text() == "demo.t@ds=2024-01-01"
    assert Dependency.parse("demo.t@ds=2024-01-01") == dep
    odd = Dependency("demo", "t", (("ds", "a/b=c%d"), ("hr", "1")))
    assert odd.to_text() == "demo.t@ds=a%2Fb%3Dc%25d/hr=1"
    assert Dependency.parse(odd.to_text()) == odd


@pytest.mark.parametrize(
    "text", ["demo.t", "t@ds=1", "demo.t@", "demo.t@ds", "demo.t@ds=", "demo.t@=1",
             "demo.t@ds=1/ds=2", "demo.t@ds=1//hr=2", "demo.t@ds=a=b"],
)  # fmt: skip
def test_bad_records(text):
    with pytest.raises(ValueError):
        Dependency.parse(text)


_VALUES = st.text(min_size=1, max_size=12).filter(lambda v: "\x00" not in v)
_NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)


@given(
    _NAMES, _NAMES,
    st.lists(st.tuples(_NAMES, _VALUES), min_size=1, max_size=4, unique_by=lambda kv: kv[0]),
)  # fmt: skip
def test_record_round_trip(db, table, spec):
    dep = Dependency(db, table, tuple(spec))
    assert Dependency.parse(dep.to_text()) == dep


def test_dependency_for():
    base = TableName("demo", "t2")
    assert dm.dependency_for(["11"], [("ds", "string")], base) == Dependency(
        "demo", "t2", (("ds", "11"),)
    )
    assert dm.dependency_for(["1", "2"], ["DS", "hr"], base).spec == (("ds", "1"), ("hr", "2"))
    with pytest.raises(ValueError, match="1 partition values for 2 partition keys"):
        dm.dependency_for(["1"], T_KEYS, base)


# --- resolution --------------------------------------------------------------------------------


def test_matches():
    dep = Dependency("demo", "t", (("ds", "1"),))
    assert dm.matches(dep, ["1", "5"], T_KEYS)
    assert dm.matches(dep, ["1", "5", "7"], T2_KEYS)
    assert not dm.matches(dep, ["11", "5"], T_KEYS)
    by_hour = Dependency("demo", "t", (("ds", "1"), ("hr", "05")))
    assert dm.matches(by_hour, ["1", "5"], T_KEYS)  # int keys compare as numbers
    assert not dm.matches(by_hour, ["1", "6"], T_KEYS)
    assert not dm.matches(dep, ["1"], [("day", "string")])  # the key is gone


def test_filter_strings():
    assert dm.filter_for(Dependency("demo", "t", (("ds", "2024-01-01"),))) == 'ds = "2024-01-01"'
    two = Dependency("demo", "t", (("ds", "1"), ("hr", "3")))
    assert dm.filter_for(two) == 'ds = "1" AND hr = "3"'
    assert dm.filter_for(Dependency("d", "t", (("in", 'say "hi"'),))) == "`in` = 'say \"hi\"'"
    with pytest.raises(ValueError, match="cannot be written as a filter literal"):
        dm.filter_for(Dependency("d", "t", (("ds", 'it\'s "x"'),)))


_KEYS = [("ds", "string"), ("hr", "int"), ("d", "date")]
_RAW = st.sampled_from(
    ["1", "01", "2", "x", "2024-01-01", "2024-1-1", "__HIVE_DEFAULT_PARTITION__"]
)


@given(st.lists(st.tuples(st.integers(0, 2), _RAW), min_size=1, max_size=3,
                unique_by=lambda kv: kv[0]),
       st.tuples(_RAW, _RAW, _RAW))  # fmt: skip
def test_filter_and_matches_agree(spec, values):
    dep = Dependency("d", "t", tuple((_KEYS[i][0], v) for i, v in spec))
    predicate = compile_predicate(parse_filter(dm.filter_for(dep)), _KEYS)
    assert predicate(list(values)) == dm.matches(dep, list(values), _KEYS)


# --- completeness ------------------------------------------------------------------------------


def _hours(day: str, hours) -> list[TimePartition]:
    return [TimePartition.parse(UpdatePeriod.HOURLY, f"{day}-{h:02d}") for h in hours]


def test_time_partition_of():
    assert (
        dm.time_partition_of(HOURLY_DS_HR, ["2024-01-01", "3"], T_KEYS)
        == _hours("2024-01-01", [3])[0]
    )
    assert dm.time_partition_of(HOURLY_DS_HR, ["2024-01-01", "23"], T_KEYS).name == "2024-01-01-23"
    assert dm.time_partition_of(HOURLY_DS_HR, ["2024-01-01", "24"], T_KEYS) is None
    assert dm.time_partition_of(HOURLY_DS_HR, ["1", "1"], T_KEYS) is None
    lens = CompletenessRule(UpdatePeriod.HOURLY, ("dt",))
    assert dm.time_partition_of(lens, ["2024-01-01-03"], [("dt", "string")]).name == "2024-01-01-03"


def test_complete_day():
    dep = Dependency("demo", "t", (("ds", "2024-01-01"),))
    result = dm.completeness(HOURLY_DS_HR, dep, _hours("2024-01-01", range(24)))
    assert result.complete
    assert result.window == TimePartition.parse(UpdatePeriod.DAILY, "2024-01-01")
    assert len(result.expected) == 24
    assert result.expected[0].start == datetime(2024, 1, 1, 0)
    assert result.missing == ()


def test_missing_hours_listed():
    dep = Dependency("demo", "t", (("ds", "2024-01-01"),))
    present = [*_hours("2024-01-01", [h for h in range(24) if h not in (0, 7, 23)]),
               *_hours("2024-01-02", [0])]  # fmt: skip
    result = dm.completeness(HOURLY_DS_HR, dep, present)
    assert not result.complete
    assert [p.name for p in result.missing] == ["2024-01-01-00", "2024-01-01-07", "2024-01-01-23"]


def test_completeness_from_base_partitions():
    dep = dm.dependency_for(["2024-03-10"], [("ds", "string")], TableName("demo", "t"))
    base = [["2024-03-10", str(h)] for h in range(24)] + [["2024-03-11", "0"], ["2024-03-10", "x"]]
    present = [dm.time_partition_of(HOURLY_DS_HR, values, T_KEYS) for values in base]
    assert dm.completeness(HOURLY_DS_HR, dep, [p for p in present if p]).complete


def test_minutely_by_hour_and_day():
    rule = CompletenessRule(UpdatePeriod.MINUTELY, ("ds", "hr", "min"))
    hour = Dependency("demo", "t2", (("ds", "2024-01-11"), ("hr", "5")))
    assert dm.window_of(rule, hour).name == "2024-01-11-05"
    assert len(dm.expected_partitions(rule, hour)) == 60
    day = Dependency("demo", "t2", (("ds", "2024-01-11"),))
    assert len(dm.expected_partitions(rule, day)) == 24 * 60


def test_fully_fixed_and_coarser_windows():
    hour = Dependency("demo", "t", (("ds", "2024-01-01"), ("hr", "3")))
    assert [p.name for p in dm.expected_partitions(HOURLY_DS_HR, hour)] == ["2024-01-01-03"]
    monthly_days = CompletenessRule(UpdatePeriod.DAILY, ("month", "day"))
    month = Dependency("demo", "t", (("month", "2024-02"),))
    assert len(dm.expected_partitions(monthly_days, month)) == 29


def test_completeness_errors():
    with pytest.raises(ValueError, match="fixes no leading time column"):
        dm.window_of(HOURLY_DS_HR, Dependency("demo", "t", (("region", "us"),)))
    with pytest.raises(ValueError, match="'1' does not name a HOURLY partition or a coarser one"):
        dm.window_of(HOURLY_DS_HR, Dependency("demo", "t", (("ds", "1"),)))


@given(_VALUES)
def test_filter_selects_exactly_the_value(value):
    dep = Dependency("d", "t", (("ds", value),))
    try:
        text = dm.filter_for(dep)
    except ValueError:
        return  # not writable in the dialect: the server resolves with matches()
    predicate = compile_predicate(parse_filter(text), [("ds", "string")])
    assert predicate([value])
    assert not predicate([value + "x"])
