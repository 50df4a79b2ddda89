"""A real S3 API server for tests: moto's server mode on 127.0.0.1, with IAM enforced.

Two users are made while the server still takes unauthenticated calls: ``admin`` (every
action) and ``reader`` (``s3:GetObject`` and ``s3:ListBucket`` only). From then on every call
must be signed by one of them, and the reader is refused writes and deletes as AWS would.
With ``role``, a role that ``admin`` may assume (STS AssumeRole) is made too, allowed every S3
action: the role a catalog vends credentials from, and moto records every request it takes
(``recording``: one JSON line each), so that a test can read what was asked of STS.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .net import LOOPBACK, StartedByWith, failed_to_start, free_port, tail, terminate

#: Calls made before IAM is enforced: the bucket, then each user, its policy and its key.
_SETUP_CALLS = 7
_ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*",
                                                      "Resource": "*"}]}  # fmt: skip
_READ_ONLY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": "*"}
    ],
}


@dataclass(frozen=True)
class Credentials:
    """An access key pair."""

    key: str
    secret: str

    def env(self, endpoint: str) -> dict[str, str]:
        """The standard AWS variables a process reads them from."""
        return {
            "AWS_ACCESS_KEY_ID": self.key,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
        }


@dataclass(frozen=True)
class S3Endpoint:
    """The running server: its URL, a bucket, the two users and an admin client."""

    url: str
    bucket: str
    admin: Credentials
    reader: Credentials
    client: Any  # boto3 S3 client signed by admin
    #: The ARN of the role admin may assume ('': none made).
    role_arn: str = ""

    def keys(self, prefix: str) -> list[str]:
        """Every object key under ``prefix``, sorted."""
        found: list[str] = []
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
            found += [item["Key"] for item in page.get("Contents", [])]
        return sorted(found)

    def put(self, key: str, body: bytes = b"data") -> None:
        """Write one object (as a Spark job writing a data file would)."""
        self.client.put_object(Bucket=self.bucket, Key=key, Body=body)


def _make_role(iam: Any, name: str) -> str:
    """Make role ``name``, which ``admin`` may assume, allowed every S3 action: its ARN."""
    trust = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:user/admin"},
        "Action": "sts:AssumeRole"}]}  # fmt: skip
    role = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))
    allow_s3 = {"Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_role_policy(RoleName=name, PolicyName=f"{name}-s3",
                        PolicyDocument=json.dumps(allow_s3))  # fmt: skip
    return str(role["Role"]["Arn"])


class MotoS3(StartedByWith):
    """``with MotoS3() as s3:`` runs moto's S3/IAM server on a free loopback port."""

    def __init__(self, workdir: Path | None = None, bucket: str = "lake",
                 role: str = "") -> None:  # fmt: skip
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="moto-s3-"))
        self.bucket = bucket
        self.role = role
        self.port = free_port(LOOPBACK)
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = self.workdir / "moto.log"
        #: moto's record of the requests it took (with ``role`` only).
        self.recording = self.workdir / "recording.jsonl"

    def start(self) -> S3Endpoint:
        """Start the server, make the bucket and the users, then enforce IAM."""
        boto3 = pytest.importorskip("boto3", reason="the S3 tests need boto3")
        pytest.importorskip("moto.server", reason="the S3 tests need moto[server]")
        env = {
            "INITIAL_NO_AUTH_ACTION_COUNT": str(_SETUP_CALLS + (2 if self.role else 0)),
            "AWS_ACCESS_KEY_ID": "bootstrap",
            "AWS_SECRET_ACCESS_KEY": "bootstrap",
            "PATH": "/usr/bin:/bin",
        }
        if self.role:
            env |= {"MOTO_ENABLE_RECORDING": "true", "MOTO_RECORDER_FILEPATH": str(self.recording)}
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", LOOPBACK, "-p", str(self.port)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        failure = failed_to_start(self.process, self.port, 60.0, self.stop)
        if failure is not None:
            raise RuntimeError(f"moto server {failure}\n{tail(self.log_path, 40)}")
        url = f"http://{LOOPBACK}:{self.port}"

        def clients(service: str, creds: Credentials) -> Any:
            return boto3.client(
                service,
                endpoint_url=url,
                region_name="us-east-1",
                aws_access_key_id=creds.key,
                aws_secret_access_key=creds.secret,
            )

        bootstrap = Credentials("bootstrap", "bootstrap")
        clients("s3", bootstrap).create_bucket(Bucket=self.bucket)
        iam = clients("iam", bootstrap)
        made = {}
        for user, policy in (("admin", _ALLOW_ALL), ("reader", _READ_ONLY)):
            iam.create_user(UserName=user)
            iam.put_user_policy(
                UserName=user, PolicyName=f"{user}-policy", PolicyDocument=json.dumps(policy)
            )
            key = iam.create_access_key(UserName=user)["AccessKey"]
            made[user] = Credentials(key["AccessKeyId"], key["SecretAccessKey"])
        role_arn = ""
        if self.role:
            role_arn = _make_role(iam, self.role)
        return S3Endpoint(url, self.bucket, made["admin"], made["reader"],
                          clients("s3", made["admin"]), role_arn)  # fmt: skip

    def stop(self) -> None:
        """Stop the server."""
        proc, self.process = self.process, None
        terminate(proc, 10.0)
