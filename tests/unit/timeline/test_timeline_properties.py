"""The Lens property codec: chunked lists, key names, class names, and fixtures written by hand
in Lens's format (hms-api-facts section 4.3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.timeline import properties as codec
from metastore_server.timeline.partitions import TimePartition
from metastore_server.timeline.periods import UpdatePeriod
from metastore_server.timeline.properties import (
    MAX_PARAM_LENGTH,
    PREFIX,
    PRESENT_KEY,
    class_key,
    decode_list,
    encode_list,
    timeline_from_table_properties,
    timeline_key,
    timeline_to_table_properties,
    timelines_present,
)
from metastore_server.timeline.timelines import (
    EndsAndHolesTimeline,
    RangesTimeline,
    StoreAllTimeline,
)

P = UpdatePeriod
LENS = "org.apache.lens.cube.metadata.timeline."


def names(period: UpdatePeriod, *texts: str) -> list[TimePartition]:
    return [TimePartition.parse(period, t) for t in texts]


# --- constants and keys --------------------------------------------------------------------------


def test_constants() -> None:
    assert PREFIX == "cube.storagetable.partition.timeline.cache."
    assert PRESENT_KEY == "cube.storagetable.partition.timeline.cache.present"
    assert codec.TIME_PARTCOLS_KEY == "cube.storagetable.time.partcols"
    assert codec.UPDATE_PERIOD_KEY == "cube.storagetable.partition.update.period"
    assert MAX_PARAM_LENGTH == 3999


def test_keys() -> None:
    assert (
        timeline_key(P.HOURLY, "dt", "holes.size")
        == "cube.storagetable.partition.timeline.cache.HOURLY.dt.holes.size"
    )
    assert (
        class_key(P.DAILY, "ds")
        == "cube.storagetable.partition.timeline.cache.DAILY.ds.storage.class"
    )


def test_class_names() -> None:
    assert codec.lens_class_name(EndsAndHolesTimeline) == LENS + "EndsAndHolesPartitionTimeline"
    assert codec.lens_class_name(StoreAllTimeline) == LENS + "StoreAllPartitionTimeline"
    assert codec.lens_class_name(RangesTimeline) == LENS + "RangesPartitionTimeline"
    for kind in (EndsAndHolesTimeline, StoreAllTimeline, RangesTimeline):
        assert codec.timeline_type(codec.lens_class_name(kind)) is kind
    assert codec.timeline_type(None) is EndsAndHolesTimeline
    assert codec.timeline_type("") is EndsAndHolesTimeline
    assert codec.timeline_type("com.example.MyTimeline") is EndsAndHolesTimeline
    assert codec.timeline_type("RangesPartitionTimeline") is EndsAndHolesTimeline


@pytest.mark.parametrize(
    ("value", "present"),
    [("true", True), ("TRUE", True), ("True", True), ("false", False), ("", False),
     ("yes", False), (" true", False), (None, False)],
)  # fmt: skip
def test_timelines_present(value, present) -> None:
    props = {"other": "x"} if value is None else {PRESENT_KEY: value}
    assert timelines_present(props) is present


# --- chunked lists -------------------------------------------------------------------------------


def test_encode_small_lists() -> None:
    assert encode_list("k", []) == {"k.size": "0"}
    assert encode_list("k", ["a"]) == {"k.size": "1", "k0": "a"}
    assert encode_list("k", iter(["a", "b", "c"])) == {"k.size": "1", "k0": "a,b,c"}


def test_chunk_closes_when_an_item_would_reach_the_limit() -> None:
    head = "a" * 3000  # the chunk holds "aaa…a," = 3001 characters before the next item
    reaches = "b" * 998  # 3001 + 998 == 3999: closes the chunk first
    stays = "c" * 997  # 3001 + 997 == 3998: still fits
    assert encode_list("k", [head, reaches]) == {"k.size": "2", "k0": head + ",", "k1": reaches}
    assert encode_list("k", [head, stays]) == {"k.size": "1", "k0": head + "," + stays}
    # The comma after the last item of a chunk may take it to exactly 3999 characters.
    props = encode_list("k", [head, stays, "d"])
    assert props == {"k.size": "2", "k0": head + "," + stays + ",", "k1": "d"}
    assert len(props["k0"]) == MAX_PARAM_LENGTH
    for items in ([head, reaches], [head, stays], [head, stays, "d"]):
        assert decode_list(encode_list("k", items), "k") == items


def test_dates_fill_chunks_like_lens() -> None:
    # 10-character names take 11 with their comma: 363 fit (3993 characters), the 364th would
    # bring the chunk to 3993 + 10 = 4003 >= 3999.
    days = [p.name for p in _days(800)]
    props = encode_list("holes", days)
    assert props["holes.size"] == "3"
    assert props["holes0"].count(",") == 363 and len(props["holes0"]) == 3993
    assert props["holes1"].count(",") == 363
    assert not props["holes2"].endswith(",") and props["holes2"].count(",") == 800 - 727
    assert decode_list(props, "holes") == days


def _days(n: int) -> list[TimePartition]:
    first = TimePartition.parse(P.DAILY, "2000-01-01")
    return [first.offset(i) for i in range(n)]


def test_an_item_longer_than_a_chunk_gets_its_own() -> None:
    long = "x" * 5000
    assert encode_list("k", [long]) == {"k.size": "1", "k0": long}
    assert encode_list("k", ["a", long, "b"]) == {
        "k.size": "3",
        "k0": "a,",
        "k1": long + ",",
        "k2": "b",
    }
    assert decode_list(encode_list("k", ["a", long, "b"]), "k") == ["a", long, "b"]
    # Lens writes an empty first chunk in this case; it reads the same.
    assert decode_list({"k.size": "2", "k0": "", "k1": long}, "k") == [long]


def test_decode_variants() -> None:
    assert decode_list({}, "k") == []
    assert decode_list({"k.size": "0"}, "k") == []
    assert decode_list({"k": "a,b"}, "k") == ["a", "b"]  # plain key when .size is missing
    assert decode_list({"k": ""}, "k") == []
    assert decode_list({"k.size": "1", "k0": "a,b", "k": "ignored"}, "k") == ["a", "b"]
    assert decode_list({"k.size": "2", "k0": "a , b,", "k1": " c"}, "k") == ["a", "b", "c"]
    assert decode_list({"k.size": "1", "k0": "a,b,"}, "k") == ["a", "b"]  # as Java's split
    assert decode_list({"k.size": "1", "k0": "a,,b"}, "k") == ["a", "", "b"]
    assert decode_list({"k.size": "1", "k0": "a", "k1": "b"}, "k") == ["a"]  # size rules


@pytest.mark.parametrize(
    "props",
    [
        {"k.size": "2", "k0": "a"},
        {"k.size": "2", "k1": "a"},
        {"k.size": "-1"},
        {"k.size": "one"},
        {"k.size": ""},
        {"k.size": "1.0", "k0": "a"},
    ],
)
def test_decode_rejects(props) -> None:
    with pytest.raises(ValueError):
        decode_list(props, "k")


items = st.lists(
    st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters=","), min_size=1),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(items, st.integers(1, 40))
def test_chunked_lists_round_trip(values, max_length) -> None:
    props = encode_list("key", values, max_length=max_length)
    assert decode_list(props, "key") == values
    size = int(props["key.size"])
    assert set(props) == {"key.size", *(f"key{i}" for i in range(size))}
    chunks = [props[f"key{i}"] for i in range(size)]
    assert "".join(chunks) == ",".join(values)
    for chunk in chunks:
        assert chunk  # no empty chunk
        assert len(chunk) <= max_length or len(chunk.rstrip(",").split(",")) == 1
    for before, after in zip(chunks, chunks[1:], strict=False):
        # a chunk was closed only because the next item would have made it reach the limit
        assert len(before) + len(after.split(",")[0]) >= max_length


# --- table properties ----------------------------------------------------------------------------


def test_timeline_to_table_properties() -> None:
    timeline = EndsAndHolesTimeline("db.fact_storage", P.HOURLY, "dt")
    timeline.add_all(names(P.HOURLY, "2015-01-01-00", "2015-01-01-03"))
    assert timeline_to_table_properties(timeline) == {
        PREFIX + "HOURLY.dt.storage.class": LENS + "EndsAndHolesPartitionTimeline",
        PREFIX + "HOURLY.dt.first": "2015-01-01-00",
        PREFIX + "HOURLY.dt.latest": "2015-01-01-03",
        PREFIX + "HOURLY.dt.holes.size": "1",
        PREFIX + "HOURLY.dt.holes0": "2015-01-01-01,2015-01-01-02",
    }
    ranges = RangesTimeline("db.fact_storage", P.DAILY, "ds")
    assert timeline_to_table_properties(ranges) == {
        PREFIX + "DAILY.ds.storage.class": LENS + "RangesPartitionTimeline",
        PREFIX + "DAILY.ds.ranges.size": "0",
    }


def test_lens_ranges_fixture() -> None:
    table = {
        PREFIX + "DAILY.dt.storage.class": LENS + "RangesPartitionTimeline",
        PREFIX + "DAILY.dt.ranges.size": "1",
        PREFIX + "DAILY.dt.ranges0": "[2015-01-01, 2015-01-05),[2015-01-07, 2015-01-08)",
        PRESENT_KEY: "true",
    }
    timeline = timeline_from_table_properties("fact_storage", P.DAILY, "dt", table)
    assert isinstance(timeline, RangesTimeline)
    assert list(timeline) == names(
        P.DAILY, "2015-01-01", "2015-01-02", "2015-01-03", "2015-01-04", "2015-01-07"
    )
    assert timeline_to_table_properties(timeline) == {
        k: v for k, v in table.items() if k != PRESENT_KEY
    }


def test_lens_ranges_fixture_over_two_chunks() -> None:
    table = {
        PREFIX + "MONTHLY.dt.storage.class": LENS + "RangesPartitionTimeline",
        PREFIX + "MONTHLY.dt.ranges.size": "2",
        PREFIX + "MONTHLY.dt.ranges0": "[2014-11, 2015-01),",
        PREFIX + "MONTHLY.dt.ranges1": "[2015-03, 2015-04)",
    }
    timeline = timeline_from_table_properties("fact_storage", P.MONTHLY, "dt", table)
    assert [p.name for p in timeline] == ["2014-11", "2014-12", "2015-03"]


def test_lens_ends_and_holes_fixture() -> None:
    table = {  # no class key: EndsAndHoles, Lens's default
        PREFIX + "HOURLY.dt.first": "2015-01-01-00",
        PREFIX + "HOURLY.dt.latest": "2015-01-01-05",
        PREFIX + "HOURLY.dt.holes.size": "1",
        PREFIX + "HOURLY.dt.holes0": "2015-01-01-02,2015-01-01-03",
        # other timelines of the table are not this one's business
        PREFIX + "DAILY.dt.first": "2015-01-01",
        PREFIX + "HOURLY.et.first": "garbage",
    }
    timeline = timeline_from_table_properties("fact_storage", P.HOURLY, "dt", table)
    assert isinstance(timeline, EndsAndHolesTimeline)
    assert list(timeline) == names(
        P.HOURLY, "2015-01-01-00", "2015-01-01-01", "2015-01-01-04", "2015-01-01-05"
    )
    assert timeline.first().name == "2015-01-01-00" and timeline.latest().name == "2015-01-01-05"


def test_lens_ends_and_holes_fixture_of_older_lens() -> None:
    # Older Lens versions wrote the holes unchunked under the plain key, with ", " between.
    table = {
        PREFIX + "DAILY.dt.storage.class": "some.unknown.Timeline",
        PREFIX + "DAILY.dt.first": "2015-01-01",
        PREFIX + "DAILY.dt.latest": "2015-01-05",
        PREFIX + "DAILY.dt.holes": "2015-01-02, 2015-01-04",
    }
    timeline = timeline_from_table_properties("fact_storage", P.DAILY, "dt", table)
    assert isinstance(timeline, EndsAndHolesTimeline)
    assert [p.name for p in timeline] == ["2015-01-01", "2015-01-03", "2015-01-05"]


def test_lens_empty_ends_and_holes_fixture() -> None:
    table = {
        PREFIX + "DAILY.dt.first": "",
        PREFIX + "DAILY.dt.latest": "",
        PREFIX + "DAILY.dt.holes.size": "0",
    }
    timeline = timeline_from_table_properties("fact_storage", P.DAILY, "dt", table)
    assert timeline.is_empty() and timeline.is_consistent()
    assert timeline_from_table_properties("fact_storage", P.DAILY, "dt", {}).is_empty()


def test_lens_store_all_fixture() -> None:
    table = {
        PREFIX + "WEEKLY.dt.storage.class": LENS + "StoreAllPartitionTimeline",
        PREFIX + "WEEKLY.dt.partitions.size": "2",
        PREFIX + "WEEKLY.dt.partitions0": "2015-W01,",
        PREFIX + "WEEKLY.dt.partitions1": "2015-W03",
    }
    timeline = timeline_from_table_properties("fact_storage", P.WEEKLY, "dt", table)
    assert isinstance(timeline, StoreAllTimeline)
    assert list(timeline) == names(P.WEEKLY, "2015-W01", "2015-W03")
    assert not timeline.exists(TimePartition.parse(P.WEEKLY, "2015-W02"))


def test_malformed_table_properties() -> None:
    table = {
        PREFIX + "DAILY.dt.storage.class": LENS + "RangesPartitionTimeline",
        PREFIX + "DAILY.dt.ranges.size": "2",
        PREFIX + "DAILY.dt.ranges0": "[2015-01-01, 2015-01-05),",
    }
    with pytest.raises(ValueError):
        timeline_from_table_properties("fact_storage", P.DAILY, "dt", table)


def test_new_timeline_follows_the_class_key() -> None:
    table = {class_key(P.DAILY, "dt"): LENS + "StoreAllPartitionTimeline"}
    assert type(codec.new_timeline("t", P.DAILY, "dt", table)) is StoreAllTimeline
    assert type(codec.new_timeline("t", P.HOURLY, "dt", table)) is EndsAndHolesTimeline
