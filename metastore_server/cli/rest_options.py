"""``serve``'s options of the Iceberg REST catalog (``metastore_server.rest``): its port, and
the internal flag that makes a process the catalog's own."""

from __future__ import annotations

import argparse
from typing import Any, TypedDict

from metastore_server.server.config import ServerConfig


def add_rest_options(group: Any, defaults: ServerConfig) -> None:
    """Add ``--rest-port`` (and the hidden ``--rest-process``) to ``serve``'s parser."""
    group.add_argument(
        "--rest-port",
        type=int,
        default=defaults.rest_port,
        metavar="PORT",
        help="also serve the Iceberg REST catalog API over HTTP on this port of --host (TLS "
        "with --tls-cert/--tls-key; the same store and rules as the Thrift API; needs the "
        "'rest' extra); 0: not served (default %(default)s)",
    )
    group.add_argument(
        "--rest-idempotency-lifetime",
        type=int,
        default=defaults.rest_idempotency_lifetime,
        metavar="SECONDS",
        help="keep the answer of a REST request sent with an Idempotency-Key this long, in the "
        "store, so that a retry is answered without running again (advertised in /v1/config); "
        "0: keys not taken (default %(default)s)",
    )
    group.add_argument(
        "--rest-plan-async-files", type=int, default=defaults.rest_plan_async_files,
        metavar="N", help="server-side scan planning: plan in the background (status "
        "'submitted', polled) when the snapshot scanned holds more than N data files; 0: "
        "always at once (default %(default)s)")  # fmt: skip
    group.add_argument(
        "--rest-plan-batch", type=int, default=defaults.rest_plan_batch, metavar="N",
        help="server-side scan planning: file scan tasks per answer, more behind plan-task "
        "tokens (default %(default)s)")  # fmt: skip
    _add_jwt_options(group, defaults)
    _add_vend_options(group, defaults)
    group.add_argument("--rest-process", action="store_true", help=argparse.SUPPRESS)


def _add_jwt_options(group: Any, defaults: ServerConfig) -> None:
    """The REST catalog's identity-provider options (bearer JWTs) and the token endpoint's."""
    texts = {
        "issuer": ("URL", "take bearer JWTs issued by this issuer (their iss) on the REST "
                   "catalog, checked against --rest-jwt-jwks-url; '': none taken"),
        "jwks-url": ("URL", "the issuer's JWKS (https; http only on loopback)"),
        "audience": ("AUD", "the audience (aud) a JWT must name"),
        "user-claim": ("CLAIM", "the JWT claim naming the user"),
        "groups-claim": ("CLAIM", "the JWT claim naming the user's groups ('': none)"),
    }
    for name, (metavar, text) in texts.items():
        field_name = "rest_jwt_" + name.replace("-", "_")
        group.add_argument(f"--rest-jwt-{name}", default=getattr(defaults, field_name),
                           metavar=metavar, help=f"{text} (default %(default)r)")  # fmt: skip
    group.add_argument("--rest-jwt-leeway", type=float, default=defaults.rest_jwt_leeway,
                       metavar="SECONDS", help="clock skew allowed on a JWT's exp and nbf "
                       "(default %(default)s)")  # fmt: skip
    group.add_argument("--rest-oauth-tokens", choices=("on", "off"),
                       default=defaults.rest_oauth_tokens,
                       help="issue and take the tokens of the deprecated POST /v1/oauth/tokens "
                       "under --auth password/ldap (default %(default)s)")  # fmt: skip


def _add_vend_options(group: Any, defaults: ServerConfig) -> None:
    """The REST catalog's credential-vending options (STS AssumeRole)."""
    group.add_argument("--rest-vend-role-arn", default=defaults.rest_vend_role_arn,
                       metavar="ARN", help="vend S3 credentials to REST clients that ask "
                       "(X-Iceberg-Access-Delegation), minted by STS AssumeRole of this role "
                       "with a policy limited to the table; '': none vended (default "
                       "%(default)r)")  # fmt: skip
    group.add_argument("--rest-vend-sts-endpoint", default=defaults.rest_vend_sts_endpoint,
                       metavar="URL", help="the STS endpoint ('': AWS's; default "
                       "%(default)r)")  # fmt: skip
    group.add_argument("--rest-vend-duration", type=int, default=defaults.rest_vend_duration,
                       metavar="SECONDS", help="lifetime of a vended credential, 900 to 43200 "
                       "(default %(default)s)")  # fmt: skip
    group.add_argument("--rest-vend-reuse", choices=("on", "off"),
                       default=defaults.rest_vend_reuse,
                       help="hand a credential again for the same table, access and user while "
                       "half its lifetime is left (default %(default)s)")  # fmt: skip
    group.add_argument("--rest-remote-signing", choices=("on", "off"),
                       default=defaults.rest_remote_signing,
                       help="sign S3 requests for REST clients that ask (X-Iceberg-Access-"
                       "Delegation: remote-signing), inside their table's location, with the "
                       "server's own credentials for --s3-endpoint/--s3-region (default "
                       "%(default)s)")  # fmt: skip


class RestArguments(TypedDict):
    """The ``ServerConfig`` fields of the REST options."""

    rest_port: int
    rest_idempotency_lifetime: int
    rest_plan_async_files: int
    rest_plan_batch: int
    rest_jwt_issuer: str
    rest_jwt_jwks_url: str
    rest_jwt_audience: str
    rest_jwt_user_claim: str
    rest_jwt_groups_claim: str
    rest_jwt_leeway: float
    rest_oauth_tokens: str
    rest_vend_role_arn: str
    rest_vend_sts_endpoint: str
    rest_vend_duration: int
    rest_vend_reuse: str
    rest_remote_signing: str


def rest_arguments(args: argparse.Namespace) -> RestArguments:
    """The ``ServerConfig`` fields of the REST options."""
    return {"rest_port": args.rest_port,
            "rest_idempotency_lifetime": args.rest_idempotency_lifetime,
            "rest_plan_async_files": args.rest_plan_async_files,
            "rest_plan_batch": args.rest_plan_batch,
            "rest_jwt_issuer": args.rest_jwt_issuer,
            "rest_jwt_jwks_url": args.rest_jwt_jwks_url,
            "rest_jwt_audience": args.rest_jwt_audience,
            "rest_jwt_user_claim": args.rest_jwt_user_claim,
            "rest_jwt_groups_claim": args.rest_jwt_groups_claim,
            "rest_jwt_leeway": args.rest_jwt_leeway,
            "rest_oauth_tokens": args.rest_oauth_tokens,
            "rest_vend_role_arn": args.rest_vend_role_arn,
            "rest_vend_sts_endpoint": args.rest_vend_sts_endpoint,
            "rest_vend_duration": args.rest_vend_duration,
            "rest_vend_reuse": args.rest_vend_reuse,
            "rest_remote_signing": args.rest_remote_signing}
