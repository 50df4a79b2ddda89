"""The console script's entry (metastore_server.cli.launch): what it does before the command
line's own code runs."""

from __future__ import annotations

import sys
import types

import pytest

from metastore_server.cli import launch


class _Interrupted(types.ModuleType):
    """A module whose loading is cut by Ctrl-C when its ``main`` is taken."""

    def __getattr__(self, name: str) -> object:
        raise KeyboardInterrupt


def test_ctrl_c_while_the_server_loads_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "metastore_server.cli.main", _Interrupted("main"))
    assert launch.main(["serve"]) == 130
    err = capsys.readouterr().err
    assert err == "metastore-server: interrupted while starting; nothing was done\n"


def test_a_client_only_install_is_told_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(launch, "missing_server_modules", lambda: ["structlog"])
    assert launch.main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "structlog missing" in err and "pip install 'hbase-metastore[server]'" in err


def test_the_server_modules_are_installed_here() -> None:
    assert launch.missing_server_modules() == []
