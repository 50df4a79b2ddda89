"""The LDAP directory of ``--auth ldap``: PLAIN's user and password checked by binding to an LDAP
server as the user (ldap3), as Hive 4's metastore does with
``hive.metastore.authentication=LDAP``.

**Who the user is.** The user's DN comes from ``ldap_user_dn_pattern`` (colon-separated patterns,
``%s`` the user name, tried in order: HMS's ``.userDNPattern``), else from ``ldap_base_dn`` as
``<guid key>=%s,<base DN>`` (``.baseDN`` and ``.guidKey``), else, with a search user
(``ldap_bind_dn``, HMS's ``.binddn``), by searching ``(<guid key>=user)`` under the base DN. The
user name is always escaped into the DN (RFC 4514) and into filters (RFC 4515): a name holding
``,``, ``=``, ``*`` or ``)(`` names nobody else. Unlike HMS, a user name that is itself a DN or
carries a domain is not bound as it is.

**The check.** A simple bind as that DN with the password (an empty password is refused before
any bind: an anonymous or unauthenticated bind never counts). Then, with ``ldap_user_filter``,
the user must be one of those names (``.userFilter``); with ``ldap_group_filter``, a member of
one of those groups (``.groupFilter``): groups of class ``ldap_group_class_key`` holding the
user's DN or name in ``ldap_group_membership_key``, searched under the bases of
``ldap_group_dn_pattern`` (else the base DN), named by their first RDN's value.

**Bounds.** Every login is bounded by ``ldap_timeout`` (connecting, StartTLS, binding and
searching all together), so a directory that does not answer fails logins, not the server; at
most :data:`LDAP_SLOTS` checks run at once in a process. The URLs (space-separated) are tried in
order until one can be reached.

**Looking a user up** without the password (:meth:`LdapDirectory.lookup`, for the REST
catalog's tokens): the search user searches for the user as at a login; without one, the
user's entry is read anonymously at the DNs of the patterns. The group filter is checked the
same way. An answer is kept :data:`LOOKUP_CACHE_S` seconds.
"""

from __future__ import annotations

import math
import os
import re
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from metastore_server.distribution import install_hint

#: LDAP checks running at once in one process.
LDAP_SLOTS = 4
#: Seconds one login may take against the directory, by default.
DEFAULT_TIMEOUT = 10.0
#: Seconds the answer of a look-up of a user is kept.
LOOKUP_CACHE_S = 30.0
_LOOKUPS_KEPT = 4096
_DN_SPECIAL = frozenset('\\"+,;<=>#')
_ATTRIBUTE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)+)$")

_slots = threading.BoundedSemaphore(LDAP_SLOTS)


def escape_dn_value(value: str) -> str:
    """``value`` as an attribute value of a DN (RFC 4514): ``a,ou=x`` stays one value.

    Each special character is escaped wherever it stands (``#`` too, which RFC 4514 requires
    only first: ldap3's ``escape_rdn`` leaves an inner ``#`` that its own DN parser refuses), a
    space at either end, NUL as ``\\00``."""
    if not value:
        raise ValueError("an empty name has no DN")
    last = len(value) - 1
    out = []
    for index, char in enumerate(value):
        if char == "\0":
            out.append("\\00")
        elif char in _DN_SPECIAL or (char == " " and index in (0, last)):
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def escape_filter_value(value: str) -> str:
    """``value`` as an assertion value of a search filter (RFC 4515): ``*`` and ``)(`` match
    themselves."""
    from ldap3.utils.conv import escape_filter_chars

    return escape_filter_chars(value)


def _split(text: str, separator: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(separator) if part.strip())


def _check_dn(what: str, dn: str) -> None:
    from ldap3.core.exceptions import LDAPInvalidDnError
    from ldap3.utils.dn import parse_dn

    try:
        parse_dn(dn)
    except LDAPInvalidDnError:
        raise ValueError(f"{what} {dn!r} is not a DN") from None


def _check_pattern(what: str, pattern: str) -> None:
    if pattern.count("%s") != 1:
        raise ValueError(f"{what} {pattern!r} must hold %s (where the name goes) once")
    _check_dn(what, pattern.replace("%s", "name"))


