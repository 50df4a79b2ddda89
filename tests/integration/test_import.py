"""``metastore-server import`` from one of our servers into another: everything copied, resumed
after an interruption (a lost connection, Ctrl-C) even inside one table, filters honoured,
refusals of either side reported per table, differences found by --verify."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metastore_server import audit
from metastore_server.cli import importing as cli_import
from metastore_server.thrift_api import hms
from metastore_server.tools.importer import Progress, Side, TableResult

from .conftest import RunningServer, create_db, make_partition, make_table


@pytest.fixture(autouse=True)
def keep_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process servers' logging stays as the test run set it up."""
    monkeypatch.setattr(audit, "_configured", True)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server holding two databases of tables, partitions and functions, and a third db."""
    server = RunningServer(tmp_path_factory.mktemp("import-source"))
    c = server.client()
    for db in ("sales", "logs", "other"):
        create_db(c, db)
    c.create_table(make_table("sales", "orders", keys=[("ds", "string"), ("hr", "int")]))
    c.add_partitions(
        [
            make_partition("sales", "orders", [f"2024-01-{d:02d}", str(h)])
            for d in range(1, 11)
            for h in range(5)
        ]
    )
    c.create_table(make_table("sales", "customers"))  # unpartitioned
    c.create_table(
        make_table(
            "sales",
            "acid",
            # Parquet: HMS accepts it transactional only as insert-only
            parameters={"transactional": "true", "transactional_properties": "insert_only"},
            keys=[("ds", "string")],
        )
    )
    c.create_table(
        make_table(
            "sales",
            "recent",
            tableType="VIRTUAL_VIEW",
            viewOriginalText="select * from orders",
            viewExpandedText="select `orders`.`v` from `sales`.`orders`",
        )
    )
    c.create_table(make_table("logs", "events", keys=[("day", "string")]))
    c.add_partitions(
        [
            make_partition("logs", "events", [f"d{i:03d}"], location=f"file:/data/ev/d{i:03d}")
            for i in range(37)
        ]
    )
    c.create_table(make_table("other", "t", keys=[("k", "string")]))
    c.add_partitions([make_partition("other", "t", ["a:b/c"])])  # a value that needs escaping
    for db, fname in (("sales", "money"), ("logs", "parse")):
        c.create_function(
            hms.Function(
                functionName=fname,
                dbName=db,
                className=f"com.example.{fname.title()}",
                ownerName="tester",
                ownerType=hms.PrincipalType.USER,
                createTime=0,
                functionType=hms.FunctionType.JAVA,
                resourceUris=[hms.ResourceUri(hms.ResourceType.JAR, f"file:///jars/{fname}.jar")],
            )
        )
    c.close()
    yield server
    server.stop()


@pytest.fixture()
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A fresh, empty server for each test."""
    server = RunningServer(tmp_path_factory.mktemp("import-target"))
    yield server
    server.stop()


def uri(server: RunningServer) -> str:
    return f"thrift://127.0.0.1:{server.port}"


def run_import(source: RunningServer, target: RunningServer, *extra: str) -> tuple[int, str, str]:
    """Run ``import`` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["--from", uri(source), "--to", uri(target), *extra]
    code = cli_import.main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def table_line(out: str, name: str) -> str:
    """The report's summary of table ``name``."""
    for line in out.splitlines():
        if line.startswith(f"  {name} "):
            return line.strip()[len(name) :].strip()
    raise AssertionError(f"no line for {name} in:\n{out}")


def snapshot(server: RunningServer) -> dict[str, Any]:
    """Everything the import copies, comparable across servers."""
    c = server.client()
    state: dict[str, Any] = {}
    for db in c.get_all_databases():
        if db == "default":
            continue
        state[db] = {"location": c.get_database(db).locationUri}
        for name in c.get_all_tables(db):
            table = c.get_table(db, name)
            parts = c.get_partitions(db, name, -1)
            state[f"{db}.{name}"] = (
                table.tableType,
                table.sd.location,
                [(k.name, k.type) for k in table.partitionKeys],
                sorted((tuple(p.values), p.sd.location) for p in parts),
            )
        for fname in c.get_functions(db, "*"):
            f = c.get_function(db, fname)
            state[f"{db}.{fname}()"] = (f.className, [r.uri for r in f.resourceUris])
    c.close()
    return state


