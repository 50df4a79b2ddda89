"""Each health check of the stack runs here as its image runs it, against a server on loopback:
it passes while the server answers and fails once the port is closed. A shell-form check
(CMD-SHELL) runs under /bin/sh, which is dash on Debian and Ubuntu images and busybox on Alpine
ones, so such a check is run under both; exec-form checks run their own program (the image's
python; bash for the HBase check, through its #! line). The HBase check is a real Thrift call,
so it is run against the HBase test double, and must fail on a gateway that answers IOError.
The metastore's check asks ``/health`` on the metrics port and connects to the Thrift port, so
it is run against our server served with ``--metrics-port``, and must fail when either fails."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from dockerfiles import DOCKER, DOCKERFILES, compose_file, copy_destinations, image_healthcheck
from dockerfiles import stages as dockerfile_stages
from support.hbase_double.server import HBaseDouble
from support.net import LOOPBACK, free_port
from support.our_server import OurServer

#: Each check's in-image program, mapped to what runs it here. The image side is checked in
#: test_check_programs_exist_in_their_images.
PROGRAMS = {"python": sys.executable, "hbase-healthcheck": str(DOCKER / "hbase/healthcheck.sh")}
#: The variables each check takes its ports from, as the server it checks does: the Thrift port
#: (the one a shell-form check's ``{port}`` names), then the metastore's metrics port.
PORT_VARIABLES = {"metastore": ("METASTORE_PORT", "METASTORE_METRICS_PORT"),
                  "hbase": ("HBASE_THRIFT_PORT",)}  # fmt: skip
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


@pytest.fixture(scope="module")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """Our server serving /health on ``METASTORE_METRICS_PORT``, as the image sets it: its
    Thrift and metrics ports."""
    metrics_port = free_port(LOOPBACK)
    server = OurServer(tmp_path_factory.mktemp("health-check"),
                       env={"METASTORE_METRICS_PORT": str(metrics_port)})  # fmt: skip
    with server as endpoint:
        yield endpoint.port, metrics_port


@contextmanager
def _server(kind: str, metastore: tuple[int, int]) -> Iterator[tuple[int, ...]]:
    """The ports of a server of ``kind`` answering as it should."""
    if kind == "hbase":
        with HBaseDouble() as double:
            yield (double.port,)
    else:
        yield metastore


def _runs(check: list[str], kind: str, ports: tuple[int, ...], **env: str) -> dict[str, int]:
    """Run a check as its image would, its ports in the variables it reads (``env``: more
    variables); the exit status under each shell it may meet."""
    named = zip(PORT_VARIABLES[kind], ports, strict=False)  # fewer ports: those variables unset
    env = {**os.environ, **{var: str(port) for var, port in named}, **env}
    form, *rest = check
    if form == "CMD":
        argv = [PROGRAMS.get(rest[0], rest[0]), *rest[1:]]
        return {"exec": subprocess.run(argv, env=env, timeout=30, check=False).returncode}
    assert form == "CMD-SHELL", check
    missing = [shell[0] for shell in SHELLS.values() if shutil.which(shell[0]) is None]
    if missing:
        pytest.skip(f"no {', '.join(missing)} to run shell-form checks (apt-get install busybox)")
    command = rest[0].format(port=ports[0])
    return {
        name: subprocess.run([*shell, command], env=env, timeout=30, check=False).returncode
        for name, shell in SHELLS.items()
    }


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_check_passes_while_the_server_answers_and_fails_when_closed(
    name: str, metastore: tuple[int, int]
) -> None:
    kind, check = CHECKS[name]
    assert check and check != ["NONE"]
    with _server(kind, metastore) as ports:
        assert set(_runs(check, kind, ports).values()) == {0}
    closed = tuple(_closed_port() for _ in PORT_VARIABLES[kind])
    assert 0 not in _runs(check, kind, closed).values()


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
        assert _runs(check, "hbase", (port,)) == {"exec": 1}
    with _listener() as port:  # accepts, then hangs up without a word
        assert _runs(check, "hbase", (port,)) == {"exec": 1}


def test_dev_tcp_is_bash_only() -> None:
    """Why the old HBase check never passed: /bin/sh (dash, busybox) has no /dev/tcp."""
    with _listener() as port:
        assert 0 not in _runs(LEGACY_HBASE_CHECK, "hbase", (port,)).values()
        bash = ["bash", "-c", LEGACY_HBASE_CHECK[1].format(port=port)]
        assert subprocess.run(bash, check=False).returncode == 0


@contextmanager
def _http(status: int) -> Iterator[int]:
    """An HTTP server on 127.0.0.1 answering every GET with ``status``."""

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the handler's name
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_metastore_check_needs_health_and_the_thrift_port(metastore: tuple[int, int]) -> None:
    """/health answers from the start, the Thrift port once a worker is ready: healthy only
    when both do; a /health that is not 200, or not HTTP, is unhealthy."""
    thrift, metrics = metastore
    check = CHECKS["Dockerfile"][1]
    assert _runs(check, "metastore", (thrift, metrics)) == {"exec": 0}
    assert _runs(check, "metastore", (_closed_port(), metrics)) == {"exec": 1}
    assert _runs(check, "metastore", (thrift, _closed_port())) == {"exec": 1}
    with _http(503) as port:
        assert _runs(check, "metastore", (thrift, port)) == {"exec": 1}
    with _http(200) as port:
        assert _runs(check, "metastore", (thrift, port)) == {"exec": 0}
    with _listener() as port:  # accepts, then hangs up without a word
        assert _runs(check, "metastore", (thrift, port)) == {"exec": 1}


def test_metastore_check_uses_no_proxy_of_the_environment(metastore: tuple[int, int]) -> None:
    proxy = f"http://127.0.0.1:{_closed_port()}"
    proxies = {"http_proxy": proxy, "HTTP_PROXY": proxy, "no_proxy": "", "NO_PROXY": ""}
    assert _runs(CHECKS["Dockerfile"][1], "metastore", metastore, **proxies) == {"exec": 0}


@pytest.mark.parametrize("off", ["0", ""])
def test_metastore_check_without_a_metrics_port_only_connects(off: str) -> None:
    check = CHECKS["Dockerfile"][1]
    with _listener() as port:
        assert _runs(check, "metastore", (port,), METASTORE_METRICS_PORT=off) == {"exec": 0}
    closed = (_closed_port(),)
    assert _runs(check, "metastore", closed, METASTORE_METRICS_PORT=off) == {"exec": 1}


def test_the_image_serves_health_where_its_check_asks() -> None:
    """The server image sets METASTORE_METRICS_PORT (the server reads it as --metrics-port) and
    exposes it; the compose file does not turn it off."""
    final = dockerfile_stages(DOCKERFILES["Dockerfile"][0])[-1]
    env = dict(word.split("=", 1) for word in " ".join(final.args("ENV")).split())
    port = env.get("METASTORE_METRICS_PORT", "0")
    assert port.isdigit() and int(port) > 0, env
    assert port in " ".join(final.args("EXPOSE")).split()
    service = compose_file()["services"]["metastore"]
    assert str(service.get("environment", {}).get("METASTORE_METRICS_PORT", port)) == port
