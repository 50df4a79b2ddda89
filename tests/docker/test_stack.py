"""The stack comes up: with a container engine, docker/docker-compose.yml is built and started,
each service becomes healthy by its own health check, the server image serves the compiled
modules, and the PySpark smoke client passes against the metastore on HBase.

Opt-in (METASTORE_TEST_DOCKER_STACK=1): it downloads base images, the HBase release and
Python packages, and takes minutes; it also needs a Compose v2 client and a running engine."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator

import pytest
from dockerfiles import COMPOSE_FILE, compose_v2

pytestmark = pytest.mark.docker_stack

#: The modules setup.py compiles, as the server imports them.
COMPILED = ["metastore_server.wire.walk", "metastore_server.storage.row_scan",
            "metastore_server.wire.partitions"]  # fmt: skip


#: The compose command of the test's project, and the result of its ``up``.
Stack = tuple[list[str], subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    """The compose command of a project of its own, and its ``up`` of HBase and the metastore:
    --wait returns once every started service's health check passes, and fails otherwise."""
    if os.environ.get("METASTORE_TEST_DOCKER_STACK") != "1":
        pytest.skip("the stack is built and run only with METASTORE_TEST_DOCKER_STACK=1")
    client = compose_v2()
    if client is None or client[0] != "docker":
        pytest.skip("no docker CLI with the Compose v2 plugin")
    if subprocess.run(["docker", "info"], capture_output=True, check=False).returncode != 0:
        pytest.skip("no container engine answers `docker info`")
    command = [*client, "-f", str(COMPOSE_FILE), "-p", f"hms-test-{uuid.uuid4().hex[:8]}"]
    try:
        yield command, _run([*command, "up", "--build", "--detach", "--wait", "hbase", "metastore"])
    finally:
        subprocess.run([*command, "down", "-v", "--remove-orphans"], check=False)


def _run(command: list[str], timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def test_services_become_healthy(stack: Stack) -> None:
    _, up = stack
    assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]


def test_server_serves_the_compiled_modules(stack: Stack) -> None:
    compose, _ = stack
    code = "; ".join(f"import {m}; print({m}.__file__)" for m in COMPILED)
    files = _run([*compose, "exec", "-T", "metastore", "python", "-c", code], 120)
    assert files.returncode == 0, files.stderr
    assert [f.rsplit(".", 1)[-1] for f in files.stdout.split()] == ["so"] * len(COMPILED)


def test_smoke_client_passes(stack: Stack) -> None:
    compose, _ = stack
    smoke = _run([*compose, "run", "--build", "--rm", "smoke"])
    assert smoke.returncode == 0, smoke.stdout[-3000:] + smoke.stderr[-3000:]
    assert "-> OK" in smoke.stdout
