"""Proxy users: which authenticated users may act for which others, from where, as Hadoop's
``hadoop.proxyuser.<superuser>.users`` / ``.groups`` / ``.hosts`` settings that HMS applies.

A rule names a superuser (by short name) and says whom it may act for: users named in
``users``, or members of a group named in ``groups`` (the operating system's groups of the
user acted for, looked up as the authorization modes look them up); ``*`` in either: anyone.
``hosts`` says where from: ``*``, IP addresses, CIDR networks, or host names (a host name
matches when the client's address resolves back to it, or it resolves to the client's
address). A superuser without a rule may act for nobody; a rule needs ``hosts`` and at least
one of ``users`` and ``groups``.

Refusals raise :class:`ImpersonationRefused` with Hadoop's wording (``User: hive is not
allowed to impersonate alice``; ``Unauthorized connection for super-user: hive from IP
10.1.2.3``). Used by SASL logins that ask to act for another user and by
``get_delegation_token`` for another owner (see ``docs/security.md``).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from metastore_server.api.authorization.callers import GroupLookup

#: The keys of a rule.
KEYS = ("users", "groups", "hosts")
WILDCARD = "*"
#: What a host entry that is neither an address nor a network may be: a DNS name.
_HOST_NAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?"
                        r"(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$")  # fmt: skip
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ImpersonationRefused(PermissionError):
    """A user may not act for another (from that address): the message is Hadoop's."""


def _resolve_names(address: str) -> set[str]:
    """The host names of an address (its reverse lookup), lower case."""
    try:
        name, aliases, _ = socket.gethostbyaddr(address)
    except OSError:
        return set()
    return {n.lower().rstrip(".") for n in (name, *aliases)}


def _resolve_addresses(name: str) -> set[str]:
    """The addresses a host name resolves to."""
    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return set()
    return {str(info[4][0]).split("%", 1)[0] for info in infos}


@dataclass(frozen=True)
class Resolver:
    """How host names are matched: reverse lookup of an address, forward lookup of a name."""

    names_of: Callable[[str], set[str]] = _resolve_names
    addresses_of: Callable[[str], set[str]] = _resolve_addresses


@dataclass(frozen=True)
class Hosts:
    """Where a superuser may connect from (``*``: anywhere)."""

    every: bool
    addresses: frozenset[Address]
    networks: tuple[Network, ...]
    names: frozenset[str]

    @classmethod
    def parse(cls, entries: Iterable[str], where: str) -> Hosts:
        """The hosts of a rule's ``hosts`` entries; ValueError on one that is none."""
        entries = list(entries)
        if entries == [WILDCARD]:
            return cls(True, frozenset(), (), frozenset())
        addresses: set[Address] = set()
        networks: list[Network] = []
        names: set[str] = set()
        for entry in entries:
            if entry == WILDCARD:
                raise ValueError(f"{where}: hosts: * stands alone (it means any host)")
            if "/" in entry:
                try:
                    networks.append(ipaddress.ip_network(entry, strict=False))
                except ValueError:
                    raise ValueError(f"{where}: hosts: {entry!r} is not a CIDR network") from None
                continue
            try:
                addresses.add(ipaddress.ip_address(entry))
                continue
            except ValueError:
                pass
            if not _HOST_NAME.match(entry):
                raise ValueError(
                    f"{where}: hosts: {entry!r} is not an IP address, a CIDR network or a host name"
                )
            names.add(entry.lower().rstrip("."))
        return cls(False, frozenset(addresses), tuple(networks), frozenset(names))

    def includes(self, address: str, resolver: Resolver) -> bool:
        """Whether a client at ``address`` (an IP address) is one of these hosts."""
        if self.every:
            return True
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:10.1.2.3 is 10.1.2.3
        candidates = [ip] if mapped is None else [ip, mapped]
        for candidate in candidates:
            if candidate in self.addresses:
                return True
            if any(candidate in network for network in self.networks
                   if network.version == candidate.version):  # fmt: skip
                return True
        if not self.names:
            return False
        if self.names & resolver.names_of(str(ip)):
            return True
        shown = {str(candidate) for candidate in candidates}
        return any(shown & resolver.addresses_of(name) for name in sorted(self.names))


@dataclass(frozen=True)
class ProxyRule:
    """Whom one superuser may act for, and from where (None in users/groups: anyone)."""

    superuser: str
    users: frozenset[str] | None
    groups: frozenset[str] | None
    hosts: Hosts

    def allows(self, user: str, groups_of: Callable[[str], Iterable[str]]) -> bool:
        """Whether the superuser may act for ``user``."""
        if self.users is None or self.groups is None or user in self.users:
            return True
        return bool(self.groups) and not self.groups.isdisjoint(groups_of(user))


