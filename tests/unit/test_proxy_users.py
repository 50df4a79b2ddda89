"""Proxy-user rules (Hadoop's hadoop.proxyuser.*): whom a superuser may act for (users,
groups, ``*``), from where (addresses, CIDR networks, host names, ``*``), the refusals'
wording, and the settings' forms (config file table, METASTORE_PROXY_USERS, --proxy-user)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from metastore_server.api.authorization.callers import os_groups
from metastore_server.api.proxy_users import (
    ImpersonationRefused,
    ProxyUsers,
    Resolver,
    parse_option,
    parse_rule,
)
from metastore_server.cli import main as cli
from metastore_server.server.config import ServerConfig, with_proxy_rules

GROUPS = {"alice": {"analysts", "staff"}, "bob": {"staff"}, "carol": {"finance"}}


def rules(resolver: Resolver | None = None, **specs: dict[str, object]) -> ProxyUsers:
    """Rules over the GROUPS table (users not in it have none, as unknown OS users)."""
    parsed = [parse_rule(superuser, spec) for superuser, spec in specs.items()]
    return ProxyUsers(parsed, groups_of=lambda user: GROUPS.get(user, set()), resolver=resolver)


def refused(proxy: ProxyUsers, real: str, user: str, address: str | None) -> str:
    with pytest.raises(ImpersonationRefused) as info:
        proxy.authorize(real, user, address)
    return str(info.value)


def test_users_named_only() -> None:
    proxy = rules(hive={"users": "alice, bob", "hosts": "*"})
    proxy.authorize("hive", "alice", "10.1.2.3")
    proxy.authorize("hive", "bob", "10.1.2.3")
    message = refused(proxy, "hive", "carol", "10.1.2.3")
    assert message == "User: hive is not allowed to impersonate carol"


def test_members_of_the_groups_named() -> None:
    proxy = rules(hive={"groups": ["analysts", "finance"], "hosts": ["*"]})
    proxy.authorize("hive", "alice", "10.1.2.3")
    proxy.authorize("hive", "carol", "10.1.2.3")
    assert refused(proxy, "hive", "bob", "10.1.2.3").endswith("impersonate bob")
    # A user the system does not know has no groups: a groups rule does not let it through.
    assert refused(proxy, "hive", "nobody-here", "10.1.2.3").endswith("impersonate nobody-here")


def test_users_or_groups_either_allows() -> None:
    proxy = rules(hive={"users": "bob", "groups": "finance", "hosts": "*"})
    proxy.authorize("hive", "bob", "10.0.0.1")
    proxy.authorize("hive", "carol", "10.0.0.1")
    refused(proxy, "hive", "alice", "10.0.0.1")


@pytest.mark.parametrize("key", ["users", "groups"])
def test_a_wildcard_allows_anyone_even_unknown_users(key: str) -> None:
    proxy = rules(trino={key: "*", "hosts": "*"})
    for user in ("alice", "carol", "nobody-here"):
        proxy.authorize("trino", user, "192.0.2.7")


def test_only_the_superuser_named_may_act_for_others() -> None:
    proxy = rules(hive={"groups": "*", "hosts": "*"})
    assert refused(proxy, "trino", "alice", "10.1.2.3") == (
        "User: trino is not allowed to impersonate alice"
    )
    assert refused(ProxyUsers(), "hive", "alice", "10.1.2.3").endswith("impersonate alice")


def test_hosts_by_address_and_network() -> None:
    proxy = rules(hive={"users": "alice", "hosts": "192.0.2.10, 10.0.0.0/8, 2001:db8::/32"})
    for address in ("192.0.2.10", "10.200.3.4", "::ffff:10.9.9.9", "2001:db8::42"):
        proxy.authorize("hive", "alice", address)
    for address in ("192.0.2.11", "11.0.0.1", "2001:db9::1", None):
        message = refused(proxy, "hive", "alice", address)
        assert message == f"Unauthorized connection for super-user: hive from IP {address}"


def test_users_are_checked_before_hosts() -> None:
    proxy = rules(hive={"users": "alice", "hosts": "10.0.0.0/8"})
    assert refused(proxy, "hive", "bob", "192.0.2.1").endswith("impersonate bob")


def test_hosts_by_name_both_ways() -> None:
    resolver = Resolver(
        names_of=lambda address: {"gw.example.com"} if address == "192.0.2.5" else set(),
        addresses_of=lambda name: {"192.0.2.6"} if name == "hs2.example.com" else set(),
    )
    proxy = rules(resolver, hive={"users": "alice", "hosts": "GW.example.com,hs2.example.com"})
    proxy.authorize("hive", "alice", "192.0.2.5")  # its address resolves back to the name
    proxy.authorize("hive", "alice", "192.0.2.6")  # the name resolves to its address
    refused(proxy, "hive", "alice", "192.0.2.7")


def test_a_host_name_through_the_real_resolver() -> None:
    proxy = ProxyUsers([parse_rule("hive", {"users": "alice", "hosts": "localhost"})])
    proxy.authorize("hive", "alice", "127.0.0.1")
    refused(proxy, "hive", "alice", "192.0.2.1")


def test_groups_come_from_the_operating_system() -> None:
    me = pwd.getpwuid(os.getuid()).pw_name
    mine = os_groups(me)
    assert mine, "the user running the tests has a primary group"
    proxy = ProxyUsers([parse_rule("hive", {"groups": mine[0], "hosts": "*"})])
    proxy.authorize("hive", me, "127.0.0.1")
    refused(proxy, "hive", "no-such-user-here", "127.0.0.1")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"users": "alice"}, "hosts is required"),
        ({"hosts": "*"}, "users or groups is required"),
        ({"users": " , ", "hosts": "*"}, "users or groups is required"),
        ({"users": "alice", "hosts": "10.0.0.0/33"}, "'10.0.0.0/33' is not a CIDR network"),
        ({"users": "alice", "hosts": "*,10.0.0.1"}, r"hosts: \* stands alone"),
        ({"users": "*,bob", "hosts": "*"}, r"users: \* stands alone"),
        ({"users": "alice", "hosts": "bad host!"}, "not an IP address, a CIDR network or a host"),
        ({"users": "alice", "hosts": "*", "host": "x"}, "unknown key 'host'"),
        ({"users": 3, "hosts": "*"}, "users must be a list of names"),
    ],
)
def test_bad_rules_are_named(spec: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_rule("hive", spec)


def test_a_superuser_is_a_short_name() -> None:
    with pytest.raises(ValueError, match="a superuser is a short user name"):
        parse_rule("hive/host@REALM", {"users": "*", "hosts": "*"})


def test_the_option_form() -> None:
    assert parse_option("hive:users=a,b;groups=g1; hosts=10.0.0.0/8,h.example.com") == (
        "hive",
        {"users": "a,b", "groups": "g1", "hosts": "10.0.0.0/8,h.example.com"},
    )
    for text, message in [
        ("hive", "takes SUPERUSER:"),
        (":users=a;hosts=*", "takes SUPERUSER:"),
        ("hive:users", "'users' is not KEY=VALUES"),
        ("hive:users=a;users=b;hosts=*", "users given twice"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_option(text)


def test_command_line_rules_replace_the_file_s(tmp_path: Path) -> None:
    base = {"hive": {"groups": ["*"], "hosts": ["*"]}, "trino": {"users": "x", "hosts": "*"}}
    merged = with_proxy_rules(base, ["hive:users=alice;hosts=127.0.0.1"])
    assert merged["hive"] == {"users": "alice", "hosts": "127.0.0.1"}
    assert merged["trino"] == base["trino"]
    with pytest.raises(ValueError, match="given twice"):
        with_proxy_rules({}, ["hive:users=a;hosts=*", "hive:users=b;hosts=*"])


def test_config_file_table_and_environment(tmp_path: Path) -> None:
    path = tmp_path / "metastore.toml"
    path.write_text(
        'auth = "password"\n[proxy_users.hive]\ngroups = ["*"]\nhosts = ["*"]\n'
        '[proxy_users.trino]\nusers = ["alice", "bob"]\nhosts = ["10.0.0.0/8", "localhost"]\n'
    )
    config = ServerConfig.from_file(path)
    proxy = config.proxy_user_rules()
    assert sorted(proxy.rules) == ["hive", "trino"]
    assert proxy.rules["trino"].users == frozenset({"alice", "bob"})
    env = {"METASTORE_PROXY_USERS": "impala:groups=etl;hosts=* hive:users=carol;hosts=*"}
    config = ServerConfig.from_env(env, base=config)
    assert config.proxy_user_rules().rules["hive"].users == frozenset({"carol"})
    assert sorted(config.proxy_users) == ["hive", "impala", "trino"]
    path.write_text("[proxy_users]\nhive = 3\n")
    with pytest.raises(ValueError, match=r"\[proxy_users.SUPERUSER\] tables"):
        ServerConfig.from_file(path)


def test_proxy_users_need_authentication() -> None:
    config = ServerConfig(proxy_users={"hive": {"groups": "*", "hosts": "*"}})
    with pytest.raises(ValueError, match="proxy users are set but auth is none"):
        config.validate()


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("hive:groups=*", "proxy user 'hive': hosts is required"),
        ("hive:users=a;hosts=10.0.0.0/33", "'10.0.0.0/33' is not a CIDR network"),
        ("hive", "--proxy-user takes SUPERUSER:"),
    ],
)
def test_a_bad_flag_stops_the_server_with_a_message(rule: str, message: str, capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", "--proxy-user", rule])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