def _base_of(pattern: str) -> str:
    """The base DN of a DN pattern: the pattern less its first RDN (``cn=%s,ou=groups,...``)."""
    from ldap3.utils.dn import parse_dn

    parts = parse_dn(pattern.replace("%s", "name"))
    return ",".join(f"{attr}={value}" for attr, value, _sep in parts[1:])


@dataclass(frozen=True)
class LdapSettings:
    """The settings of ``--auth ldap`` (see the module docstring)."""

    urls: tuple[str, ...]
    user_dn_patterns: tuple[str, ...] = ()
    base_dn: str = ""
    guid_key: str = "uid"
    starttls: bool = False
    ca_file: str = ""
    user_filter: frozenset[str] = frozenset()
    group_filter: tuple[str, ...] = ()
    group_dn_patterns: tuple[str, ...] = ()
    group_membership_key: str = "member"
    group_class_key: str = "groupOfNames"
    bind_dn: str = ""
    bind_password: str = ""
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> LdapSettings:
        """The LDAP settings of the server's ``ldap_*`` settings; ValueError names what cannot
        work (a missing URL or DN pattern, a bad DN, ldap3 not installed, ...)."""
        try:
            import ldap3  # noqa: F401
        except ImportError:
            raise ValueError(f"auth ldap needs the ldap3 package: {install_hint('ldap')}") from None
        get = lambda name, default="": str(settings.get(f"ldap_{name}") or default)  # noqa: E731
        urls = tuple(get("url").split())
        if not urls:
            raise ValueError("auth ldap needs ldap_url (ldap://host:389 or ldaps://host:636)")
        starttls = get("starttls", "off")
        if starttls not in ("on", "off"):
            raise ValueError(f"ldap_starttls must be on or off, not {starttls!r}")
        for url in urls:
            parts = urlsplit(url)
            if parts.scheme not in ("ldap", "ldaps") or not parts.hostname:
                raise ValueError(
                    f"ldap_url {url!r} must be ldap://host[:port] or ldaps://host[:port]"
                )
            if parts.scheme == "ldaps" and starttls == "on":
                raise ValueError(f"ldap_starttls is for ldap:// URLs; {url!r} is TLS already")
        settings_ = cls(
            urls=urls,
            user_dn_patterns=_split(get("user_dn_pattern"), ":"),
            base_dn=get("base_dn").strip(),
            guid_key=get("guid_key", "uid").strip(),
            starttls=starttls == "on",
            ca_file=get("ca_file"),
            user_filter=frozenset(u.lower() for u in _split(get("user_filter"), ",")),
            group_filter=_split(get("group_filter"), ","),
            group_dn_patterns=_split(get("group_dn_pattern"), ":"),
            group_membership_key=get("group_membership_key", "member").strip(),
            group_class_key=get("group_class_key", "groupOfNames").strip(),
            bind_dn=get("bind_dn").strip(),
            bind_password=_bind_password(get("bind_dn"), get("bind_password_file")),
            timeout=float(settings.get("ldap_timeout", DEFAULT_TIMEOUT)),
        )
        settings_._check()
        return settings_

    def _check(self) -> None:
        if self.bind_dn and not self.base_dn:
            raise ValueError("ldap_bind_dn needs ldap_base_dn (where users are searched)")
        if not self.user_dn_patterns and not self.base_dn:
            raise ValueError(
                "auth ldap needs ldap_user_dn_pattern (e.g. uid=%s,ou=people,dc=example,dc=com) "
                "or ldap_base_dn (the user's DN is then <ldap_guid_key>=name,<ldap_base_dn>)"
            )
        for pattern in self.user_dn_patterns:
            _check_pattern("ldap_user_dn_pattern", pattern)
        for pattern in self.group_dn_patterns:
            _check_pattern("ldap_group_dn_pattern", pattern)
        for what, dn in (("ldap_base_dn", self.base_dn), ("ldap_bind_dn", self.bind_dn)):
            if dn:
                _check_dn(what, dn)
        for what, name in (("ldap_guid_key", self.guid_key),
                           ("ldap_group_membership_key", self.group_membership_key),
                           ("ldap_group_class_key", self.group_class_key)):  # fmt: skip
            if not _ATTRIBUTE.match(name):
                raise ValueError(f"{what} {name!r} is not an attribute name")
        if self.group_filter and not (self.group_dn_patterns or self.base_dn):
            raise ValueError(
                "ldap_group_filter needs ldap_group_dn_pattern or ldap_base_dn (where groups "
                "are searched)"
            )
        if self.bind_dn and self.user_dn_patterns:
            raise ValueError(
                "ldap_bind_dn (search for the user under ldap_base_dn) and ldap_user_dn_pattern "
                "(bind to the pattern's DN) exclude each other: set one"
            )
        if self.ca_file and not os.access(self.ca_file, os.R_OK):
            raise ValueError(f"ldap_ca_file {self.ca_file}: cannot be read")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ValueError(
                f"ldap_timeout must be a positive number of seconds, not {self.timeout}"
            )

    def user_dns(self, user: str) -> list[str]:
        """The DNs a user may have, in the order they are tried (not with a search user)."""
        value = escape_dn_value(user)
        if self.user_dn_patterns:
            return [pattern.replace("%s", value) for pattern in self.user_dn_patterns]
        return [f"{self.guid_key}={value},{self.base_dn}"]

    def group_bases(self) -> list[str]:
        """Where groups are searched."""
        if self.group_dn_patterns:
            return list(dict.fromkeys(_base_of(p) for p in self.group_dn_patterns))
        return [self.base_dn]

    def group_search_filter(self, user: str, user_dn: str) -> str:
        """The filter of the groups holding ``user`` (by DN or by name)."""
        key = self.group_membership_key
        return (
            f"(&(objectClass={self.group_class_key})"
            f"(|({key}={escape_filter_value(user_dn)})({key}={escape_filter_value(user)})))"
        )

    def user_search_filter(self, user: str) -> str:
        """The filter a search user finds ``user`` with."""
        return f"({self.guid_key}={escape_filter_value(user)})"


