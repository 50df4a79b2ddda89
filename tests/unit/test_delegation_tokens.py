"""The token secret manager (``catalog/security/delegation``) over a real embedded store, with a
clock the test moves: tokens issued, checked, renewed up to their maximum date, cancelled,
expired and collected; master keys rotated; two managers on one store trusting each other."""

from __future__ import annotations

from pathlib import Path

import pytest
from metastore_server.storage.open import open_store

from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.security.delegation import (
    DelegationTokens,
    InvalidToken,
    TokenAccessDenied,
    TokenLifetimes,
)
from metastore_server.catalog.security.hadoop_tokens import (
    MasterKey,
    Token,
    TokenIdentifier,
    b64_decode,
)

HOUR = 3600.0
LIFETIMES = TokenLifetimes(key_update_interval=24 * HOUR, renew_interval=24 * HOUR,
                           max_lifetime=72 * HOUR, gc_interval=HOUR)  # fmt: skip
START = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def catalog(tmp_path: Path) -> Catalog:
    store = open_store(f"sqlite:///{tmp_path / 'm.db'}")
    made = Catalog(store, Warehouse(tmp_path / "wh"), data=DataOperations(enabled=False))
    yield made
    made.close()


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def tokens(catalog: Catalog, clock: Clock) -> DelegationTokens:
    return DelegationTokens(catalog.secrets, LIFETIMES, clock)


def identifier_of(text: str) -> TokenIdentifier:
    return TokenIdentifier.decode(Token.from_url_string(text).identifier)


def test_an_issued_token_names_its_owner_and_logs_in(tokens: DelegationTokens) -> None:
    text = tokens.issue("alice", "alice@METASTORE.TEST")
    token = Token.from_url_string(text)
    ident = identifier_of(text)
    assert (ident.owner, ident.renewer, ident.real_user) == ("alice", "alice", "")
    assert ident.issue_date == START * 1000
    assert ident.max_date == (START + 72 * HOUR) * 1000
    assert token.kind == "HIVE_DELEGATION_TOKEN" and token.service == ""
    login = tokens.login(token.identifier)
    assert (login.owner, login.password) == ("alice", token.password)


def test_tokens_and_keys_are_kept_as_hms_keeps_them(
    tokens: DelegationTokens, catalog: Catalog
) -> None:
    text = tokens.issue("alice", "alice")
    ident = identifier_of(text)
    assert catalog.secrets.token_identifiers() == [ident.store_key()]
    keys = [MasterKey.decode(k) for k in catalog.secrets.master_keys()]
    assert [k.key_id for k in keys] == [ident.master_key_id]
    assert keys[0].expiry_date == (START + 24 * HOUR + 72 * HOUR) * 1000
    assert b64_decode(ident.store_key()) == Token.from_url_string(text).identifier


def test_renewal_moves_the_deadline_but_never_past_the_maximum(
    tokens: DelegationTokens, clock: Clock
) -> None:
    text = tokens.issue("alice", "alice")
    clock.now += 20 * HOUR
    assert tokens.renew(text, "alice") == (clock.now + 24 * HOUR) * 1000
    clock.now += 23 * HOUR  # past the first deadline, within the renewed one
    tokens.login(Token.from_url_string(text).identifier)
    assert tokens.renew(text, "alice") == (clock.now + 24 * HOUR) * 1000
    clock.now = START + 66 * HOUR
    assert tokens.renew(text, "alice") == (START + 72 * HOUR) * 1000
    clock.now = START + 72 * HOUR + 1
    with pytest.raises(InvalidToken, match="is expired|tried to renew an expired token"):
        tokens.login(Token.from_url_string(text).identifier)
    with pytest.raises(InvalidToken):
        tokens.renew(text, "alice")


