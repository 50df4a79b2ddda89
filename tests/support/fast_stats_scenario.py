"""Fast statistics (``numFiles``, ``totalSize`` and the parameters around them) side by side: a
fixed sequence of calls and file writes whose outcomes can be compared across servers.

Each :class:`StatsStep` writes files into a directory of its own (the *lake*, outside the
server's warehouse, as Spark's is), makes one call (or none), then reads back the parameters of
the objects it is about. :func:`run_stats_scenario` returns, per step, ``{"outcome": "ok" or the
exception type, "message": ..., "shown": <parameters>}`` with ``transient_lastDdlTime`` and the
lake's path left out, so two servers' outcomes (or a server's and a recorded golden file's)
compare with ``==``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .hms_scenario import make_database, make_partition, make_table

DB = "fstats"
LAKE = "<LAKE>"
Action = Callable[[Any, Path], object]
Show = Callable[[Any], object]


@dataclass(frozen=True)
class StatsStep:
    """Files written first (path below the lake -> bytes; a path ending in ``/`` is an empty
    directory), then one call, then what it shows."""

    name: str
    files: tuple[tuple[str, int], ...] = ()
    act: Action | None = None
    show: Show | None = None


#: Data files and the hidden ones HMS skips: 2 files, 30 bytes counted.
DATA = (("a.parquet", 10), ("sub/b.parquet", 20), ("_SUCCESS", 0), (".a.parquet.crc", 4),
        ("_temporary/c", 7), (".hive-staging/d", 3))  # fmt: skip


def _under(prefix: str, files: tuple[tuple[str, int], ...] = DATA) -> tuple[tuple[str, int], ...]:
    return tuple((f"{prefix}/{path}", size) for path, size in files)


def _params(obj: Any) -> dict[str, str]:
    params = dict(obj.parameters or {})
    params.pop("transient_lastDdlTime", None)
    return dict(sorted(params.items()))


def _scenario(hms: ModuleType, lake: Path) -> list[StatsStep]:  # noqa: PLR0915 - one list
    def uri(relative: str) -> str:
        return f"file:{lake / relative}"

    def table(name: str, location: str | None = None, *, keys: tuple[str, ...] = (),
              external: bool = True, params: dict[str, str] | None = None) -> Any:  # fmt: skip
        params = dict(params or {})
        if external:
            params["EXTERNAL"] = "TRUE"
        return make_table(
            hms, DB, name, location=uri(location) if location else None,
            part_keys=tuple((k, "string") for k in keys),
            table_type="EXTERNAL_TABLE" if external else "MANAGED_TABLE", params=params,
        )  # fmt: skip

    def show_table(name: str) -> Show:
        return lambda c: _params(c.get_table(DB, name))

    def show_parts(name: str, *values: str) -> Show:
        def show(c: Any) -> object:
            found = {}
            for value in values:
                try:
                    found[value] = _params(c.get_partition(DB, name, [value]))
                except hms.NoSuchObjectException:
                    found[value] = None
            return found

        return show

    def alter(name: str, change: Callable[[Any], None], context: dict[str, str] | None = None,
              cascade: bool = False) -> Action:  # fmt: skip
        def act(c: Any, _lake: Path) -> None:
            current = c.get_table(DB, name)
            change(current)
            if cascade:
                c.alter_table_with_cascade(DB, name, current, True)
            elif context is None:
                c.alter_table(DB, name, current)
            else:
                env = hms.EnvironmentContext(properties=context)
                c.alter_table_with_environment_context(DB, name, current, env)

        return act

    def alter_part(name: str, value: str, change: Callable[[Any], None],
                   context: dict[str, str] | None = None) -> Action:  # fmt: skip
        def act(c: Any, _lake: Path) -> None:
            current = c.get_partition(DB, name, [value])
            change(current)
            if context is None:
                c.alter_partition(DB, name, current)
            else:
                env = hms.EnvironmentContext(properties=context)
                c.alter_partition_with_environment_context(DB, name, current, env)

        return act

    def params_set(**values: str) -> Callable[[Any], None]:
        return lambda obj: obj.parameters.update(values)

    def params_without(*keys: str) -> Callable[[Any], None]:
        def change(obj: Any) -> None:
            for key in keys:
                obj.parameters.pop(key, None)

        return change

    def rename(old: str, new: str) -> Action:
        def change(t: Any) -> None:
            t.tableName = new

        return alter(old, change)

    def rename_part(name: str, old: str, new: str, strip: bool) -> Action:
        def act(c: Any, _lake: Path) -> None:
            current = c.get_partition(DB, name, [old])
            current.values = [new]
            if strip:
                for key in ("numFiles", "totalSize"):
                    current.parameters.pop(key, None)
            c.rename_partition(DB, name, [old], current)

        return act

    def copy_table(name: str, new: str) -> Action:
        def act(c: Any, _lake: Path) -> None:
            copied = c.get_table(DB, name)
            copied.tableName, copied.sd.location, copied.parameters = new, None, {}
            c.create_table(copied)

        return act

    def view(name: str) -> Any:
        made = make_table(hms, DB, name, part_keys=(), table_type="VIRTUAL_VIEW",
                          params={"DO_NOT_UPDATE_STATS": "true", "numFiles": "3"})  # fmt: skip
        made.sd.location = None
        made.viewOriginalText = made.viewExpandedText = f"SELECT * FROM {DB}.ext"
        return made

    def stripped(c: Any, name: str, value: str) -> Any:
        """The partition as stored, without its fast statistics."""
        found = c.get_partition(DB, name, [value])
        params_without("numFiles", "totalSize")(found)
        return found

    def add_column(name: str) -> Callable[[Any], None]:
        def change(t: Any) -> None:
            t.sd.cols = [*t.sd.cols, hms.FieldSchema(name=name, type="string", comment=None)]

        return change

    def part(name: str, value: str, location: str | None = None,
             params: dict[str, str] | None = None) -> Any:  # fmt: skip
        made = make_partition(hms, DB, name, [value], uri(location) if location else None)
        made.parameters = dict(params or {})
        return made

    accurate_columns = '{"COLUMN_STATS":{"b":"true","a":"true"}}'
    task = {"STATS_GENERATED": "TASK"}
    user = {"STATS_GENERATED": "USER"}
    dnu = {"DO_NOT_UPDATE_STATS": "true"}
    p = "fstats.db/p"
    return [
        StatsStep("autogather_setting",
                  show=lambda c: c.get_config_value("hive.stats.autogather", "unset")),
        StatsStep("create_database", act=lambda c, lk: c.create_database(
            make_database(hms, DB, uri("fstats.db")))),
        # -- create_table
        StatsStep("create_external_over_files", _under("ext"),
                  lambda c, lk: c.create_table(table("ext", "ext")), show_table("ext")),
        StatsStep("create_managed_new_directory", (),
                  lambda c, lk: c.create_table(table("fresh", external=False)),
                  show_table("fresh")),
        StatsStep("create_over_empty_directory", (("empty/", 0),),
                  lambda c, lk: c.create_table(table("empty", "empty")), show_table("empty")),
        StatsStep("create_over_missing_directory", (),
                  lambda c, lk: c.create_table(table("missing", "missing")),
                  show_table("missing")),
        StatsStep("create_with_stats_sent", (),
                  lambda c, lk: c.create_table(table("sent", "ext", params={
                      "numFiles": "5", "totalSize": "50"})), show_table("sent")),
        StatsStep("create_with_one_stat_sent", (),
                  lambda c, lk: c.create_table(table("half", "ext", params={"numFiles": "5"})),
                  show_table("half")),
        StatsStep("create_do_not_update_true", (),
                  lambda c, lk: c.create_table(table("dnu", "ext", params={
                      "DO_NOT_UPDATE_STATS": "TRUE"})), show_table("dnu")),
        StatsStep("create_do_not_update_false", (),
                  lambda c, lk: c.create_table(table("dnuf", "ext", params={
                      "DO_NOT_UPDATE_STATS": "false"})), show_table("dnuf")),
        StatsStep("create_with_accurate", (),
                  lambda c, lk: c.create_table(table("acc", "ext", params={
                      "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'})), show_table("acc")),
        StatsStep("create_generated_by_task", (),
                  lambda c, lk: c.create_table_with_environment_context(
                      table("task", "ext", params={"COLUMN_STATS_ACCURATE": accurate_columns}),
                      hms.EnvironmentContext(properties=task)), show_table("task")),
        StatsStep("create_partitioned_over_files", (),
                  lambda c, lk: c.create_table(table("pext", "ext", keys=("ds",), params={
                      "DO_NOT_UPDATE_STATS": "true"})), show_table("pext")),
        # -- alter_table
        StatsStep("alter_counts_again", (("ext/more.parquet", 5),),
                  alter("ext", params_set(k="v")), show_table("ext")),
        StatsStep("alter_told_not_to", (("ext/more2.parquet", 6),),
                  alter("ext", params_set(numFiles="9", totalSize="90"), dnu), show_table("ext")),
        StatsStep("alter_told_not_to_false", (),
                  alter("ext", params_set(numFiles="9"), {"DO_NOT_UPDATE_STATS": "false"}),
                  show_table("ext")),
        StatsStep("alter_parameter_says_not_to", (),
                  alter("ext", params_set(numFiles="8", DO_NOT_UPDATE_STATS="true")),
                  show_table("ext")),
        StatsStep("alter_generated_by_task", (),
                  alter("ext", params_set(COLUMN_STATS_ACCURATE=accurate_columns), task),
                  show_table("ext")),
        StatsStep("alter_generated_by_user", (),
                  alter("ext", params_set(numFiles="1"), user), show_table("ext")),
        StatsStep("alter_without_generated", (), alter("ext", params_set(k="w")),
                  show_table("ext")),
        StatsStep("alter_to_missing_location", (),
                  alter("missing", lambda t: setattr(t.sd, "location", uri("nowhere"))),
                  show_table("missing")),
        StatsStep("alter_partitioned_table", (), alter("pext", params_set(k="v")),
                  show_table("pext")),
        # -- renames of tables
        StatsStep("rename_managed_table", (("fstats.db/fresh/x.parquet", 6),),
                  rename("fresh", "fresh2"), show_table("fresh2")),
        StatsStep("rename_external_table", (("empty/y.parquet", 8),),
                  rename("empty", "empty2"), show_table("empty2")),
        StatsStep("create_managed_placed", _under("placed"),
                  lambda c, lk: c.create_table(table("placed", "placed", external=False)),
                  show_table("placed")),
        StatsStep("rename_managed_placed", (("placed/z.parquet", 9),),
                  rename("placed", "placed2"), show_table("placed2")),
        # -- add_partition(s)
        StatsStep("create_partitioned", (),
                  lambda c, lk: c.create_table(table("p", keys=("ds",), external=False)),
                  show_table("p")),
        StatsStep("add_partition_over_files", _under(f"{p}/ds=1"),
                  lambda c, lk: c.add_partition(part("p", "1")), show_parts("p", "1")),
        StatsStep("add_partition_new_directory", (),
                  lambda c, lk: c.add_partition(part("p", "2")), show_parts("p", "2")),
        StatsStep("add_partitions_batch", ((f"{p}/ds=3/", 0), ("outside/ds=9/f.parquet", 17)),
                  lambda c, lk: c.add_partitions([
                      part("p", "3"), part("p", "4", params={"numFiles": "4", "totalSize": "40"}),
                      part("p", "9", "outside/ds=9")]), show_parts("p", "3", "4", "9")),
        StatsStep("add_partition_with_accurate", _under(f"{p}/ds=6"),
                  lambda c, lk: c.add_partition(part("p", "6", params={
                      "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'})),
                  show_parts("p", "6")),
        StatsStep("add_partition_stats_sent", _under(f"{p}/ds=11"),
                  lambda c, lk: c.add_partition(part("p", "11", params={
                      "numFiles": "1", "totalSize": "2"})), show_parts("p", "11")),
        StatsStep("append_partition_over_files", ((f"{p}/ds=5/f.parquet", 13),),
                  lambda c, lk: c.append_partition(DB, "p", ["5"]), show_parts("p", "5")),
        # -- alter_partition(s)
        StatsStep("alter_partition_without_stats", (),
                  alter_part("p", "2", params_set(k="v")), show_parts("p", "2")),
        StatsStep("alter_partition_same_stats", ((f"{p}/ds=1/late.parquet", 5),),
                  alter_part("p", "1", params_set(k="v")), show_parts("p", "1")),
        StatsStep("alter_partition_other_stats", (),
                  alter_part("p", "1", params_set(numFiles="99")), show_parts("p", "1")),
        StatsStep("alter_partition_stats_removed", (),
                  alter_part("p", "1", params_without("numFiles", "totalSize")),
                  show_parts("p", "1")),
        StatsStep("alter_partition_told_not_to", (),
                  alter_part("p", "1", params_set(numFiles="42"), dnu), show_parts("p", "1")),
        StatsStep("alter_partition_same_generated_by_task", (),
                  alter_part("p", "6", params_set(k="v"), task), show_parts("p", "6")),
        StatsStep("alter_partition_generated_by_task", (),
                  alter_part("p", "1", params_set(k="t"), task), show_parts("p", "1")),
        StatsStep("alter_partition_generated_by_user", (),
                  alter_part("p", "6", params_set(k="u"), user), show_parts("p", "6")),
        StatsStep("alter_partitions_batch", ((f"{p}/ds=3/g.parquet", 3),),
                  lambda c, lk: c.alter_partitions(DB, "p", [
                      c.get_partition(DB, "p", ["3"]), c.get_partition(DB, "p", ["4"])]),
                  show_parts("p", "3", "4")),
        StatsStep("alter_partitions_told_not_to", (),
                  lambda c, lk: c.alter_partitions_with_environment_context(DB, "p", [
                      stripped(c, "p", "3"), stripped(c, "p", "4")],
                      hms.EnvironmentContext(properties=dnu)),
                  show_parts("p", "3", "4")),
        # -- rename_partition
        StatsStep("rename_partition_as_read", (),
                  rename_part("p", "5", "50", strip=False), show_parts("p", "5", "50")),
        StatsStep("rename_partition_without_stats", (),
                  rename_part("p", "6", "60", strip=True), show_parts("p", "6", "60")),
        # -- an alter with cascade
        StatsStep("add_partition_before_cascade", (),
                  lambda c, lk: c.add_partition(part("p", "8")), show_parts("p", "8")),
        StatsStep("alter_with_cascade", (), alter("p", add_column("w"), cascade=True),
                  show_parts("p", "1", "2", "8", "9", "50")),
        StatsStep("alter_with_cascade_context", (),
                  alter("p", add_column("w2"), {"CASCADE": "TRUE"}), show_parts("p", "8")),
        # -- an exchange, and views
        StatsStep("create_exchange_target", (), copy_table("p", "q"), show_table("q")),
        StatsStep("exchange_partition", (("fstats.db/p/ds=8/h.parquet", 4),),
                  lambda c, lk: c.exchange_partition({"ds": "8"}, DB, "p", DB, "q"),
                  show_parts("q", "8")),
        StatsStep("create_view", (), lambda c, lk: c.create_table(view("v")), show_table("v")),
        StatsStep("alter_view", (), alter("v", params_set(k="v")), show_table("v")),
        StatsStep("drop_database", act=lambda c, lk: c.drop_database(DB, True, True)),
    ]  # fmt: skip


def steps(hms: ModuleType) -> list[StatsStep]:
    """The steps (their names and files do not depend on the lake)."""
    return _scenario(hms, Path("/lake"))


def _write(lake: Path, files: tuple[tuple[str, int], ...]) -> None:
    for relative, size in files:
        path = lake / relative
        if relative.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)


def _plain(value: Any, lake: str) -> Any:
    if isinstance(value, str):
        return value.replace(lake, LAKE)
    if isinstance(value, dict):
        return {k: _plain(v, lake) for k, v in value.items()}
    return value


def run_stats_scenario(hms: ModuleType, client: Any, lake: Path) -> dict[str, dict[str, Any]]:
    """Run every step against one server (``client``), writing files into ``lake``."""
    lake.mkdir(parents=True, exist_ok=True)
    errors = (hms.MetaException, hms.InvalidOperationException, hms.InvalidObjectException,
              hms.NoSuchObjectException, hms.AlreadyExistsException)  # fmt: skip
    from thriftpy2.thrift import TApplicationException

    outcomes: dict[str, dict[str, Any]] = {}
    for step in _scenario(hms, lake):
        _write(lake, step.files)
        outcome: dict[str, Any] = {"outcome": "ok"}
        try:
            if step.act is not None:
                step.act(client, lake)
        except (*errors, TApplicationException) as exc:
            outcome = {"outcome": type(exc).__name__,
                       "message": str(getattr(exc, "message", exc))}  # fmt: skip
        if step.show is not None:
            with contextlib.suppress(*errors):
                outcome["shown"] = step.show(client)
        outcomes[step.name] = _plain(outcome, str(lake))
    return outcomes
