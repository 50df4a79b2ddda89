"""Delegation tokens, as HMS's token secret manager issues and checks them, kept in the store.

A token is issued to the authenticated (Kerberos) user, or to the user a proxy user gets it
for (the proxy user is then the token's real user), and signed with this process's current
master key; the token and its renewal deadline go into the token store (``secrets``), and so
does every master key, so every server process on the same store checks the others' tokens
(as HMS's database token store lets several metastores share tokens). The formats are Hadoop's
(:mod:`~metastore_server.catalog.security.hadoop_tokens`), so Hive's own token store could read
what is kept here and a Java client holding a token can log in with it.

Lifetimes are HMS's: a master key is replaced every ``key_update_interval``
(``hive.cluster.delegation.key.update-interval``, 1 day) and kept until no token it signed can
still live; a token lives ``renew_interval`` (``...token.renew-interval``, 1 day) past its
issue or last renewal, and never past ``max_lifetime`` (``...token.max-lifetime``, 7 days)
after its issue. Expired tokens and keys are removed from the store (at most every
``gc_interval``, ``...token.gc-interval``, 1 hour, when the manager is used), and a token past
its deadline is refused even before that.

Refusals raise :class:`InvalidToken` (an unknown, expired, malformed or forged token) or
:class:`TokenAccessDenied` (a caller who may not renew or cancel it), with Hadoop's wording.
"""

from __future__ import annotations

import hmac
import secrets as random_bytes
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from metastore_server.catalog.security.hadoop_tokens import (
    MasterKey,
    StoredToken,
    Token,
    TokenFormatError,
    TokenIdentifier,
    b64_decode,
    password_for,
)
from metastore_server.catalog.security.secrets import Secrets

log = structlog.get_logger(__name__)

DAY_S = 86400.0
#: Bytes of a master key's secret.
KEY_BYTES = 64
_INT_MAX = 2**31 - 1


class InvalidToken(ValueError):
    """A token that is malformed, unknown (cancelled, never issued), expired or forged."""


class TokenAccessDenied(PermissionError):
    """A caller who may not renew or cancel a token."""


@dataclass(frozen=True)
class TokenLifetimes:
    """How long keys and tokens live, in seconds (HMS's ``hive.cluster.delegation.*``)."""

    key_update_interval: float = DAY_S
    renew_interval: float = DAY_S
    max_lifetime: float = 7 * DAY_S
    gc_interval: float = 3600.0


@dataclass(frozen=True)
class TokenLogin:
    """What a token login is checked with: the token's owner and its password, and who got
    the token for the owner (a proxy user's short name; empty: the owner itself)."""

    owner: str
    password: bytes
    real_user: str = ""


def short_name(principal: str) -> str:
    """The user of a Kerberos principal: its first component, realm dropped."""
    return principal.split("@", 1)[0].split("/", 1)[0]