def test_a_token_not_renewed_in_time_is_refused_and_collected(
    tokens: DelegationTokens, clock: Clock, catalog: Catalog
) -> None:
    text = tokens.issue("alice", "alice")
    clock.now += 24 * HOUR + 1
    with pytest.raises(InvalidToken, match=r"is expired, current time: .* expected renewal time"):
        tokens.login(Token.from_url_string(text).identifier)
    with pytest.raises(InvalidToken, match="token expired or does not exist"):
        tokens.renew(text, "alice")
    tokens.issue("bob", "bob")  # use runs the collection
    owners = [TokenIdentifier.decode(b64_decode(i)).owner
              for i in catalog.secrets.token_identifiers()]  # fmt: skip
    assert owners == ["bob"]


def test_only_the_renewer_renews(tokens: DelegationTokens) -> None:
    text = tokens.issue("alice", "hive/etl.example.com@REALM")
    assert identifier_of(text).renewer == "hive"
    with pytest.raises(TokenAccessDenied, match=r"^alice tries to renew a token \(HIVE_DELEGATION"
                       r"_TOKEN owner=alice, .*\) with non-matching renewer hive$"):  # fmt: skip
        tokens.renew(text, "alice")
    assert tokens.renew(text, "hive") > 0
    unrenewable = tokens.issue("alice", "")
    with pytest.raises(TokenAccessDenied, match="without a renewer"):
        tokens.renew(unrenewable, "alice")


def test_a_forged_token_is_refused(tokens: DelegationTokens) -> None:
    token = Token.from_url_string(tokens.issue("alice", "alice"))
    forged = Token(token.identifier, bytes(b ^ 1 for b in token.password)).to_url_string()
    with pytest.raises(TokenAccessDenied, match="with wrong password"):
        tokens.renew(forged, "alice")
    ident = TokenIdentifier.decode(token.identifier)
    other = TokenIdentifier("mallory", *list(vars(ident).values())[1:])
    with pytest.raises(InvalidToken, match="token expired or does not exist: .*owner=mallory"):
        tokens.login(other.encode())
    with pytest.raises(InvalidToken, match="not a delegation token"):
        tokens.renew("garbage!", "alice")


def test_cancel_by_owner_or_renewer_only(tokens: DelegationTokens) -> None:
    text = tokens.issue("alice", "oozie")
    with pytest.raises(TokenAccessDenied, match=r"^mallory is not authorized to cancel the token"):
        tokens.cancel(text, "mallory")
    tokens.cancel(text, "oozie")
    with pytest.raises(InvalidToken, match=r"^Token not found \(HIVE_DELEGATION_TOKEN owner=alice"):
        tokens.cancel(text, "alice")
    with pytest.raises(InvalidToken, match="token expired or does not exist"):
        tokens.login(Token.from_url_string(text).identifier)
    second = tokens.issue("alice", "oozie")
    tokens.cancel(second, "alice")


def test_master_keys_rotate_and_old_tokens_still_work(
    tokens: DelegationTokens, clock: Clock, catalog: Catalog
) -> None:
    first = tokens.issue("alice", "alice")
    clock.now += 23 * HOUR
    tokens.renew(first, "alice")
    clock.now += 2 * HOUR  # the key is a day old: new tokens get a new one
    second = tokens.issue("alice", "alice")
    assert identifier_of(second).master_key_id != identifier_of(first).master_key_id
    assert len(catalog.secrets.master_keys()) == 2
    clock.now += 10 * HOUR
    assert tokens.renew(first, "alice") > 0  # signed by the old key, still checked
    # The old key outlives every token it signed, then goes.
    clock.now = START + 24 * HOUR + 72 * HOUR + 2 * HOUR
    tokens.issue("carol", "carol")
    ids = [MasterKey.decode(k).key_id for k in catalog.secrets.master_keys()]
    assert identifier_of(first).master_key_id not in ids


def test_two_managers_on_one_store_trust_each_other(catalog: Catalog, clock: Clock) -> None:
    one = DelegationTokens(catalog.secrets, LIFETIMES, clock)
    two = DelegationTokens(catalog.secrets, LIFETIMES, clock)
    text = one.issue("alice", "alice")
    token = Token.from_url_string(text)
    assert two.login(token.identifier).password == token.password
    assert two.renew(text, "alice") > 0
    two.cancel(text, "alice")
    with pytest.raises(InvalidToken):
        one.login(token.identifier)
