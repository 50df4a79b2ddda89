"""Partition timeline benchmark (docs/benchmarks.md): the cover of a time range, and the three
timelines.

1. The design seed's example: one storage table with
   update periods YEARLY, MONTHLY, DAILY, HOURLY and MINUTELY and no partition, and a query over
   one (non-leap) year. A naive cover asks the metastore whether each partition exists, for every
   unit of every period it reaches (the seed's recursion, both remainders covered): the count is
   computed here by running that recursion with a counting ``partition_exists`` (the seed says
   534,738), and one day of it is run for real over Thrift (``get_partition`` per probe) to
   extrapolate its time. Ours answers from the timelines in memory: ``Cover.lookups`` questions
   to in-memory timelines, timed in process (``timeline.cover_range``), through the catalog with
   a store that counts its reads (warm cache), and over Thrift (``cover_time_range``) against our
   server started here, whose JSON audit line gives the partition rows it read. The same with
   all seven periods YEARLY..MINUTELY (QUARTERLY and WEEKLY too), and with data (DAILY and HOURLY
   partitions for the year, 1% of each missing).
2. Memory and properties size of each implementation (StoreAll, EndsAndHoles, Ranges) holding a
   year of HOURLY partitions with 1% holes (random, seeded): memory retained (tracemalloc), the
   table parameters (``timeline_to_table_properties``: keys, total characters, longest value),
   and the time to build, to encode, to load, to answer ``exists`` for every hour, and to cover
   the year.

It prints figures and never asserts anything; it is not collected by pytest. The server is
started as ``partition_values.py`` starts it (``bench_targets.start_targets``)::

    .venv/bin/python tests/bench/timeline_cover.py
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import log, machine_info  # noqa: E402 - imports bench_path: sets up sys.path
from bench_targets import Target, start_targets  # noqa: E402
from metastore_server.storage import layout  # noqa: E402
from metastore_server.storage.open import open_store  # noqa: E402
from metastore_server.timeline import (  # noqa: E402
    TIME_PARTCOLS_KEY,
    EndsAndHolesTimeline,
    PartitionTimeline,
    RangesTimeline,
    StorageTimelines,
    StoreAllTimeline,
    TimePartition,
    UpdatePeriod,
    class_key,
    cover_range,
    lens_class_name,
    timeline_from_table_properties,
    timeline_to_table_properties,
)
from partition_dataset import DB, hms, parquet_table  # noqa: E402

from metastore_server import __version__ as OUR_VERSION  # noqa: E402
from metastore_server.api import timelines as timeline_api  # noqa: E402
from metastore_server.audit import configure_logging  # noqa: E402
from metastore_server.catalog.data.warehouse import Warehouse  # noqa: E402
from metastore_server.catalog.facade import Catalog  # noqa: E402

Y, M, D, H, MI = (
    UpdatePeriod.YEARLY,
    UpdatePeriod.MONTHLY,
    UpdatePeriod.DAILY,
    UpdatePeriod.HOURLY,
    UpdatePeriod.MINUTELY,
)
SEED_PERIODS = (Y, M, D, H, MI)
ALL_PERIODS = tuple(p for p in sorted(UpdatePeriod, reverse=True) if p >= MI)
SEED_COUNT = 534_738
COLUMN = "dt"
TABLE = "timeline_cover"
IMPLEMENTATIONS: tuple[type[PartitionTimeline], ...] = (
    StoreAllTimeline,
    EndsAndHolesTimeline,
    RangesTimeline,
)


# --------------------------------------------------------------------------- the naive cover


def naive_cover(
    start: datetime,
    end: datetime,
    periods: Sequence[UpdatePeriod],
    exists: Callable[[UpdatePeriod, datetime], int],
) -> Counter[UpdatePeriod]:
    """Metastore calls per period of the seed's naive cover of [start, end).

    The coarsest period with a whole unit inside the span probes each of its units there; a
    missing unit is covered with the finer periods, and so are both remainders. ``exists``
    answers one unit with the number of calls it made (0: present; Lens's partition_exists asks
    each storage table in turn until one has it)."""
    counts: Counter[UpdatePeriod] = Counter()
    levels = sorted(periods, reverse=True)

    def cover(lo: datetime, hi: datetime, level: int) -> None:
        while level < len(levels):
            period = levels[level]
            low, high = period.ceil(lo), period.truncate(hi)
            if low < high:
                break
            level += 1
        else:
            return
        if lo < low:
            cover(lo, low, level + 1)
        unit = low
        while unit < high:
            following = period.add(unit, 1)
            calls = exists(period, unit)
            counts[period] += abs(calls)
            if calls < 0:  # missing: finer periods
                cover(unit, following, level + 1)
            unit = following
        if high < hi:
            cover(high, hi, level + 1)

    cover(start, end, 0)
    return counts


def probe_tables(tables: Sequence[StorageTimelines]) -> Callable[[UpdatePeriod, datetime], int]:
    """``exists`` for ``naive_cover``: one call per table with the period until one has the
    unit; negative when none has it."""

    def exists(period: UpdatePeriod, start: datetime) -> int:
        partition = TimePartition.of(period, start)
        calls = 0
        for table in tables:
            timeline = table.timelines.get(period)
            if timeline is None:
                continue
            calls += 1
            if partition in timeline:
                return calls
        return -max(calls, 1)

    return exists


def empty_table(name: str, periods: Sequence[UpdatePeriod]) -> StorageTimelines:
    """A storage table with an empty EndsAndHoles timeline per period."""
    return StorageTimelines(name, {p: EndsAndHolesTimeline(name, p, COLUMN) for p in periods})


def with_holes(
    kind: type[PartitionTimeline], name: str, period: UpdatePeriod, year: int, rng: random.Random
) -> tuple[PartitionTimeline, list[str], int]:
    """A year of ``period`` partitions with 1% missing at random: (timeline, names, holes)."""
    start, end = datetime(year, 1, 1), datetime(year + 1, 1, 1)
    units = period.units_between(start, end)
    holes = set(rng.sample(range(units), round(units / 100)))
    names = [
        period.format(period.add(start, i)) for i in range(units) if i not in holes
    ]
    timeline = kind(name, period, COLUMN)
    timeline.add_all(TimePartition.parse(period, n) for n in names)
    return timeline, names, len(holes)


# --------------------------------------------------------------------------- timing helpers


def timed(
    call: Callable[[], Any], repeat: int, max_seconds: float = 20.0
) -> tuple[Any, list[float]]:
    """The last answer and the time of each call in ms (one warm-up call first)."""
    answer = call()
    samples = []
    deadline = time.monotonic() + max_seconds
    for _ in range(repeat):
        started = time.perf_counter()
        answer = call()
        samples.append((time.perf_counter() - started) * 1000)
        if time.monotonic() > deadline:
            break
    return answer, samples


def p50(samples: list[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


def ms(value: float) -> str:
    """A time in ms, readably."""
    if value < 0.1:
        return f"{value * 1000:.1f} µs"
    if value < 1000:
        return f"{value:.2f} ms"
    return f"{value / 1000:.1f} s"


def per_period(counts: Counter[UpdatePeriod], periods: Sequence[UpdatePeriod]) -> str:
    return ", ".join(f"{p.name} {counts[p]:,}" for p in sorted(periods, reverse=True))


# --------------------------------------------------------------------------- through the catalog


class CountingStore:
    """A store proxy counting the reads the catalog makes (gets, rows scanned)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.reads: Counter[str] = Counter()

    def get(self, table: str, key: bytes) -> Any:
        self.reads[f"get {table}"] += 1
        return self._store.get(table, key)

    def get_many(self, table: str, keys: Sequence[bytes]) -> Any:
        self.reads[f"get {table}"] += len(keys)
        return self._store.get_many(table, keys)

    def scan(self, table: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
        self.reads[f"scan {table}"] += 1
        for row in self._store.scan(table, *args, **kwargs):
            self.reads[f"row {table}"] += 1
            yield row

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def table_definition(periods: Sequence[UpdatePeriod]) -> Any:
    """The opted-in storage table: key dt, a timeline class for each period (so each timeline
    exists, empty, before any partition is added, as Lens expects)."""
    params = {TIME_PARTCOLS_KEY: COLUMN}
    params.update({class_key(p, COLUMN): lens_class_name(EndsAndHolesTimeline) for p in periods})
    return parquet_table(TABLE, [hms.FieldSchema(name=COLUMN, type="string", comment=None)], params)


def in_catalog(start: str, end: str, repeat: int) -> list[str]:
    """``cover_time_range`` through a catalog on a fresh embedded store counting its reads."""
    with tempfile.TemporaryDirectory(prefix="timeline-bench-") as tmp:
        store = CountingStore(open_store(f"sqlite:///{tmp}/metastore.db"))
        catalog = Catalog(store, Warehouse(Path(tmp) / "warehouse"))  # type: ignore[arg-type]
        try:
            catalog.databases.create(hms.Database(name=DB, description="", parameters={}))
            catalog.tables.create(table_definition(SEED_PERIODS))

            def cover() -> Any:
                return timeline_api.cover_time_range(catalog, DB, [TABLE], COLUMN, start, end)

            cover()  # loads the timelines (rebuilt from the partitions: none) and stores them
            store.reads.clear()
            result = cover()
            warm = dict(store.reads)
            _, samples = timed(cover, repeat)
        finally:
            catalog.close()
    reads = ", ".join(f"{n} {what}" for what, n in sorted(warm.items())) or "none"
    partition_rows = warm.get(f"row {layout.PARTITIONS}", 0)
    return [
        f"ours, through the catalog (timeline_api.cover_time_range, embedded store, warm): "
        f"lookups {result.lookups}, p50 {ms(p50(samples))} (n={len(samples)})",
        f"  store reads of one warm cover: {reads}; partition rows read: {partition_rows} "
        "(the table row's stamp says the timelines in memory are current)",
    ]


# --------------------------------------------------------------------------- over Thrift


def over_thrift(target: Target, start: str, end: str, repeat: int) -> list[str]:
    """Ours (``cover_time_range``) and one day of the naive cover (``get_partition``)."""
    lines = []
    with target.connected() as client:
        try:
            client.get_database(DB)
        except hms.NoSuchObjectException:
            client.create_database(hms.Database(name=DB, description="", parameters={}))
        with contextlib.suppress(hms.NoSuchObjectException):
            client.drop_table(DB, TABLE, True)
        client.create_table(table_definition(SEED_PERIODS))
        request = hms.CoverTimeRangeRequest(
            dbName=DB, tables=[TABLE], column=COLUMN, startTime=start, endTime=end
        )
        client.cover_time_range(request)  # loads the timelines
        if target.audit is not None:
            target.audit.mark()
        result, samples = timed(lambda: client.cover_time_range(request), repeat)
        audit = target.audit.calls("cover_time_range") if target.audit is not None else []
        server = [float(c["ms"]) for c in audit if "ms" in c]
        scanned = sorted({c.get("rows_scanned") for c in audit}, key=str)
        looked = sorted({c.get("lookups") for c in audit}, key=str)
        lines.append(
            f"ours over Thrift (cover_time_range, warm): lookups {result.lookups}, "
            f"{len(result.uncovered)} uncovered range(s); p50 {ms(p50(samples))} at the client, "
            f"{ms(p50(server)) if server else '-'} in the server (n={len(samples)})"
        )
        lines.append(
            f"  audit lines of the timed calls: rows_scanned {scanned} (partition rows read), "
            f"lookups {looked}"
        )
        # One day of the naive cover for real: one get_partition per unit probed.
        day_start = datetime.strptime(start, "%Y-%m-%d")
        day_end = D.add(day_start, 1)
        probes = 0

        def exists(period: UpdatePeriod, unit: datetime) -> int:
            nonlocal probes
            probes += 1
            try:
                client.get_partition(DB, TABLE, [period.format(unit)])
            except hms.NoSuchObjectException:
                return -1
            return 1

        started = time.perf_counter()
        counts = naive_cover(day_start, day_end, SEED_PERIODS, exists)
        seconds = time.perf_counter() - started
    per_call = seconds / max(probes, 1)
    lines.append(
        f"naive over Thrift, one day ({D.format(day_start)}) run for real: "
        f"{sum(counts.values()):,} get_partition calls in {seconds:.2f} s "
        f"({per_call * 1000:.3f} ms per call); the year at that rate: "
        f"~{SEED_COUNT * per_call:,.0f} s"
    )
    return lines


# --------------------------------------------------------------------------- the report


def seed_example(args: argparse.Namespace, targets: list[Target]) -> list[str]:
    year = args.year
    start, end = datetime(year, 1, 1), datetime(year + 1, 1, 1)
    days = (end - start).days
    text_start, text_end = D.format(start), D.format(end)
    lines = [
        "",
        f"== the seed's example: [{text_start}, {text_end}) ({days} days), one storage table, "
        "update periods YEARLY, MONTHLY, DAILY, HOURLY, MINUTELY, no partition ==",
    ]
    table = empty_table(TABLE, SEED_PERIODS)
    log("naive cover (seed's recursion, counting calls) ...")
    counts = naive_cover(start, end, SEED_PERIODS, probe_tables([table]))
    total = sum(counts.values())
    lines.append(
        f"naive cover: {total:,} metastore calls ({per_period(counts, SEED_PERIODS)}); "
        f"the seed says {SEED_COUNT:,}"
    )
    cover, samples = timed(lambda: cover_range([table], start, end), args.repeat)
    gaps = ", ".join("[{}, {})".format(*timeline_api.format_range(*g)) for g in cover.uncovered)
    lines.append(
        f"ours, in process (timeline.cover_range): {cover.lookups} timeline lookups (one per "
        f"empty timeline), {len(cover.parts)} partitions, uncovered {gaps}; "
        f"p50 {ms(p50(samples))} (n={len(samples)})"
    )
    log("through the catalog ...")
    lines += in_catalog(text_start, text_end, args.repeat)
    for target in targets:
        log(f"over Thrift on {target.name} ...")
        lines += over_thrift(target, text_start, text_end, args.repeat)

    lines += ["", "-- all seven periods YEARLY, QUARTERLY, MONTHLY, WEEKLY, DAILY, HOURLY, "
              "MINUTELY, no partition:"]
    table = empty_table(TABLE, ALL_PERIODS)
    counts = naive_cover(start, end, ALL_PERIODS, probe_tables([table]))
    cover, samples = timed(lambda: cover_range([table], start, end), args.repeat)
    lines.append(
        f"naive {sum(counts.values()):,} calls ({per_period(counts, ALL_PERIODS)}); ours "
        f"{cover.lookups} lookups, p50 {ms(p50(samples))}"
    )

    rng = random.Random(args.seed)
    daily, _, day_holes = with_holes(EndsAndHolesTimeline, "daily", D, year, rng)
    hourly, _, hour_holes = with_holes(EndsAndHolesTimeline, "hourly", H, year, rng)
    tables = [
        StorageTimelines("daily", {D: daily, Y: EndsAndHolesTimeline("daily", Y, COLUMN),
                                   M: EndsAndHolesTimeline("daily", M, COLUMN)}),
        StorageTimelines("hourly", {H: hourly, MI: EndsAndHolesTimeline("hourly", MI, COLUMN)}),
    ]  # fmt: skip
    counts = naive_cover(start, end, SEED_PERIODS, probe_tables(tables))
    cover, samples = timed(lambda: cover_range(tables, start, end), args.repeat)
    lines += [
        "",
        f"-- with data: table daily (YEARLY, MONTHLY, DAILY: {len(daily):,} days, {day_holes} "
        f"missing) and table hourly (HOURLY: {len(hourly):,} hours, {hour_holes} missing; "
        "MINUTELY), EndsAndHoles:",
        f"naive {sum(counts.values()):,} calls ({per_period(counts, SEED_PERIODS)}); ours "
        f"{cover.lookups} lookups, {len(cover.parts):,} partitions, {len(cover.uncovered)} "
        f"uncovered range(s); p50 {ms(p50(samples))} (n={len(samples)})",
    ]
    return lines


def retained_bytes(build: Callable[[], Any]) -> tuple[Any, int]:
    """What ``build`` returns and the memory it keeps allocated (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        built = build()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return built, after - before


def implementations(args: argparse.Namespace) -> list[str]:
    year = args.year
    start, end = datetime(year, 1, 1), datetime(year + 1, 1, 1)
    units = H.units_between(start, end)
    rng = random.Random(args.seed)
    holes = set(rng.sample(range(units), round(units / 100)))
    names = [H.format(H.add(start, i)) for i in range(units) if i not in holes]
    every_hour = [TimePartition.of(H, H.add(start, i)) for i in range(units)]
    lines = [
        "",
        f"== a year of HOURLY partitions ({year}: {len(names):,} of {units:,} hours; "
        f"{len(holes)} holes, random, seed {args.seed}) in each implementation ==",
    ]
    header = (
        f"{'implementation':<20} {'memory':>10} {'keys':>5} {'chars':>8} {'longest':>8} "
        f"{'build':>9} {'encode':>9} {'load':>9} {'exists x' + format(units, ','):>14} "
        f"{'cover':>9} {'lookups':>7}"
    )
    lines += [header, "-" * len(header)]
    for kind in IMPLEMENTATIONS:
        log(f"{kind.__name__} ...")

        def build(kind: type[PartitionTimeline] = kind) -> PartitionTimeline:
            timeline = kind("hourly", H, COLUMN)
            timeline.add_all(TimePartition.parse(H, n) for n in names)
            return timeline

        timeline, memory = retained_bytes(build)
        _, build_ms = timed(build, 3)
        props, encode_ms = timed(lambda t=timeline: timeline_to_table_properties(t), 5)
        chars = sum(len(k) + len(v) for k, v in props.items())
        longest = max(len(v) for v in props.values())
        loaded, load_ms = timed(
            lambda p=props: timeline_from_table_properties("hourly", H, COLUMN, p), 5
        )
        assert list(loaded.partitions()) == list(timeline.partitions())
        _, exists_ms = timed(lambda t=timeline: sum(p in t for p in every_hour), 3)
        table = StorageTimelines("hourly", {H: timeline})
        cover, cover_ms = timed(lambda t=table: cover_range([t], start, end), 5)
        lines.append(
            f"{kind.__name__:<20} {memory / 1024:>6,.0f} KiB {len(props):>5} {chars:>8,} "
            f"{longest:>8,} {ms(p50(build_ms)):>9} {ms(p50(encode_ms)):>9} "
            f"{ms(p50(load_ms)):>9} {ms(p50(exists_ms)):>14} {ms(p50(cover_ms)):>9} "
            f"{cover.lookups:>7,}"
        )
    lines += [
        "",
        "memory: retained after building from the partition names (tracemalloc); keys / chars: "
        "the table parameters (timeline_to_table_properties), their number and total characters "
        "of keys and values; longest: the longest value (Lens chunks lists under 3,999 "
        "characters); build: add_all of the partitions; encode / load: to and from the table "
        "parameters; exists: every hour of the year asked; cover: the year, HOURLY only, and "
        "its timeline lookups.",
    ]
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Partition timeline benchmark: the cover of the seed's example, and the "
        "three timeline implementations (prints figures)."
    )
    parser.add_argument("--year", type=int, default=2023, help="the year covered (default 2023)")
    parser.add_argument("--seed", type=int, default=6, help="random seed of the holes")
    parser.add_argument("--repeat", type=int, default=200, help="timed covers per figure")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path("var/bench-timelines"),
        help="where our started server keeps its data (default ./var/bench-timelines)",
    )
    parser.add_argument(
        "--ours",
        metavar="URI",
        help="an already running server of ours (thrift://127.0.0.1:PORT) instead of starting "
        "one (no audit figures then); 'none': no Thrift figures",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="client socket timeout, s (default 600)"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    # What bench_targets.start_targets reads: no reference metastore here.
    args.reference_hms = None
    args.reference = []
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging("warning")  # the in-process catalog's log lines, off stdout
    with contextlib.ExitStack() as stack:
        targets = start_targets(args, stack)
        print("\n".join(machine_info()))
        for t in targets:
            print(f"{t.name}: {t.description}; getVersion() = {t.version()}")
        print(f"our server {OUR_VERSION}; times are p50 of repeated calls after one warm-up")
        sys.stdout.flush()
        print("\n".join(seed_example(args, targets)), flush=True)
    print("\n".join(implementations(args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