def test_everything_is_copied_and_verified(source: RunningServer, target: RunningServer) -> None:
    code, out, err = run_import(source, target, "--batch-size", "7", "--verify")
    assert code == 0, out + err
    expected = snapshot(source)
    del expected["sales.acid"]  # transactional tables are skipped, and said so
    assert snapshot(target) == expected
    assert (
        table_line(out, "sales.orders") == "created; 50 partition(s) copied, 0 skipped as present"
    )
    assert table_line(out, "logs.events").startswith("created; 37 partition(s) copied")
    assert table_line(out, "sales.acid").startswith("skipped: transactional (ACID) table")
    assert table_line(out, "sales.recent") == "created (view)"  # copied as a table of type view
    assert table_line(out, "sales.customers") == "created (not partitioned)"
    assert "function sales.money: created" in out and "function logs.parse: created" in out
    assert "verify: 5 table(s), 88 partition(s)" in out and "0 table(s) differ" in out
    # each metastore's default database lies in its own warehouse: not a difference
    assert "database default: existing" in out.splitlines()
    # stderr is not a terminal: one progress line per table
    assert "sales.orders: created; 50 partition(s) copied" in err


def test_rerun_after_interruption_copies_only_the_rest(
    source: RunningServer, target: RunningServer
) -> None:
    code, out, _ = run_import(source, target, "--tables", "sales.orders", "--no-progress")
    assert code == 0, out
    assert snapshot(target).keys() == {"sales", "sales.orders"}
    # as if interrupted: some partitions never arrived
    t = target.client()
    names = t.get_partition_names("sales", "orders", -1)
    t.drop_partitions_req(
        hms.DropPartitionsRequest(
            dbName="sales",
            tblName="orders",
            parts=hms.RequestPartsSpec(names=names[:12]),
            deleteData=False,
            needResult=False,
        )
    )
    t.close()

    code, out, err = run_import(source, target, "--batch-size", "5", "--verify")
    assert code == 0, out + err
    assert table_line(out, "sales.orders") == (
        "existing; 12 partition(s) copied, 38 skipped as present"
    )
    assert "database sales: existing" in out and "database logs: created" in out
    assert "    differs" not in out  # the table the first run made is the source's
    assert table_line(out, "logs.events") == "created; 37 partition(s) copied, 0 skipped as present"
    expected = snapshot(source)
    del expected["sales.acid"]
    assert snapshot(target) == expected

    code, out, _ = run_import(source, target, "--no-progress")
    assert code == 0
    assert "total: 6 table(s) (5 existing, 1 skipped); 0 partition(s) copied, 88 skipped" in out


def test_filters(source: RunningServer, target: RunningServer) -> None:
    code, out, _ = run_import(
        source, target, "--databases", "LOGS", "--tables", "sales.customers", "--no-progress"
    )
    assert code == 0, out
    state = snapshot(target)
    assert set(state) == {"logs", "logs.events", "logs.parse()", "sales", "sales.customers"}
    assert "function sales.money" not in out  # sales is not copied whole

    code, out, err = run_import(
        source, target, "--tables", "sales.nope", "--databases", "nodb", "--no-progress"
    )
    assert code == 1  # what was named and is not there is named, and the import fails
    assert "sales.nope" in out and "not found on the source" in out
    assert "import: not found on the source: nodb, sales.nope" in err


def test_existing_objects_are_kept_and_compared(
    source: RunningServer, target: RunningServer
) -> None:
    t = target.client()
    create_db(t, "sales")
    t.create_table(make_table("sales", "customers", columns=[("id", "bigint")]))
    t.close()
    code, out, _ = run_import(source, target, "--databases", "sales", "--no-progress")
    assert code == 0, out
    assert table_line(out, "sales.customers") == "existing (not partitioned)"
    assert "differs (kept ours): columns: ours [('id', 'bigint')], source [('v', 'int')]" in out
    t = target.client()
    assert [c.name for c in t.get_table("sales", "customers").sd.cols] == ["id"]
    t.close()


