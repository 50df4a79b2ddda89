"""``serve``'s ``--ldap-*`` options (``--auth ldap``): each is a ``ldap_*`` setting of
:class:`~metastore_server.server.config.ServerConfig` (``METASTORE_LDAP_*``, ``ldap_*`` in the
config file), HMS's ``hive.metastore.authentication.ldap.*`` where it has one."""

from __future__ import annotations

import argparse
from typing import Any

from metastore_server.server.config import ServerConfig

#: option -> (metavar, help); the setting is the option's name with ``_`` for ``-``.
_OPTIONS: dict[str, tuple[str, str]] = {
    "--ldap-url": (
        "URL",
        "--auth ldap: the LDAP server, ldap://host[:389] or ldaps://host[:636] (several, "
        "space-separated, are tried in order), as HMS's .ldap.url",
    ),
    "--ldap-user-dn-pattern": (
        "PATTERN",
        "the user's DN, %%s the user name (escaped), e.g. uid=%%s,ou=people,dc=example,dc=com; "
        "several colon-separated, tried in order (HMS's .userDNPattern)",
    ),
    "--ldap-base-dn": (
        "DN",
        "without a pattern, the user's DN is <guid key>=name,DN (HMS's .baseDN); groups are "
        "searched under it",
    ),
    "--ldap-guid-key": ("ATTRIBUTE", "the attribute naming users (HMS's .guidKey; default uid)"),
    "--ldap-user-filter": (
        "USER[,USER...]",
        "only these users may log in (HMS's .userFilter)",
    ),
    "--ldap-group-filter": (
        "GROUP[,GROUP...]",
        "only members of one of these groups may log in (HMS's .groupFilter)",
    ),
    "--ldap-group-dn-pattern": (
        "PATTERN",
        "where groups are, e.g. cn=%%s,ou=groups,dc=example,dc=com (colon-separated; HMS's "
        ".groupDNPattern; default: under --ldap-base-dn)",
    ),
    "--ldap-group-membership-key": (
        "ATTRIBUTE",
        "the group attribute listing members, by DN or name (HMS's .groupMembershipKey; "
        "default member)",
    ),
    "--ldap-group-class-key": (
        "CLASS",
        "the object class of groups (HMS's .groupClassKey; default groupOfNames)",
    ),
    "--ldap-bind-dn": (
        "DN",
        "a search user that finds the user's DN under --ldap-base-dn by --ldap-guid-key "
        "(HMS's .binddn); instead of a pattern",
    ),
    "--ldap-bind-password-file": ("PATH", "the file holding --ldap-bind-dn's password"),
    "--ldap-ca-file": (
        "PATH",
        "PEM CAs the LDAP server's certificate is checked against (ldaps://, StartTLS; "
        "default: the system's)",
    ),
}


def add_ldap_options(group: Any, defaults: ServerConfig) -> None:
    """Add the ``--ldap-*`` options to ``serve``'s argument group ``group``."""
    for option, (metavar, text) in _OPTIONS.items():
        name = option[2:].replace("-", "_")
        group.add_argument(option, default=getattr(defaults, name), metavar=metavar, help=text)
    group.add_argument(
        "--ldap-starttls",
        choices=("on", "off"),
        default=defaults.ldap_starttls,
        help="StartTLS on ldap:// URLs before the password is sent (default %(default)s)",
    )
    group.add_argument(
        "--ldap-timeout",
        type=float,
        default=defaults.ldap_timeout,
        metavar="SECONDS",
        help="one login may take this long against the directory, else it fails "
        "(default %(default)s)",
    )


def ldap_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The ``ldap_*`` settings of parsed ``serve`` arguments."""
    names = [option[2:].replace("-", "_") for option in _OPTIONS]
    return {name: getattr(args, name) for name in [*names, "ldap_starttls", "ldap_timeout"]}