def _bind_password(bind_dn: str, path: str) -> str:
    if bool(bind_dn.strip()) != bool(path):
        raise ValueError(
            "ldap_bind_dn and ldap_bind_password_file go together (the search user and the "
            "file holding its password)"
        )
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8") as handle:
            password = handle.read().rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"ldap_bind_password_file {path}: cannot be read ({exc})") from None
    if not password:
        raise ValueError(f"ldap_bind_password_file {path} is empty")
    return password


class _Failed(Exception):
    """A login refused: the reason, for the log."""


class _Refused(_Failed):
    """The directory refused a bind (another candidate DN may still be tried)."""


class _Unknown(_Failed):
    """The directory answered that the user is not there, or in none of the groups."""


class LdapDirectory:
    """PLAIN's :class:`~metastore_server.server.sasl_plain.CredentialChecker` against an LDAP
    directory."""

    def __init__(self, settings: LdapSettings) -> None:
        self.settings = settings
        self._lookups: dict[str, tuple[float, tuple[bool | None, str]]] = {}
        self._lookups_lock = threading.Lock()

    def verify(self, user: str, password: str) -> str | None:
        """None when ``user`` may log in with ``password``; else why not (for the log)."""
        if not user or not password:
            return "empty user or password (never bound: it would be an anonymous bind)"
        settings = self.settings
        if settings.user_filter and user.lower() not in settings.user_filter:
            return "not in ldap_user_filter"
        deadline = time.monotonic() + settings.timeout
        if not _slots.acquire(timeout=settings.timeout):
            return "too many LDAP logins being checked at once"
        try:
            self._check(user, password, deadline)
        except _Failed as exc:
            return str(exc)
        finally:
            _slots.release()
        return None

    def _check(self, user: str, password: str, deadline: float) -> None:
        from ldap3.core.exceptions import LDAPException

        settings = self.settings
        searcher = None
        connection = None
        try:
            if settings.bind_dn:
                searcher = self._bind(settings.bind_dn, settings.bind_password, deadline,
                                      "the search user")  # fmt: skip
                candidates = [self._find_user(searcher, user, deadline)]
            else:
                candidates = settings.user_dns(user)
            refusals = []
            for dn in candidates:
                try:
                    connection = self._bind(dn, password, deadline, "the user")
                    break
                except _Refused as exc:
                    refusals.append(str(exc))
            if connection is None:
                raise _Failed("; ".join(refusals))
            if settings.group_filter:
                self._check_groups(searcher or connection, user, dn, deadline)
        except LDAPException as exc:
            raise _Failed(f"LDAP server failed: {type(exc).__name__}: {exc}") from None
        finally:
            for open_connection in (connection, searcher):
                if open_connection is not None:
                    _close(open_connection)

    def lookup(self, user: str) -> tuple[bool | None, str]:
        """Whether ``user`` may still log in, as far as the directory shows without the
        password: True; False and why not (no entry, in no group of the filter); None and
        why it cannot be told (the directory failed). Answers are kept LOOKUP_CACHE_S."""
        now = time.monotonic()
        with self._lookups_lock:
            kept = self._lookups.get(user)
        if kept is not None and kept[0] > now:
            return kept[1]
        answer = self._lookup(user)
        if answer[0] is not None:
            with self._lookups_lock:
                if len(self._lookups) >= _LOOKUPS_KEPT:
                    self._lookups = {k: v for k, v in self._lookups.items() if v[0] > now}
                if len(self._lookups) < _LOOKUPS_KEPT:
                    self._lookups[user] = (now + LOOKUP_CACHE_S, answer)
        return answer

    def _lookup(self, user: str) -> tuple[bool | None, str]:
        settings = self.settings
        if not user:
            return False, "empty user"
        if settings.user_filter and user.lower() not in settings.user_filter:
            return False, "not in ldap_user_filter"
        deadline = time.monotonic() + settings.timeout
        if not _slots.acquire(timeout=settings.timeout):
            return None, "too many LDAP checks at once"
        try:
            self._find_without_password(user, deadline)
        except _Unknown as exc:
            return False, str(exc)
        except _Failed as exc:
            return None, str(exc)
        finally:
            _slots.release()
        return True, ""

    def _find_without_password(self, user: str, deadline: float) -> None:
        """Find ``user`` as the search user, or read its entry anonymously; then the groups."""
        from ldap3.core.exceptions import LDAPException

        settings = self.settings
        connection = None
        try:
            if settings.bind_dn:
                connection = self._bind(settings.bind_dn, settings.bind_password, deadline,
                                        "the search user")  # fmt: skip
                dn = self._find_user(connection, user, deadline)
            else:
                connection = self._bind("", "", deadline, "an anonymous client", anonymous=True)
                dn = self._read_entry(connection, user, deadline)
            if settings.group_filter:
                self._check_groups(connection, user, dn, deadline)
        except LDAPException as exc:
            raise _Failed(f"LDAP server failed: {type(exc).__name__}: {exc}") from None
        finally:
            if connection is not None:
                _close(connection)

    def _read_entry(self, connection: Any, user: str, deadline: float) -> str:
        """The first DN of the patterns where ``user``'s entry can be read."""
        import ldap3

        candidates = self.settings.user_dns(user)
        for dn in candidates:
            _limit(connection, deadline)
            connection.search(dn, "(objectClass=*)", search_scope=ldap3.BASE, attributes=[],
                              time_limit=_seconds_left(deadline))  # fmt: skip
            if connection.result.get("result") not in (0, 32):  # success, noSuchObject
                raise _Failed(f"reading the entry {dn!r} failed: {_result(connection)}")
            if _entries(connection):
                return dn
        raise _Unknown(f"unknown user: no entry an anonymous client can read at "
                       f"{', '.join(repr(dn) for dn in candidates)}")  # fmt: skip

    def _bind(self, dn: str, password: str, deadline: float, who: str,
              anonymous: bool = False) -> Any:  # fmt: skip
        """A connection bound as ``dn`` (``anonymous``: bound as nobody); _Refused when the
        directory says no, _Failed when no server can be reached in time."""
        import ldap3
        from ldap3.core.exceptions import LDAPException

        unreachable = []
        for url in self.settings.urls:
            left = deadline - time.monotonic()
            if left <= 0:
                unreachable.append(f"{url}: no time left of ldap_timeout")
                break
            server = ldap3.Server(url, connect_timeout=left, get_info=ldap3.NONE,
                                  tls=self._tls())  # fmt: skip
            login: dict[str, Any] = {"authentication": ldap3.ANONYMOUS} if anonymous else {
                "user": dn, "password": password, "authentication": ldap3.SIMPLE}  # fmt: skip
            connection = ldap3.Connection(
                server, **login,
                receive_timeout=_seconds_left(deadline), raise_exceptions=False, read_only=True,
                auto_referrals=False,
            )  # fmt: skip
            try:
                connection.open()
                _limit(connection, deadline)
                if self.settings.starttls and not connection.start_tls():
                    raise _Failed(f"StartTLS with {url} failed: {_result(connection)}")
                if connection.bind():
                    return connection
            except LDAPException as exc:
                _close(connection)
                unreachable.append(f"{url}: {type(exc).__name__}: {exc}")
                continue
            except _Failed:
                _close(connection)
                raise
            _close(connection)
            named = f" {dn!r}" if dn else ""
            raise _Refused(f"bind as {who}{named} refused: {_result(connection)}")
        raise _Failed(f"no LDAP server could be used ({'; '.join(unreachable)})")

    def _tls(self) -> Any:
        import ldap3

        return ldap3.Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=self.settings.ca_file or None)

    def _find_user(self, searcher: Any, user: str, deadline: float) -> str:
        """The DN of ``user`` found by the search user."""
        import ldap3

        settings = self.settings
        search = settings.user_search_filter(user)
        _limit(searcher, deadline)
        searcher.search(settings.base_dn, search, search_scope=ldap3.SUBTREE, attributes=[],
                        size_limit=2, time_limit=_seconds_left(deadline))  # fmt: skip
        if searcher.result.get("result") not in (0, 4, 32):  # success, sizeLimit, noSuchObject
            raise _Failed(f"user search under {settings.base_dn!r} failed: {_result(searcher)}")
        found = _entries(searcher)
        if len(found) != 1:
            what = "no entry" if not found else "more than one entry"
            raise _Unknown(f"unknown user: {what} matches {search} under {settings.base_dn!r}")
        return found[0]

    def _check_groups(self, searcher: Any, user: str, user_dn: str, deadline: float) -> None:
        """Refuse ``user`` unless a member of a group of ``ldap_group_filter``."""
        import ldap3
        from ldap3.utils.dn import parse_dn

        settings = self.settings
        search = settings.group_search_filter(user, user_dn)
        names: list[str] = []
        for base in settings.group_bases():
            _limit(searcher, deadline)
            searcher.search(base, search, search_scope=ldap3.SUBTREE, attributes=[],
                            time_limit=_seconds_left(deadline))  # fmt: skip
            if searcher.result.get("result") not in (0, 32):  # success, noSuchObject
                raise _Failed(f"group search under {base!r} failed: {_result(searcher)}")
            names += [parse_dn(dn)[0][1] for dn in _entries(searcher)]
        wanted = {name.lower() for name in settings.group_filter}
        if not wanted & {name.lower() for name in names}:
            raise _Unknown(
                "in none of the groups of ldap_group_filter "
                f"({', '.join(settings.group_filter)}; found: {', '.join(names) or 'none'})"
            )


def _entries(connection: Any) -> list[str]:
    return [
        item["dn"] for item in connection.response or () if item.get("type") == "searchResEntry"
    ]


def _result(connection: Any) -> str:
    result = connection.result or {}
    text = result.get("description") or "no answer"
    if result.get("message"):
        text += f" ({result['message']})"
    return text


def _limit(connection: Any, deadline: float) -> None:
    """Bound the next exchange on ``connection`` by what is left of the login's time."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _Failed("ldap_timeout passed before the check was done")
    connection.socket.settimeout(left)


def _seconds_left(deadline: float) -> int:
    return max(1, math.ceil(deadline - time.monotonic()))


def _close(connection: Any) -> None:
    try:
        connection.unbind()
    except Exception:  # noqa: BLE001 - a connection that cannot be closed is closed anyway
        pass
