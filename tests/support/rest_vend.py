"""Credential vending as the tests mount it: moto's S3, IAM and STS server (IAM enforced, a
role the catalog assumes), our server with its REST catalog vending credentials from that role
(under ``--auth none``, or ``--auth password`` with ``--authorization privileges``), and
what moto knows of the credentials minted (the session policy sent with each AssumeRole).

moto checks every request's signature and the role's own policies, but not a session policy:
what a credential may reach is asserted on the policy moto received (its record of the
AssumeRole request), evaluated by moto's own IAM policy evaluator (``IAMPolicy``)."""

from __future__ import annotations

import base64
import contextlib
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .net import LOOPBACK, free_port
from .our_server import OurServer
from .rest_attacks import PASSWORDS
from .rest_catalog import Both, ready
from .s3_server import MotoS3, S3Endpoint

#: The header pyiceberg and DuckDB send to ask for vended credentials.
ASK = {"X-Iceberg-Access-Delegation": "vended-credentials"}
#: Environment variables that would hand a client credentials of its own.
AWS_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL")  # fmt: skip


@dataclass
class Vending:
    """A running server vending credentials, and the S3 server they are for."""

    both: Both
    s3: S3Endpoint
    server: OurServer
    #: moto's record of the requests it took.
    recording: Path

    def assumed(self) -> list[dict[str, str]]:
        """Every AssumeRole request STS took, in order (moto's record: its form's fields,
        among them ``RoleSessionName`` and the session ``Policy``)."""
        found = []
        for line in self.recording.read_text().splitlines():
            entry = json.loads(line)
            body = entry.get("body") or ""
            if entry.get("body_encoded"):
                body = base64.b64decode(body).decode("utf-8", "replace")
            form = dict(urllib.parse.parse_qsl(body))
            if form.get("Action") == "AssumeRole":
                found.append(form)
        return found

    def policies_since(self, count: int) -> list[tuple[str, dict[str, Any]]]:
        """The session names and policies of the AssumeRole requests after the first
        ``count``."""
        return [(form["RoleSessionName"], json.loads(form["Policy"]))
                for form in self.assumed()[count:]]  # fmt: skip

    def log_text(self) -> str:
        """Everything the server (and its REST process) logged."""
        return "".join(p.read_text(errors="replace")
                       for p in (self.server.stdout_path, self.server.stderr_path))  # fmt: skip


def permits(policy: dict[str, Any], action: str, resource: str) -> bool:
    """Whether ``policy`` allows ``action`` on ``resource``, by moto's IAM evaluator."""
    from moto.iam.access_control import IAMPolicy, PermissionResult

    return IAMPolicy(json.dumps(policy)).is_action_permitted(action, resource) == (
        PermissionResult.PERMITTED)


def vend_flags(s3: S3Endpoint, duration: int = 900, sts: str = "",
               reuse: bool = False) -> list[str]:  # fmt: skip
    """The flags of a catalog vending credentials from ``s3``'s role through its STS (or
    the one at ``sts``); ``reuse``: minted credentials handed again (the default of users'
    servers), else minted at each request (so that a test reads each request's policy)."""
    return ["--s3-endpoint", s3.url, "--s3-region", "us-east-1",
            "--rest-vend-role-arn", s3.role_arn, "--rest-vend-sts-endpoint", sts or s3.url,
            "--rest-vend-duration", str(duration),
            "--rest-vend-reuse", "on" if reuse else "off"]  # fmt: skip


@contextlib.contextmanager
def vending(work: Path, auth: str = "none", vend: bool = True,
            sts: str = "", reuse: bool = False, sign: bool = False,
            extra: list[str] | None = None) -> Iterator[Vending]:  # fmt: skip
    """moto's server with the role, and our server over it (``auth``: ``none``, or
    ``password`` with ``--authorization privileges``, alice an administrator); ``vend``: False
    leaves it off; ``sts``: another STS endpoint than moto's; ``reuse``: as ``vend_flags``;
    ``sign``: remote signing on; ``extra``: more flags."""
    (work / "moto").mkdir()
    moto = MotoS3(work / "moto", role="vendor")
    with moto as s3:
        args = ["--rest-port", str(free_port(LOOPBACK)), "--log-level", "debug"]
        args += (vend_flags(s3, sts=sts, reuse=reuse) if vend
                 else ["--s3-endpoint", s3.url, "--s3-region", "us-east-1"])  # fmt: skip
        if sign:
            args += ["--rest-remote-signing", "on"]
        args += extra or []
        if auth == "password":
            from metastore_server.server.passwords import hash_password

            passwords = work / "passwords"
            passwords.write_text("".join(f"{u}:{hash_password(p)}\n"
                                         for u, p in PASSWORDS.items()))  # fmt: skip
            # alice, an administrator, may place namespaces on S3 (a location's privilege);
            # the attacks log in through the (deprecated) token endpoint.
            args += ["--auth", "password", "--password-file", str(passwords),
                     "--authorization", "privileges", "--admin-users", "alice",
                     "--rest-oauth-tokens", "on"]  # fmt: skip
        server = OurServer(work / "server", extra_args=args, env=s3.admin.env(s3.url))
        with server:
            rest_port = int(args[1])
            both = ready(Both(server, rest_port),
                         401 if auth == "password" or "--rest-jwt-issuer" in args else 200)
            yield Vending(both, s3, server, moto.recording)


def without_own_credentials(monkeypatch: Any, home: Path) -> None:
    """This process (the client) holds no AWS credentials of its own: no variables, no
    credential or config file, no instance metadata."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def grant_select(vend: Vending, db: str, name: str, to: str) -> None:
    """alice (an administrator) grants SELECT on ``db.name`` to user ``to``, over Thrift."""
    from metastore_server.sasl_client import SaslLogin, open_sasl_client
    from metastore_server.thrift_api import hms

    client = open_sasl_client(LOOPBACK, vend.server.port,
                              SaslLogin("plain", user="alice", password=PASSWORDS["alice"]))
    try:
        ref = hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName=db, objectName=name)
        info = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="alice",
                                      grantorType=hms.PrincipalType.USER, grantOption=False)
        assert client.grant_privileges(hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
            hiveObject=ref, principalName=to, principalType=hms.PrincipalType.USER,
            grantInfo=info)]))  # fmt: skip
    finally:
        client.close()