def format_time(ms: int) -> str:
    """A time in messages, as Hadoop writes one (``yyyy-MM-dd HH:mm:ss,SSSZ``, in UTC)."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S,") + f"{ms % 1000:03d}+0000"


class DelegationTokens:
    """The token secret manager of one server process (thread-safe)."""

    def __init__(
        self,
        secrets: Secrets,
        lifetimes: TokenLifetimes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._secrets = secrets
        self.lifetimes = lifetimes or TokenLifetimes()
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: dict[int, MasterKey] = {}  # master keys seen, by id
        self._current: MasterKey | None = None
        self._rolled_at = 0  # ms: when the current key was made
        self._next_gc = 0  # ms

    # -- the calls ----------------------------------------------------------------------------

    def issue(self, owner: str, renewer: str, real_user: str = "") -> str:
        """A new token of ``owner`` that ``renewer`` (a principal; its short name is kept)
        may renew, in its string form."""
        now = self._now()
        self._collect(now)
        key = self._current_key(now)
        lifetimes = self.lifetimes
        for _attempt in range(3):
            sequence = (self._secrets.next_token_sequence() - 1) % _INT_MAX + 1
            ident = TokenIdentifier(owner, short_name(renewer) if renewer else "", real_user, now,
                                    now + _ms(lifetimes.max_lifetime), sequence,
                                    key.key_id)  # fmt: skip
            raw = ident.encode()
            password = password_for(raw, key.secret)
            record = StoredToken(password, now + _ms(lifetimes.renew_interval))
            if self._secrets.add_token(ident.store_key(), record.encode()):
                log.info("delegation_token_issued", token=str(ident))
                return Token(raw, password).to_url_string()
        raise InvalidToken(f"could not store a new token for {owner} (identifier taken)")

    def renew(self, token_text: str, renewer: str) -> int:
        """Renew a token for ``renewer`` (a short name, who must be its renewer): its new
        deadline (ms), never past its maximum date."""
        now = self._now()
        self._collect(now)
        token, ident = _parse(token_text)
        stored = self._secrets.get_token(ident.store_key())
        if not stored or _record(stored).renew_date < now:
            raise InvalidToken(f"token expired or does not exist: {ident}")
        if ident.max_date < now:
            raise InvalidToken(
                f"{renewer} tried to renew an expired token ({ident}) max expiration date: "
                f"{format_time(ident.max_date)} currentTime: {format_time(now)}"
            )
        if not ident.renewer:
            raise TokenAccessDenied(f"{renewer} tried to renew a token ({ident}) without a renewer")
        if ident.renewer != renewer:
            raise TokenAccessDenied(
                f"{renewer} tries to renew a token ({ident}) with non-matching renewer "
                f"{ident.renewer}"
            )
        key = self._key(ident.master_key_id, now)
        if key is None:
            raise InvalidToken(
                f"Unable to find master key for keyId={ident.master_key_id} from cache. Failed "
                f"to renew an unexpired token ({ident}) with sequenceNumber="
                f"{ident.sequence_number}"
            )
        if not hmac.compare_digest(password_for(token.identifier, key.secret), token.password):
            raise TokenAccessDenied(
                f"{renewer} is trying to renew a token ({ident}) with wrong password"
            )
        renewed = min(ident.max_date, now + _ms(self.lifetimes.renew_interval))
        record = StoredToken(_record(stored).password, renewed).encode()
        if not self._secrets.replace_token(ident.store_key(), stored, record):
            raise InvalidToken(f"Renewal request for unknown token ({ident})")
        log.info("delegation_token_renewed", token=str(ident), renew_date=renewed)
        return renewed

    def cancel(self, token_text: str, canceller: str) -> None:
        """Cancel a token: ``canceller`` (a short name) must be its owner or its renewer."""
        self._collect(self._now())
        _token, ident = _parse(token_text)
        if not ident.owner:
            raise InvalidToken(f"Token with no owner ({ident})")
        if canceller != short_name(ident.owner) and (
            not ident.renewer or canceller != ident.renewer
        ):
            raise TokenAccessDenied(f"{canceller} is not authorized to cancel the token ({ident})")
        if not self._secrets.remove_token(ident.store_key()):
            raise InvalidToken(f"Token not found ({ident})")
        log.info("delegation_token_cancelled", token=str(ident), by=canceller)

    def login(self, identifier: bytes) -> TokenLogin:
        """What a token login (SASL DIGEST-MD5) with ``identifier`` is checked against: the
        owner and the password kept for it. InvalidToken when it is unknown or expired."""
        now = self._now()
        try:
            ident = TokenIdentifier.decode(identifier)
        except TokenFormatError as exc:
            raise InvalidToken(f"not a delegation token identifier: {exc}") from None
        stored = self._secrets.get_token(ident.store_key())
        if not stored:
            raise InvalidToken(f"token expired or does not exist: {ident}")
        record = _record(stored)
        deadline = min(record.renew_date, ident.max_date)
        if deadline < now:
            raise InvalidToken(
                f"token ({ident}) is expired, current time: {format_time(now)} expected "
                f"renewal time: {format_time(deadline)}"
            )
        real_user = short_name(ident.real_user) if ident.real_user else ""
        if real_user == short_name(ident.owner):
            real_user = ""
        return TokenLogin(ident.owner, record.password, real_user)

    # -- master keys and collection ----------------------------------------------------------

    def _current_key(self, now: int) -> MasterKey:
        """This process's current master key, a new one when it is due."""
        with self._lock:
            due = self._rolled_at + _ms(self.lifetimes.key_update_interval)
            if self._current is None or now >= due:
                self._current = self._roll(now)
                self._rolled_at = now
            return self._current

    def _roll(self, now: int) -> MasterKey:
        lifetimes = self.lifetimes
        expiry = now + _ms(lifetimes.key_update_interval) + _ms(lifetimes.max_lifetime)
        secret = random_bytes.token_bytes(KEY_BYTES)
        # As HMS: the key is stored first, then rewritten with the number the store gave it.
        number = self._secrets.add_master_key(MasterKey(0, expiry, secret).encode())
        key = MasterKey(number, expiry, secret)
        self._secrets.update_master_key(number, key.encode())
        self._keys[number] = key
        log.info("delegation_master_key_new", key_id=number, expires=format_time(expiry))
        return key

    def _key(self, key_id: int, now: int) -> MasterKey | None:
        """The master key of that id (from the store when not seen yet), unless expired."""
        key = self._keys.get(key_id)
        if key is None:
            text = self._secrets.master_key(key_id)
            if text is None:
                return None
            try:
                stored = MasterKey.decode(text)
            except TokenFormatError:
                return None
            key = MasterKey(key_id, stored.expiry_date, stored.secret)
            with self._lock:
                self._keys[key_id] = key
        return key if key.expiry_date >= now else None

    def _collect(self, now: int) -> None:
        """Remove expired tokens and master keys from the store, at most every gc_interval."""
        with self._lock:
            if now < self._next_gc:
                return
            self._next_gc = now + _ms(self.lifetimes.gc_interval)
            current = self._current.key_id if self._current is not None else None
        removed = 0
        for identifier in self._secrets.token_identifiers():
            if self._expired_token(identifier, now):
                removed += self._secrets.remove_token(identifier)
        for text in self._secrets.master_keys():
            try:
                key = MasterKey.decode(text)
            except TokenFormatError:
                continue  # not ours to judge
            if key.key_id and key.key_id != current and key.expiry_date < now:
                self._secrets.remove_master_key(key.key_id)
                self._keys.pop(key.key_id, None)
        if removed:
            log.info("delegation_tokens_expired", removed=removed)

    def _expired_token(self, identifier: str, now: int) -> bool:
        try:
            ident = TokenIdentifier.decode(b64_decode(identifier))
            if ident.max_date < now:
                return True
            stored = self._secrets.get_token(identifier)
            return bool(stored) and _record(stored).renew_date < now
        except (TokenFormatError, InvalidToken):
            return False  # a record another program wrote: left alone

    def _now(self) -> int:
        return int(self._clock() * 1000)


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _parse(token_text: str) -> tuple[Token, TokenIdentifier]:
    """A token's string form decoded, with its identifier; InvalidToken when it is none."""
    try:
        token = Token.from_url_string(token_text or "")
        return token, TokenIdentifier.decode(token.identifier)
    except TokenFormatError as exc:
        raise InvalidToken(f"not a delegation token: {exc}") from None


def _record(stored: str) -> StoredToken:
    try:
        return StoredToken.decode(stored)
    except TokenFormatError as exc:
        raise InvalidToken(f"a stored token record that cannot be read: {exc}") from None
