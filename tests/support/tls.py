"""Test certificates: a self-signed one for 127.0.0.1 / localhost, and a Java trust store."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 / localhost and its key (PEM); skips the test
    without the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def make_trust_store(cert: Path, store: Path, password: str) -> Path:
    """A JKS trust store holding ``cert``; skips the test without the keytool command."""
    if shutil.which("keytool") is None:
        pytest.skip("the keytool command is needed to make a Java trust store")
    subprocess.run(
        [
            "keytool", "-importcert", "-noprompt", "-alias", "metastore", "-file", str(cert),
            "-keystore", str(store), "-storetype", "JKS", "-storepass", password,
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return store
