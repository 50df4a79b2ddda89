"""The API benchmark (tests/bench/api_calls.py) end to end against our server only, with a
tiny N: every operation runs, counts what the data set holds, and the names listings get
their byte-copy limit. No timing is asserted."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from metastore_server.thrift_api import make_client

BENCH = Path(__file__).resolve().parents[1] / "bench"
REPO = BENCH.parents[1]
N = 4

#: Rows each operation returns on the benchmark's data set of N (t_00000 .. t_00003, the odd
#: ones external; N partitions in one table).
EXPECTED_ROWS = {
    "get_all_tables": N,
    "get_tables 't_*1'": 1,
    "get_tables_by_type": N // 2,
    "get_table_meta": N,
    "get_table_objects_by_name": N,
    "rename (N partitions)": N,
    "add_partitions (N)": N,
    "get_partition_names": N,
    "get_partitions": N,
    "get_partitions_by_names": N,
    "get_partitions_by_filter point": 1,
    "get_next_notification (N)": N,
    "get_partition_values": 1,  # distinct ds: the N partitions fall on one day
    "get_table": 1,
}


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, str]]]:
    """The benchmark's output and CSV rows, from one run against our server."""
    tmp = tmp_path_factory.mktemp("api-bench")
    out = tmp / "figures.csv"
    run = subprocess.run(
        [sys.executable, str(BENCH / "api_calls.py"), "--n", str(N), "--repeat", "1",
         "--warmup", "0", "--data-dir", str(tmp / "data"), "--out", str(out)],
        cwd=tmp, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    with out.open(newline="") as f:
        return run.stdout, list(csv.DictReader(f))


def test_every_operation_runs_without_error(bench_run: tuple[str, list[dict[str, str]]]) -> None:
    from api_ops import operations

    stdout, rows = bench_run
    assert [r["operation"] for r in rows] == [op.name for op in operations()]
    assert [r for r in rows if r["error"]] == []
    assert all(float(r["ours_ms"]) > 0 and r["server_ms"] for r in rows)
    assert f"== N = {N} ==" in stdout
    assert "errors:" not in stdout


def test_rows_are_what_the_data_set_holds(bench_run: tuple[str, list[dict[str, str]]]) -> None:
    by_name = {r["operation"]: r for r in bench_run[1]}
    assert {name: int(by_name[name]["rows_ours"]) for name in EXPECTED_ROWS} == EXPECTED_ROWS
    # N databases of the benchmark, plus default and its two of this size
    assert int(by_name["get_all_databases"]["rows_ours"]) == N + 3


def test_listings_and_small_reads_have_their_byte_copy_limit(
    bench_run: tuple[str, list[dict[str, str]]],
) -> None:
    from api_ops import LIMITED

    by_name = {r["operation"]: r for r in bench_run[1]}
    limited = {name for name, r in by_name.items() if r["limit_ms"]}
    assert limited == set(LIMITED)
    assert all(float(by_name[name]["ours_over_limit"]) > 0 for name in limited)
    assert "byte-copy limit" in bench_run[0]


def test_the_byte_copy_server_sends_the_reply_as_encoded() -> None:
    """What the limit is measured on decodes to the listing it was made from."""
    from byte_copy import PreEncodedServer, encode_reply

    names = [f"t_{i:05d}" for i in range(300)]
    with PreEncodedServer(encode_reply("get_all_tables", names)) as port:
        client = make_client("127.0.0.1", port)
        try:
            assert client.get_all_tables("any") == names
            assert client.get_all_tables("again") == names  # one connection, several calls
        finally:
            client.close()


def test_the_byte_copy_process_serves_from_a_process_of_its_own() -> None:
    """The limit the benchmarks print is served by a child process, as the servers are."""
    from byte_copy import ByteCopyProcess, encode_reply

    names = [f"t_{i:05d}" for i in range(300)]
    server = ByteCopyProcess(encode_reply("get_all_tables", names))
    with server as port:
        assert server._process is not None and server._process.pid != os.getpid()
        client = make_client("127.0.0.1", port)
        try:
            assert client.get_all_tables("any") == names
        finally:
            client.close()
    assert server._process is None  # stopped with the block


def test_pin_takes_two_cpu_lists_and_refuses_anything_else(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from api_calls import parse_args

    cpu = min(os.sched_getaffinity(0))
    args = parse_args(["--pin", f"{cpu}:{cpu}-{cpu}"])
    assert (args.client_cpus, args.server_cpus) == ({cpu}, {cpu})
    assert parse_args([]).client_cpus is None
    for bad in (f"{cpu}", f"{cpu}:x", f"{cpu}:{cpu}:{cpu}", f"{cpu}:100000"):
        with pytest.raises(SystemExit):
            parse_args(["--pin", bad])
        assert "--pin takes CLIENT:SERVERS CPU lists" in capsys.readouterr().err


def test_servers_are_timed_once_quiet_and_not_while_busy() -> None:
    """``wait_quiet`` returns once the processes named have been idle for a window, counting
    their children's threads, and gives up (None) on one that stays busy."""
    from process_quiet import cpu_seconds, wait_quiet

    spin = "while True: pass"
    parent = subprocess.Popen(  # busy in a child of the process named, as a server's workers
        [sys.executable, "-c",
         f"import subprocess, sys; subprocess.run([sys.executable, '-c', {spin!r}])"],
        start_new_session=True,
    )  # fmt: skip
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        first = cpu_seconds(parent.pid)
        assert wait_quiet([parent.pid], window_s=0.1, give_up_s=1.0) is None
        assert cpu_seconds(parent.pid) - first > 0.3  # the child's CPU time counted
        waited = wait_quiet([idle.pid], window_s=0.1, give_up_s=5.0)
        assert waited is not None and waited < 5.0
    finally:
        os.killpg(parent.pid, signal.SIGKILL)  # the spinning child with it
        idle.kill()
        for process in (parent, idle):
            process.wait()


@pytest.fixture(autouse=True, scope="module")
def _bench_on_path() -> None:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