def _names(value: object, where: str, key: str) -> list[str]:
    """A rule's list: a TOML list of strings or comma-separated text, trimmed, empty dropped."""
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = [part for item in value for part in item.split(",")]
    else:
        raise ValueError(f"{where}: {key} must be a list of names or comma-separated text")
    return [item.strip() for item in items if item.strip()]


def _who(names: list[str], where: str, key: str) -> frozenset[str] | None:
    if WILDCARD in names:
        if names != [WILDCARD]:
            raise ValueError(f"{where}: {key}: * stands alone (it means anyone)")
        return None
    return frozenset(names)


def parse_rule(superuser: str, spec: Mapping[str, object]) -> ProxyRule:
    """The rule of ``superuser`` from its ``users``/``groups``/``hosts``; ValueError on a bad
    one (an unknown key, no hosts, neither users nor groups, a host that is none)."""
    where = f"proxy user {superuser!r}"
    if not superuser or superuser != superuser.strip() or any(c in superuser for c in ":@/,;"):
        raise ValueError(f"{where}: a superuser is a short user name (no ':@/,;' or spaces)")
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    lists = {key: _names(spec[key], where, key) for key in KEYS if key in spec}
    if not lists.get("hosts"):
        raise ValueError(f"{where}: hosts is required (hosts=* for any host)")
    if not lists.get("users") and not lists.get("groups"):
        raise ValueError(f"{where}: users or groups is required (groups=* for anyone)")
    return ProxyRule(
        superuser,
        _who(lists.get("users", []), where, "users"),
        _who(lists.get("groups", []), where, "groups"),
        Hosts.parse(lists["hosts"], where),
    )


def parse_option(text: str) -> tuple[str, dict[str, str]]:
    """``SUPERUSER:users=a,b;groups=g;hosts=h`` as (superuser, {key: text}); ValueError on
    text of another form (the values are checked by :func:`parse_rule`)."""
    superuser, colon, body = text.partition(":")
    if not colon or not superuser.strip():
        raise ValueError(
            f"--proxy-user takes SUPERUSER:users=U,..;groups=G,..;hosts=H,.., not {text!r}"
        )
    spec: dict[str, str] = {}
    for part in body.split(";"):
        if not part.strip():
            continue
        key, equals, value = part.partition("=")
        key = key.strip().lower()
        if not equals:
            raise ValueError(f"--proxy-user {superuser}: {part.strip()!r} is not KEY=VALUES")
        if key in spec:
            raise ValueError(f"--proxy-user {superuser}: {key} given twice")
        spec[key] = value
    return superuser.strip(), spec


class ProxyUsers:
    """Every superuser's rule, and the check of one impersonation (thread-safe)."""

    def __init__(
        self,
        rules: Iterable[ProxyRule] = (),
        groups_of: Callable[[str], Iterable[str]] | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        self.rules = {rule.superuser: rule for rule in rules}
        self._groups_of = groups_of if groups_of is not None else GroupLookup()
        self._resolver = resolver if resolver is not None else Resolver()

    @classmethod
    def from_settings(cls, settings: Mapping[str, Mapping[str, object]]) -> ProxyUsers:
        """The rules of a ``proxy_users`` setting ({superuser: {users, groups, hosts}});
        ValueError on a bad one."""
        if not isinstance(settings, Mapping):
            raise ValueError("proxy_users must be a table of [proxy_users.SUPERUSER] tables")
        rules = []
        for superuser, spec in settings.items():
            if not isinstance(spec, Mapping):
                raise ValueError(f"proxy user {superuser!r}: a table of users, groups, hosts")
            rules.append(parse_rule(str(superuser), spec))
        return cls(rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def authorize(self, real_user: str, user: str, address: str | None) -> None:
        """Let ``real_user`` act for ``user`` from ``address`` (the client's IP address), or
        raise ImpersonationRefused with Hadoop's message."""
        rule = self.rules.get(real_user)
        if rule is None or not rule.allows(user, self._groups_of):
            raise ImpersonationRefused(f"User: {real_user} is not allowed to impersonate {user}")
        if address is None or not rule.hosts.includes(address, self._resolver):
            raise ImpersonationRefused(
                f"Unauthorized connection for super-user: {real_user} from IP {address}"
            )
