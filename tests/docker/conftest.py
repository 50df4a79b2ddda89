"""The marker of the docker tests that need a container engine."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "docker_stack: builds and runs the docker-compose stack (a container engine, the "
        "internet for base images and the HBase release; METASTORE_TEST_DOCKER_STACK=1)",
    )
