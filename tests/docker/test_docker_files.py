"""The docker stack's files are valid: the compose file parses with the docker compose client
(no engine is needed for that), and the Dockerfile copies only paths that exist."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"


def _compose_command() -> list[str] | None:
    """``docker compose`` (the plugin) or ``docker-compose``, whichever this machine has."""
    if shutil.which("docker"):
        probe = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_compose_file_is_valid_and_wires_the_stack() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("no docker compose client (docker compose plugin or docker-compose)")
    compose = [*command, "-f", str(DOCKER / "docker-compose.yml")]
    checked = subprocess.run([*compose, "config", "-q"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    services = subprocess.run([*compose, "config", "--services"], capture_output=True, text=True)
    assert set(services.stdout.split()) == {"hbase", "metastore", "smoke"}
    rendered = subprocess.run([*compose, "config"], capture_output=True, text=True).stdout
    assert "METASTORE_STORAGE: hbase://hbase:9090?prefix=hms_" in rendered
    assert "127.0.0.1:9083:9083" in rendered


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.pyspark"])
def test_dockerfiles_copy_existing_paths(dockerfile: str) -> None:
    text = (DOCKER / dockerfile).read_text()
    sources = [
        source
        for line in re.findall(r"^COPY\s+(.+)$", text, flags=re.MULTILINE)
        for source in line.split()[:-1]
    ]
    assert sources, "no COPY line"
    missing = [s for s in sources if not (ROOT / s).exists()]
    assert not missing, f"{dockerfile} copies paths that do not exist: {missing}"
