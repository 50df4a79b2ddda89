"""``serve``'s ``--proxy-user`` option: a proxy-user rule (Hadoop's ``hadoop.proxyuser.*``),
the ``proxy_users`` setting of :class:`~metastore_server.server.config.ServerConfig`."""

from __future__ import annotations

import argparse
from typing import Any

from metastore_server.server.config import ServerConfig, with_proxy_rules


def add_proxy_user_option(group: Any) -> None:
    """Add ``--proxy-user`` (repeatable) to ``serve``'s option group."""
    group.add_argument(
        "--proxy-user",
        action="append",
        default=[],
        metavar="SUPERUSER:users=U,..;groups=G,..;hosts=H,..",
        help="let SUPERUSER (a short user name) act for the users named or members of the "
        "groups named (* for anyone), connecting from the hosts named (IP addresses, CIDR "
        "networks, host names; * for any), as Hadoop's hadoop.proxyuser.SUPERUSER.* "
        "(repeatable; a rule replaces the superuser's rule of the config file)",
    )


def proxy_user_arguments(args: argparse.Namespace, defaults: ServerConfig) -> dict[str, Any]:
    """The ``proxy_users`` setting of the command line, over ``defaults``'."""
    return {"proxy_users": with_proxy_rules(defaults.proxy_users, args.proxy_user)}