def test_verify_finds_differences(source: RunningServer, target: RunningServer) -> None:
    code, _, _ = run_import(source, target, "--databases", "logs", "--no-progress")
    assert code == 0
    t = target.client()
    moved = t.get_partition_by_name("logs", "events", "day=d005")
    moved.sd.location = "file:/elsewhere/d005"
    t.alter_partition("logs", "events", moved)
    t.drop_partition_by_name("logs", "events", "day=d010", False)
    t.add_partition(make_partition("logs", "events", ["zzz"]))
    t.close()

    code, out, _ = run_import(source, target, "--databases", "logs", "--no-progress", "--verify")
    assert code == 1, out  # the import puts d010 back; the rest differs still
    assert "1 partition(s) copied, 36 skipped as present" in out
    assert "logs.events:" in out
    assert "1 partition(s) only on the target: day=zzz" in out
    assert "1 partition location(s) differ: day=d005 (ours 'file:/elsewhere/d005'" in out
    assert "missing on the target" not in out


def test_unreachable_metastores_exit_2(source: RunningServer, target: RunningServer) -> None:
    from support.net import free_port

    dead = f"thrift://127.0.0.1:{free_port('127.0.0.1')}"
    out, err = io.StringIO(), io.StringIO()
    assert cli_import.main(["--from", dead, "--to", uri(target)], out=out, err=err) == 2
    assert f"cannot reach the source metastore {dead}" in err.getvalue()
    err = io.StringIO()
    assert cli_import.main(["--from", uri(source), "--to", dead], out=out, err=err) == 2
    assert f"cannot reach the target metastore {dead}" in err.getvalue()
    err = io.StringIO()
    assert cli_import.main(["--from", "http://x", "--to", uri(target)], out=out, err=err) == 2
    assert "thrift://host:port" in err.getvalue()
    assert out.getvalue() == ""


def test_progress_bar_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    now = [0.0]
    progress = Progress.for_stream(stream, True)
    progress.clock = lambda: now[0]
    progress.start("db.t", 100)
    for _ in range(4):
        now[0] += 1.0
        progress.advance(25)
    result = TableResult("db", "t", "created", copied=100, seconds=4.0)
    progress.finish(result)
    text = stream.getvalue()
    assert "db.t" in text and "25/100 partitions 25/s ETA" in text
    assert "db.t: created; 100 partition(s) copied, 0 skipped as present in 4.0 s" in text
    assert text.endswith("(25 partitions/s)\n")
    assert Progress.for_stream(stream, False).mode == "off"


