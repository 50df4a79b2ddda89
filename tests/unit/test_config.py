"""Server settings: a TOML config file, then METASTORE_* variables, then flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore_server.cli import main as cli
from metastore_server.cli import serving
from metastore_server.server.config import ServerConfig


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "metastore.toml"
    path.write_text(text)
    return path


def test_file_settings_and_hive_values(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'port = 9183\n[server]\nstorage = "hbase://h:9090?prefix=x_"\n'
        'partition-request-limit = 500\n[hive]\n"hive.exec.dynamic.partition.mode" = "nonstrict"\n',
    )
    config = ServerConfig.from_file(path)
    assert (config.port, config.storage, config.partition_request_limit) == (
        9183,
        "hbase://h:9090?prefix=x_",
        500,
    )
    assert config.extra_config == {"hive.exec.dynamic.partition.mode": "nonstrict"}


@pytest.mark.parametrize(
    ("text", "message"),
    [("prot = 1\n", "unknown setting 'prot'"), ('port = "9183"\n', "port must be a whole number")],
)
def test_bad_file_settings_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ServerConfig.from_file(write(tmp_path, text))


def test_flags_beat_environment_beat_file(tmp_path: Path, monkeypatch) -> None:
    path = write(tmp_path, 'port = 9183\nhost = "127.0.0.2"\nlog_level = "debug"\n')
    monkeypatch.setenv("METASTORE_PORT", "9184")
    argv = ["serve", "--config", str(path), "--log-level", "warning"]
    defaults = cli._file_defaults(argv)
    args = cli.build_parser(defaults).parse_args(argv)
    config = cli._config_from_args(args, defaults)
    assert (config.host, config.port, config.log_level) == ("127.0.0.2", 9184, "warning")


def test_unreadable_config_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert cli.main(["serve", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "config:" in capsys.readouterr().err


def test_writer_lease_setting(tmp_path) -> None:
    assert ServerConfig().writer_lease == 30.0
    assert ServerConfig.from_env({"METASTORE_WRITER_LEASE": "2.5"}).writer_lease == 2.5
    file = tmp_path / "server.toml"
    file.write_text("writer_lease = 5\n")
    assert ServerConfig.from_file(file).writer_lease == 5.0
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="writer_lease must be a positive number"):
            ServerConfig(writer_lease=bad).validate()


def test_data_operation_settings(tmp_path: Path, monkeypatch) -> None:
    path = write(
        tmp_path,
        'data_operations = "off"\ntrash_root = "file:/trash"\n'
        '[filesystems.s3]\nendpoint_url = "http://127.0.0.1:9000"\n'
        "config_kwargs = { s3 = { addressing_style = \"path\" } }\n",
    )
    monkeypatch.setenv("METASTORE_S3_REGION", "eu-west-1")
    argv = ["serve", "--config", str(path), "--fs-option", "s3.anon=false",
            "--fs-option", "gs.project=p1"]  # fmt: skip
    defaults = cli._file_defaults(argv)
    config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
    assert (config.data_operations, config.trash_roots()) == ("off", ["file:/trash"])
    assert config.filesystem_options() == {
        "s3": {
            "endpoint_url": "http://127.0.0.1:9000",
            "config_kwargs": {"s3": {"addressing_style": "path"}},
            "anon": False,
            "client_kwargs": {"region_name": "eu-west-1"},
        },
        "gs": {"project": "p1"},
    }
    flags = cli.build_parser(defaults).parse_args(["serve", "--s3-endpoint", "http://h:1"])
    assert cli._config_from_args(flags, defaults).filesystem_options()["s3"]["endpoint_url"] == (
        "http://h:1"  # the flag wins over the file, as every flag does
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--data-operations", "maybe"], "invalid choice"),
        (["--fs-option", "noscheme=1"], "--fs-option takes SCHEME.KEY=VALUE"),
    ],
)
def test_bad_data_operation_flags_are_named(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", *argv])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_a_trash_root_no_file_system_serves_stops_the_server(tmp_path: Path, capsys) -> None:
    argv = ["serve", "--port", "0", "--storage", f"sqlite:///{tmp_path}/m.db",
            "--warehouse", str(tmp_path / "w"), "--trash-root", "nosuch://x/trash"]  # fmt: skip
    defaults = cli._file_defaults(argv)
    config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
    # (serve itself: main would also point the process's logging at this test's stderr)
    assert serving.serve(config) == 2
    assert "trash root: No FileSystem for scheme: nosuch" in capsys.readouterr().err


def test_bad_filesystems_table_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\[filesystems.SCHEME\] tables"):
        ServerConfig.from_file(write(tmp_path, "[filesystems]\ns3 = 1\n"))


def test_delegation_token_lifetimes(tmp_path: Path) -> None:
    defaults = ServerConfig()
    assert (defaults.delegation_key_update_interval, defaults.delegation_token_renew_interval,
            defaults.delegation_token_max_lifetime) == (86400.0, 86400.0, 604800.0)  # fmt: skip
    env = {"METASTORE_DELEGATION_TOKEN_RENEW_INTERVAL": "600"}
    assert ServerConfig.from_env(env).delegation_token_renew_interval == 600.0
    file = write(tmp_path, "delegation_token_max_lifetime = 3600\n")
    assert ServerConfig.from_file(file).delegation_token_max_lifetime == 3600.0
    args = cli.build_parser(ServerConfig()).parse_args(
        ["serve", "--delegation-key-update-interval", "120"]
    )
    assert args.delegation_key_update_interval == 120.0
    for bad in (0.0, -5.0, float("inf")):
        with pytest.raises(ValueError, match="delegation_key_update_interval must be a positive"):
            ServerConfig(delegation_key_update_interval=bad).validate()


def test_authorization_settings(tmp_path: Path, monkeypatch) -> None:
    path = write(tmp_path, 'authorization = "privileges"\nadmin_users = "hive"\n')
    monkeypatch.setenv("METASTORE_ADMIN_USERS", "hive,spark-admin")
    argv = ["serve", "--config", str(path)]
    defaults = cli._file_defaults(argv)
    config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
    assert (config.authorization, config.admin_users) == ("privileges", "hive,spark-admin")
    argv += ["--admin-users", "root"]
    config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
    assert config.admin_users == "root"
    with pytest.raises(SystemExit):
        cli.build_parser(defaults).parse_args(["serve", "--authorization", "everything"])
