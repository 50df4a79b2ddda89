"""A user's mistakes get one or two lines saying what went wrong and what to do, with exit 2
for usage and set-up problems and 1 for refusals and the unexpected; a traceback only with
``--debug``. An idle server stops within a second of SIGTERM or Ctrl-C."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.net import LOOPBACK, free_port

from metastore_server.cli import main as cli
from metastore_server.cli import values as cli_values
from metastore_server.cli.errors import DEBUG_HINT
from metastore_server.server.supervisor import STOP_TIMEOUT_S

pytestmark = pytest.mark.any_store

TIMEOUT_S = 60


def run(*args: str, cwd: Path | None = None) -> tuple[int, list[str], str]:
    """Exit code, the program's own stderr lines (log lines left out), and all its output."""
    done = subprocess.run(
        [sys.executable, "-m", "metastore_server", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=cwd,
    )
    everything = done.stdout + done.stderr
    mine = [line for line in done.stderr.splitlines() if line.startswith("metastore-server")]
    return done.returncode, mine, everything


def store_args(tmp_path: Path) -> list[str]:
    return ["--storage", f"sqlite:///{tmp_path}/m.db", "--warehouse", str(tmp_path / "wh")]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_port_in_use_names_the_port_and_the_flag(tmp_path: Path, workers: str) -> None:
    with socket.create_server((LOOPBACK, 0)) as taken:
        port = taken.getsockname()[1]
        code, mine, everything = run(
            "serve", "--port", str(port), "--workers", workers, *store_args(tmp_path)
        )
    assert code == 2 and "Traceback" not in everything
    assert mine == [
        f"metastore-server: cannot serve on 127.0.0.1:{port}: the port is in use (another "
        "metastore-server or Hive Metastore?); stop it, or choose a free port with --port"
    ]


def test_a_bad_storage_url_lists_the_accepted_forms(tmp_path: Path) -> None:
    code, mine, everything = run("serve", "--port", "0", "--storage", "sqlite3:/x.db")
    assert code == 2 and "Traceback" not in everything and len(mine) == 1
    assert "unsupported storage URL 'sqlite3:/x.db'" in mine[0]
    for form in ("sqlite:///relative/path.db", "sqlite:////absolute/path.db", "hbase://host:port"):
        assert form in mine[0]


def test_an_unreachable_hbase_names_host_port_and_the_thrift_server(tmp_path: Path) -> None:
    port = free_port(LOOPBACK)  # nothing listens there
    url = f"hbase://{LOOPBACK}:{port}?connect_retries=0"
    code, mine, everything = run("serve", "--port", "0", "--workers", "0", "--storage", url)
    assert code == 2 and "Traceback" not in everything and len(mine) == 1
    assert f"cannot reach the HBase Thrift gateway at {LOOPBACK}:{port}" in mine[0]
    assert f"hbase thrift start -p {port}" in mine[0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prot = 1\n", "unknown setting 'prot'"),
        ('port = "x"\n', "port must be a whole number, not 'x'"),
        ("port = \n", "not valid TOML"),
    ],
)
def test_a_bad_config_file_names_the_file_and_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    config = tmp_path / "m.toml"
    config.write_text(text)
    code, mine, everything = run("serve", "--config", str(config))
    assert code == 2 and "Traceback" not in everything
    assert mine == [f"metastore-server: config: {config}: {message}"] or (
        len(mine) == 1 and str(config) in mine[0] and message in mine[0]
    )
    missing = tmp_path / "none.toml"
    code, mine, _ = run("serve", "--config", str(missing))
    assert (code, mine) == (2, [f"metastore-server: config: {missing}: no such file"])


def test_a_warehouse_that_is_a_file_is_a_set_up_error(tmp_path: Path) -> None:
    (tmp_path / "wh").write_text("not a directory")
    code, mine, everything = run("serve", "--port", "0", *store_args(tmp_path))
    assert code == 2 and "Traceback" not in everything
    assert len(mine) == 1 and f"--warehouse {tmp_path / 'wh'}" in mine[0]


def test_a_client_command_without_a_server_says_how_to_start_one() -> None:
    uri = f"thrift://{LOOPBACK}:{free_port(LOOPBACK)}"
    done = subprocess.run(
        [sys.executable, "-m", "metastore_server", "values", "db.t", "--keys", "ds", "--uri", uri],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"values: cannot reach {uri}: connection refused",
        "values: is a metastore running there? Start one with `metastore-server serve` (or "
        "`make run`), or point --uri at one",
    ]


def test_the_unexpected_is_one_line_and_a_hint_and_the_traceback_with_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli_values, "run", broken)
    assert cli.main(["values", "db.t", "--keys", "ds"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "metastore-server: RuntimeError: a bug",
        DEBUG_HINT,
    ]
    for debug in (["--debug", "values", "db.t"], ["values", "db.t", "--debug"]):
        with pytest.raises(RuntimeError, match="a bug"):
            cli.main([*debug, "--keys", "ds"])


@pytest.mark.parametrize(("workers", "sig"), [("0", signal.SIGTERM), ("2", signal.SIGINT)])
def test_an_idle_connection_does_not_hold_up_the_stop(
    tmp_path: Path, workers: str, sig: signal.Signals
) -> None:
    port = free_port(LOOPBACK)
    process = subprocess.Popen(
        [sys.executable, "-m", "metastore_server", "serve", "--port", str(port),
         "--workers", workers, *store_args(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while True:  # serving: a connection is accepted
            try:
                socket.create_connection((LOOPBACK, port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
        idle = socket.create_connection((LOOPBACK, port))  # a client connected, doing nothing
        time.sleep(0.5)
        sent = time.monotonic()
        process.send_signal(sig)
        assert process.wait(timeout=TIMEOUT_S) == 0
        # Calls in flight are given STOP_TIMEOUT_S (10 s) to finish; an idle connection has
        # none, so the stop does not wait for it: far sooner than that, however loaded the
        # machine (a one-second bound failed only under load).
        assert time.monotonic() - sent < STOP_TIMEOUT_S / 2
        idle.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