def test_target_lost_midway_exits_2_and_resumes(
    source: RunningServer, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metastore_server.tools.importer import Importer

    store = tmp_path_factory.mktemp("import-lost")
    first = RunningServer(store)
    original = Importer._table

    def dies_on_second_table(self: Importer, db: str, name: str) -> TableResult:
        if (db, name) == ("sales", "customers"):
            first.stop()  # the target goes away in the middle of the import
        return original(self, db, name)

    monkeypatch.setattr(Importer, "_table", dies_on_second_table)
    code, out, err = run_import(source, first, "--no-progress")
    assert code == 2, out + err
    assert "connection to the target" in err and "run the import again to resume" in err
    assert out.startswith("interrupted; done so far:")
    assert table_line(out, "logs.events").startswith("created; 37 partition(s) copied")

    monkeypatch.setattr(Importer, "_table", original)
    again = RunningServer(store, storage=first.config.storage)  # the same store, served again
    try:
        code, out, err = run_import(source, again, "--no-progress")
        assert code == 0, out + err
        assert table_line(out, "logs.events") == (
            "existing; 0 partition(s) copied, 37 skipped as present"
        )
        assert table_line(out, "sales.orders").startswith("created; 50 partition(s) copied")
    finally:
        again.stop()


@pytest.fixture()
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A source answering at most 10 partitions per request, holding wh.big (25 partitions),
    wh.small (4) and wh.gone (3), and a default database with a parameter of its own."""
    server = RunningServer(tmp_path_factory.mktemp("import-limited"), partition_request_limit=10)
    c = server.client()
    create_db(c, "wh")
    for name, count in (("big", 25), ("small", 4), ("gone", 3)):
        c.create_table(make_table("wh", name, keys=[("k", "int")]))
        c.add_partitions([make_partition("wh", name, [str(i)]) for i in range(count)])
    default = c.get_database("default")
    default.parameters = {"team": "data"}
    c.alter_database("default", default)
    c.close()
    yield server
    server.stop()


def test_source_refusals_fail_one_table_and_the_import_goes_on(
    limited: RunningServer, target: RunningServer
) -> None:
    t = limited.client()
    t.drop_table("wh", "gone", True)
    t.close()
    code, out, err = run_import(limited, target, "--batch-size", "50", "--no-progress")
    assert code == 1, out + err
    assert "Traceback" not in out + err
    assert table_line(out, "wh.small") == "created; 4 partition(s) copied, 0 skipped as present"
    big = table_line(out, "wh.big")
    assert big.startswith("failed: source refused: MetaException: Number of partitions"), big
    assert big.endswith("(get_partitions_by_names)"), big
    assert "total: 2 table(s) (1 created, 1 failed); 4 partition(s) copied" in out
    # the default database's location is not reported; its other fields are
    assert "database default: existing; differs (kept ours): parameters: ours {}, source " in out
    assert "locationUri" not in out

    # within the limit the import completes; a --verify asking for more is refused per table
    code, out, err = run_import(limited, target, "--batch-size", "10", "--no-progress")
    assert code == 0, out + err
    assert table_line(out, "wh.big") == "existing; 25 partition(s) copied, 0 skipped as present"
    code, out, err = run_import(limited, target, "--batch-size", "50", "--verify", "--no-progress")
    assert code == 1, out + err
    assert "Traceback" not in out + err
    assert "verify: 2 table(s), 4 partition(s) compared; 1 table(s) differ" in out
    assert "  wh.big:\n    source refused: MetaException: Number of partitions" in out


def test_table_dropped_on_the_source_meanwhile_fails_only_that_table(
    limited: RunningServer, target: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Side.call

    def drops_gone_first(self: Side, method: str, *args: Any, **kwargs: Any) -> Any:
        if self.name == "source" and (method, *args) == ("get_partition_names", "wh", "gone", -1):
            c = limited.client()
            c.drop_table("wh", "gone", True)  # between get_table and get_partition_names
            c.close()
        return original(self, method, *args, **kwargs)

    monkeypatch.setattr(Side, "call", drops_gone_first)
    code, out, err = run_import(limited, target, "--batch-size", "10", "--no-progress")
    assert code == 1, out + err
    assert "Traceback" not in out + err
    gone = table_line(out, "wh.gone")
    assert gone.startswith("failed: source refused: ") and "table not found" in gone, gone
    assert gone.endswith("(get_partition_names)"), gone
    assert table_line(out, "wh.big") == "created; 25 partition(s) copied, 0 skipped as present"
    assert table_line(out, "wh.small") == "created; 4 partition(s) copied, 0 skipped as present"


def test_connection_lost_inside_a_table_resumes_where_it_stopped(
    source: RunningServer, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path_factory.mktemp("import-lost-batch")
    first = RunningServer(store)
    original = Side.call
    batches: list[int] = []

    def dies_on_third_batch(self: Side, method: str, *args: Any, **kwargs: Any) -> Any:
        if self.name == "target" and method == "add_partitions_req":
            batches.append(len(args[0].parts))
            if len(batches) == 3:
                first.stop()  # the target goes away with two batches of five copied
        return original(self, method, *args, **kwargs)

    monkeypatch.setattr(Side, "call", dies_on_third_batch)
    argv = ["--tables", "logs.events", "--batch-size", "5", "--no-progress"]
    code, out, err = run_import(source, first, *argv)
    assert code == 2, out + err
    assert "connection to the target" in err and "run the import again to resume" in err
    assert out.startswith("interrupted; done so far:")
    assert table_line(out, "logs.events") == (
        "interrupted; 10 partition(s) copied, 0 skipped as present"
    )

    monkeypatch.setattr(Side, "call", original)
    again = RunningServer(store, storage=first.config.storage)  # the same store, served again
    try:
        code, out, err = run_import(source, again, *argv, "--verify")
        assert code == 0, out + err
        assert table_line(out, "logs.events") == (
            "existing; 27 partition(s) copied, 10 skipped as present"
        )
        assert "verify: 1 table(s), 37 partition(s) compared; 0 table(s) differ" in out
    finally:
        again.stop()


def popen_at_a_terminal(command: list[str], **options: Any) -> subprocess.Popen[str]:
    """``subprocess.Popen(command, **options)`` (text mode), the command meeting SIGINT as a
    terminal's foreground command does (its default action, not blocked) however this test
    run was started: a run started as a script's background job ignores SIGINT, and so do the
    commands it starts (Ctrl-C does not stop a background job, by design), which then ran to
    the test's timeout. Only the main thread changes, around the start."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        return subprocess.Popen(command, text=True, **options)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)


def test_ctrl_c_prints_what_was_done_and_a_rerun_resumes(
    source: RunningServer, target: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked, release = threading.Event(), threading.Event()
    calls = source.server.processor.calls  # the source server's dispatch table
    original = calls["get_partitions_by_names"]
    batches: list[int] = []

    def third_batch_waits(*args: Any) -> Any:
        if args[1] == "events":
            batches.append(len(args[2]))
            if len(batches) == 3:  # two batches of five are copied: hold the third
                asked.set()
                release.wait(120)
        return original(*args)

    monkeypatch.setitem(calls, "get_partitions_by_names", third_batch_waits)
    command = [sys.executable, "-m", "metastore_server", "import", "--from", uri(source)]
    command += ["--to", uri(target), "--tables", "logs.events", "--batch-size", "5"]
    root = Path(__file__).resolve().parents[2]
    process = popen_at_a_terminal(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert asked.wait(120), "the import never asked for a third batch"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, out + err
    assert "Traceback" not in out + err
    assert "import: interrupted; run the import again to resume" in err
    assert out.startswith("interrupted; done so far:")
    assert table_line(out, "logs.events") == (
        "interrupted; 10 partition(s) copied, 0 skipped as present"
    )

    monkeypatch.setitem(calls, "get_partitions_by_names", original)
    code, out, err = run_import(source, target, "--tables", "logs.events", "--no-progress")
    assert code == 0, out + err
    assert table_line(out, "logs.events") == (
        "existing; 27 partition(s) copied, 10 skipped as present"
    )


#: Puts the test fault of ``support/ctrl_c_site/sitecustomize.py`` into the import's process.
CTRL_C_SITE = str(Path(__file__).parents[1] / "support" / "ctrl_c_site")


def test_ctrl_c_taken_just_as_a_read_begins_to_wait_still_stops_the_import(
    source: RunningServer, target: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGINT noted (its handler pending) while the main thread already waits for an answer,
    as when Ctrl-C arrives between its last check for signals and the start of the socket read,
    interrupts that read; the answer is held for minutes."""
    asked, release = threading.Event(), threading.Event()
    calls = source.server.processor.calls  # the source server's dispatch table
    original = calls["get_partitions_by_names"]
    batches: list[int] = []

    def second_batch_waits(*args: Any) -> Any:
        if args[1] == "events":
            batches.append(len(args[2]))
            if len(batches) == 2:
                asked.set()
                release.wait(300)
        return original(*args)

    monkeypatch.setitem(calls, "get_partitions_by_names", second_batch_waits)
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ)
    paths = (CTRL_C_SITE, str(root), env.get("PYTHONPATH"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    command = [sys.executable, "-m", "metastore_server", "import", "--from", uri(source)]
    command += ["--to", uri(target), "--tables", "logs.events", "--batch-size", "10"]
    process = popen_at_a_terminal(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert asked.wait(120), "the import never asked for a second batch"
        process.send_signal(signal.SIGUSR1)  # the fault: SIGINT taken once the read waits
        out, err = process.communicate(timeout=60)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, out + err
    assert "Traceback" not in out + err
    assert "import: interrupted; run the import again to resume" in err
    assert table_line(out, "logs.events") == (
        "interrupted; 10 partition(s) copied, 0 skipped as present"
    )
