"""Reading docker/ as the tests need it: a Dockerfile's stages and instructions, the health
checks of the Dockerfiles and of the compose file, and the Compose v2 client if there is one."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from docker.utils.build import PatternMatcher

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
COMPOSE_FILE = DOCKER / "docker-compose.yml"
#: Each Dockerfile with its build context (as docker-compose.yml gives it).
DOCKERFILES = {
    "Dockerfile": (DOCKER / "Dockerfile", ROOT),
    "Dockerfile.pyspark": (DOCKER / "Dockerfile.pyspark", ROOT),
    "hbase/Dockerfile": (DOCKER / "hbase" / "Dockerfile", DOCKER / "hbase"),
}
#: Where a v2 binary sits when installed as a docker CLI plugin (.ci/docker-tools.sh puts it in
#: the first); run directly it is the standalone ``docker-compose``.
_PLUGIN_DIRS = [
    "/usr/local/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    str(Path.home() / ".docker/cli-plugins"),
]


@dataclass
class Stage:
    name: str | None
    base: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, keyword: str) -> list[str]:
        return [rest for key, rest in self.instructions if key == keyword]


def instructions(path: Path) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) of each instruction, continuation lines joined and comment lines
    dropped, as Docker reads them."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in path.read_text().splitlines():
        if line.strip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        keyword, _, rest = pending.strip().partition(" ")
        found.append((keyword.upper(), rest.strip()))
        pending = ""
    return found


def stages(path: Path) -> list[Stage]:
    """The build stages, each base image with the ARG defaults declared before the first FROM
    substituted."""
    global_args: dict[str, str] = {}
    result: list[Stage] = []
    for keyword, rest in instructions(path):
        if keyword == "FROM":
            words = rest.split()
            base = re.sub(r"\$\{(\w+)\}", lambda m: global_args.get(m[1], m[0]), words[0])
            name = words[2] if len(words) > 2 and words[1].upper() == "AS" else None
            result.append(Stage(name, base))
        elif not result:
            if keyword == "ARG" and "=" in rest:
                key, _, value = rest.partition("=")
                global_args[key] = value
        else:
            result[-1].instructions.append((keyword, rest))
    return result


def copy_sources(stage: Stage) -> list[str]:
    """The build-context paths a stage's COPY/ADD instructions take (not ``--from`` ones)."""
    sources: list[str] = []
    for keyword in ("COPY", "ADD"):
        for rest in stage.args(keyword):
            words = rest.split()
            if any(w.startswith("--from=") for w in words):
                continue
            sources += [w for w in words[:-1] if not w.startswith("--")]
    return sources


def copy_destinations(stage: Stage) -> dict[str, str]:
    """Where each build-context file a stage copies lands in the image (file copies only)."""
    return {
        rest.split()[-2]: rest.split()[-1]
        for rest in stage.args("COPY")
        if "--from=" not in rest and len(rest.split()) == 2
    }


def image_healthcheck(path: Path) -> list[str] | None:
    """The final stage's HEALTHCHECK in compose's form: ``["CMD", argv...]`` (exec form),
    ``["CMD-SHELL", command]`` (shell form) or ``["NONE"]``; None when there is none."""
    checks = stages(path)[-1].args("HEALTHCHECK")
    if not checks:
        return None
    words = checks[-1]
    if words.strip().upper() == "NONE":
        return ["NONE"]
    command = words[words.index("CMD ") + len("CMD ") :].strip()
    if command.startswith("["):
        return ["CMD", *json.loads(command)]
    return ["CMD-SHELL", command]


def dockerignore(context: Path) -> PatternMatcher:
    """The build context's .dockerignore rules (none when it has no such file), matched as the
    docker client matches them (docker-py's matcher)."""
    ignore = context / ".dockerignore"
    lines = ignore.read_text().splitlines() if ignore.exists() else []
    return PatternMatcher([x.strip() for x in lines if x.strip() and not x.startswith("#")])


def compose_file() -> dict:
    return yaml.safe_load(COMPOSE_FILE.read_text())


def compose_v2() -> list[str] | None:
    """A Compose v2 client: ``docker compose`` or a v2 binary standing alone (v1, the
    Python ``docker-compose``, predates the compose specification's checks)."""
    candidates: list[list[str]] = []
    if shutil.which("docker"):
        candidates.append(["docker", "compose"])
    candidates += [[str(Path(d) / "docker-compose")] for d in _PLUGIN_DIRS]
    if shutil.which("docker-compose"):
        candidates.append(["docker-compose"])
    for command in candidates:
        if not shutil.which(command[0]):
            continue
        probe = subprocess.run(
            [*command, "version", "--short"], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0 and probe.stdout.strip().lstrip("v").startswith("2"):
            return command
    return None
