"""Each health check of the stack runs here as its image runs it, against a server on loopback:
it passes while the server answers and fails once the port is closed. A shell-form check
(CMD-SHELL) runs under /bin/sh, which is dash on Debian and Ubuntu images and busybox on Alpine
ones, so such a check is run under both; exec-form checks run their own program (the image's
python; bash for the HBase check, through its #! line). The HBase check is a real Thrift call,
so it is run against the HBase test double, and must fail on a gateway that answers IOError."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from dockerfiles import DOCKER, DOCKERFILES, compose_file, copy_destinations, image_healthcheck
from dockerfiles import stages as dockerfile_stages
from support.hbase_double.server import HBaseDouble

#: Each check's in-image program, mapped to what runs it here. The image side is checked in
#: test_check_programs_exist_in_their_images.
PROGRAMS = {"python": sys.executable, "hbase-healthcheck": str(DOCKER / "hbase/healthcheck.sh")}
#: The variable each check takes its port from, as the server it checks does.
PORT_VARIABLES = {"metastore": "METASTORE_PORT", "hbase": "HBASE_THRIFT_PORT"}
#: What each checked service is here: a listener, or the HBase Thrift gateway's test double.
CHECKS = {
    "compose hbase": ("hbase", compose_file()["services"]["hbase"]["healthcheck"]["test"]),
    "compose metastore": (
        "metastore",
        compose_file()["services"]["metastore"]["healthcheck"]["test"],
    ),
    "Dockerfile": ("metastore", image_healthcheck(DOCKERFILES["Dockerfile"][0])),
    "hbase/Dockerfile": ("hbase", image_healthcheck(DOCKERFILES["hbase/Dockerfile"][0])),
}
SHELLS = {"dash": ["dash", "-c"], "busybox sh": ["busybox", "sh", "-c"]}
#: The HBase check of the compose file before: bash's /dev/tcp, under /bin/sh.
LEGACY_HBASE_CHECK = ["CMD-SHELL", "echo > /dev/tcp/127.0.0.1/{port}"]


@contextmanager
def _listener(answer: Callable[[socket.socket], None] | None = None) -> Iterator[int]:
    """A TCP server on 127.0.0.1: each connection gets ``answer`` (or nothing) and is closed."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)  # closing a socket does not wake a thread blocked in accept()
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(5)
            with client:
                if answer is not None:
                    answer(client)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        server.close()
        thread.join(5)


def _closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


@contextmanager
def _server(kind: str) -> Iterator[int]:
    if kind == "hbase":
        with HBaseDouble() as double:
            yield double.port
    else:
        with _listener() as port:
            yield port


def _runs(check: list[str], kind: str, port: int) -> dict[str, int]:
    """Run a check as its image would; the exit status under each shell it may meet."""
    env = {**os.environ, PORT_VARIABLES[kind]: str(port)}
    form, *rest = check
    if form == "CMD":
        argv = [PROGRAMS.get(rest[0], rest[0]), *rest[1:]]
        return {"exec": subprocess.run(argv, env=env, timeout=30, check=False).returncode}
    assert form == "CMD-SHELL", check
    missing = [shell[0] for shell in SHELLS.values() if shutil.which(shell[0]) is None]
    if missing:
        pytest.skip(f"no {', '.join(missing)} to run shell-form checks (apt-get install busybox)")
    command = rest[0].format(port=port)
    return {
        name: subprocess.run([*shell, command], env=env, timeout=30, check=False).returncode
        for name, shell in SHELLS.items()
    }


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_check_passes_while_the_server_answers_and_fails_when_closed(name: str) -> None:
    kind, check = CHECKS[name]
    assert check and check != ["NONE"]
    with _server(kind) as port:
        assert set(_runs(check, kind, port).values()) == {0}
    assert 0 not in _runs(check, kind, _closed_port()).values()


def test_compose_and_image_checks_agree() -> None:
    assert CHECKS["compose metastore"][1] == CHECKS["Dockerfile"][1]
    assert CHECKS["compose hbase"][1] == CHECKS["hbase/Dockerfile"][1]


def test_check_programs_exist_in_their_images() -> None:
    """python is the python images' own; hbase-healthcheck is copied in, and its #! names
    bash, which the Ubuntu-based JRE image has (an Alpine one would not)."""
    server_stages = dockerfile_stages(DOCKERFILES["Dockerfile"][0])
    assert all(stage.base.startswith("python:") for stage in server_stages)
    hbase_image = dockerfile_stages(DOCKERFILES["hbase/Dockerfile"][0])[-1]
    assert copy_destinations(hbase_image)["healthcheck.sh"] == "/usr/local/bin/hbase-healthcheck"
    assert hbase_image.base.endswith("-noble")
    script = Path(PROGRAMS["hbase-healthcheck"])
    assert script.read_text().startswith("#!/usr/bin/env bash\n")
    assert os.access(script, os.X_OK), "COPY keeps the mode: the script must be executable"


def test_hbase_check_fails_on_a_gateway_that_cannot_answer() -> None:
    """A gateway up while the master is not: getTableNames answers IOError (field 1)."""
    io_error = (
        b"\x80\x01\x00\x02\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x01"
        b"\x0c\x00\x01\x0b\x00\x01\x00\x00\x00\x0bnot running\x00\x00"
    )

    def answer(client: socket.socket) -> None:
        client.recv(64)
        client.sendall(io_error)

    check = CHECKS["hbase/Dockerfile"][1]
    with _listener(answer) as port:
        assert _runs(check, "hbase", port) == {"exec": 1}
    with _listener() as port:  # accepts, then hangs up without a word
        assert _runs(check, "hbase", port) == {"exec": 1}


def test_dev_tcp_is_bash_only() -> None:
    """Why the old HBase check never passed: /bin/sh (dash, busybox) has no /dev/tcp."""
    with _listener() as port:
        assert 0 not in _runs(LEGACY_HBASE_CHECK, "hbase", port).values()
        bash = ["bash", "-c", LEGACY_HBASE_CHECK[1].format(port=port)]
        assert subprocess.run(bash, check=False).returncode == 0
