"""What the client subcommands share: the table argument, the connection to a running
metastore (with its login options) with its errors printed the same way, and the number types
of options."""

from __future__ import annotations

import argparse
import getpass
import math
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

if TYPE_CHECKING:
    from metastore_server.client import MetastoreClient

DEFAULT_URI = "thrift://127.0.0.1:9083"
T = TypeVar("T")


def split_table(command: str, text: str) -> tuple[str, str] | None:
    """(db, table) of ``db.table``; None (the error printed) when it is not that."""
    db, sep, table = text.partition(".")
    if not sep or not db or not table:
        print(f"{command}: the table must be db.table, not {text!r}", file=sys.stderr)
        return None
    return db, table


#: The environment variable the password of ``--auth plain`` is read from, by default.
PASSWORD_ENV = "METASTORE_PASSWORD"
#: What a client without a login hears from a metastore that wants one (an ERROR frame).
NEEDS_LOGIN_HINT = "is it a metastore that wants a login (--auth plain or kerberos)?"


def not_thrift_errors() -> tuple[type[Exception], ...]:
    """The errors of a reply that is no Thrift message (a SASL server's refusal, say)."""
    from thriftpy2.protocol.exc import TProtocolException

    try:
        from thriftpy2.protocol.cybin import ProtocolError
    except ImportError:  # pragma: no cover - thriftpy2 built without Cython
        return (TProtocolException,)
    return (TProtocolException, ProtocolError)


class _RefusePassword(argparse.Action):
    """``--password``: refused, without repeating what was given (``default``: the variable
    to use instead, ``const``: the option naming another)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:  # fmt: skip
        parser.error(f"{option_string} is not taken: a password on the command line is seen by "
                     f"ps and kept in shell history; put it in ${self.default} (or {self.const} "
                     "NAME), or run on a terminal to be asked for it")  # fmt: skip


def add_login(parser: argparse.ArgumentParser, prefix: str = "", side: str = "") -> None:
    """The options that log in to a metastore that authenticates clients: ``--auth``,
    ``--user``, ``--password-env``, ``--kerberos-service``, ``--kerberos-host``, ``--sasl-qop``,
    ``--tls-ca``; with ``prefix`` (``from-``), ``--from-auth`` and so on, for ``side``."""
    group = parser.add_argument_group(f"login to {side}" if side else "login")
    auth = f"--{prefix}auth"
    group.add_argument(
        auth,
        choices=("none", "plain", "kerberos"),
        default="none",
        help=f"how to log in{f' to {side}' if side else ''}: none (default); plain (SASL "
        f"PLAIN, user and password, as serve --auth password or ldap; use --{prefix}tls-ca with "
        "it); kerberos (SASL GSSAPI with this process's Kerberos ticket, as serve --auth "
        "kerberos or an HMS with SASL)",
    )
    group.add_argument(
        f"--{prefix}user", default="", metavar="NAME", help=f"{auth} plain: the user"
    )
    default_env = f"METASTORE_{prefix.rstrip('-').upper()}_PASSWORD" if prefix else PASSWORD_ENV
    group.add_argument(f"--{prefix}password", action=_RefusePassword, default=default_env,
                       const=f"--{prefix}password-env", dest=f"{prefix}refused_password",
                       help=argparse.SUPPRESS)  # fmt: skip
    group.add_argument(
        f"--{prefix}password-env",
        default=default_env,
        metavar="NAME",
        help=f"{auth} plain: the environment variable holding the password (default "
        "%(default)s); when it is not set the password is asked for on the terminal. It is "
        "never a command-line argument",
    )
    group.add_argument(
        f"--{prefix}kerberos-service",
        default="hive",
        metavar="NAME",
        help=f"{auth} kerberos: the service of the metastore's principal (default "
        "%(default)s, as hive/_HOST@REALM)",
    )
    group.add_argument(
        f"--{prefix}kerberos-host",
        metavar="HOST",
        help=f"{auth} kerberos: the host of the metastore's principal (default: the URI's host)",
    )
    group.add_argument(
        f"--{prefix}sasl-qop",
        choices=("auth", "auth-int", "auth-conf"),
        help=f"{auth} kerberos: the protection asked for after the login (default: the "
        "strongest the metastore offers)",
    )
    group.add_argument(
        f"--{prefix}tls-ca", metavar="PEM", help="connect with TLS, trusting this CA file"
    )


def login_options(
    command: str, args: argparse.Namespace, prefix: str = "", err: TextIO | None = None
) -> dict[str, Any] | None:
    """The keyword arguments of ``MetastoreClient`` for the options of :func:`add_login`; None
    (the error printed on ``err``, standard error by default) when a password is needed and
    cannot be had."""
    err = err or sys.stderr

    def option(name: str) -> Any:
        return getattr(args, (prefix + name).replace("-", "_"))

    options: dict[str, Any] = {"tls_ca": option("tls-ca")}
    auth = option("auth")
    if auth == "none":
        return options
    options.update(auth=auth, kerberos_service=option("kerberos-service"),
                   kerberos_host=option("kerberos-host"), sasl_qop=option("sasl-qop"))  # fmt: skip
    if auth == "plain":
        user, env = option("user"), option("password-env")
        if not user:
            print(f"{command}: --{prefix}auth plain needs --{prefix}user", file=err)
            return None
        password = os.environ.get(env)
        if password is None and sys.stdin.isatty():
            password = getpass.getpass(f"password of {user}: ")
        if not password:
            print(f"{command}: --{prefix}auth plain: no password (set it in ${env}, or run on a "
                  "terminal to be asked for it)", file=err)  # fmt: skip
            return None
        options.update(user=user, password=password)
    return options


def connect(command: str, uri: str, login: dict[str, Any] | None = None) -> MetastoreClient | None:
    """A client of the metastore at ``uri``, logged in with ``login`` (:func:`login_options`);
    None (the error printed) when the URI is bad or the metastore cannot be reached."""
    from thriftpy2.transport import TTransportException

    from metastore_server.client import MetastoreClient

    try:
        return MetastoreClient.from_uri(uri, **(login or {}))
    except ValueError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
    except TTransportException as exc:
        if "Bad status" in str(exc) or "SASL" in str(exc):
            print(f"{command}: {uri} refused the login: {exc}", file=sys.stderr)
        else:
            print(f"{command}: cannot reach {uri}: {_connect_reason(exc)}", file=sys.stderr)
            print(f"{command}: {UNREACHABLE_HINT}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - any connection failure is reported the same way
        print(f"{command}: cannot reach {uri}: {_connect_reason(exc)}", file=sys.stderr)
        print(f"{command}: {UNREACHABLE_HINT}", file=sys.stderr)
    return None


UNREACHABLE_HINT = (
    "is a metastore running there? Start one with `metastore-server serve` (or `make run`), "
    "or point --uri at one"
)


def _connect_reason(exc: BaseException) -> str:
    """A connection failure in words (thriftpy2 wraps the OS error in its message)."""
    text = getattr(exc, "message", None) or str(exc)
    if "Could not connect" in text:
        return "connection refused"
    if isinstance(exc, TimeoutError) or "timed out" in text:
        return "timed out"
    return text


def ask(
    command: str, uri: str, call: Callable[[MetastoreClient], T],
    args: argparse.Namespace | None = None,
) -> tuple[int, T | None]:  # fmt: skip
    """Run ``call`` on a client of the metastore at ``uri`` (logged in as the options of
    :func:`add_login` in ``args`` say): (0, its answer), or (exit code, None) with the error
    printed: 1 when the metastore refuses, 2 when it cannot be reached or logged in to."""
    from thriftpy2.thrift import TApplicationException
    from thriftpy2.transport import TTransportException

    from metastore_server.thrift_api import hms

    login = login_options(command, args) if args is not None else {}
    if login is None:
        return 2, None
    client = connect(command, uri, login)
    if client is None:
        return 2, None
    try:
        with client:
            return 0, call(client)
    except (
        hms.MetaException,
        hms.NoSuchObjectException,
        hms.AlreadyExistsException,
        hms.InvalidObjectException,
        hms.InvalidOperationException,
    ) as exc:
        print(f"{command}: {exc.message}", file=sys.stderr)
        return 1, None
    except TApplicationException as exc:  # e.g. a metastore without our extension
        print(f"{command}: the metastore refused the call: {exc}", file=sys.stderr)
        return 1, None
    except (TTransportException, OSError) as exc:
        print(f"{command}: connection to {uri} failed: {exc}", file=sys.stderr)
        return 2, None
    except not_thrift_errors() as exc:
        print(f"{command}: {uri} answered with no Thrift reply ({exc}): {NEEDS_LOGIN_HINT}",
              file=sys.stderr)  # fmt: skip
        return 2, None


def add_uri_and_format(parser: argparse.ArgumentParser) -> None:
    """The ``--uri`` and ``--format text|json`` options every query command takes."""
    parser.add_argument("--uri", default=DEFAULT_URI, help="metastore to ask (default %(default)s)")
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="human-readable text or JSON (default %(default)s)",
    )
    add_login(parser)


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None


def positive_int(text: str) -> int:
    """An option's whole number of at least 1 (argparse ``type``)."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def non_negative_int(text: str) -> int:
    """An option's whole number of at least 0 (argparse ``type``)."""
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


def positive_number(text: str) -> float:
    """An option's finite number greater than 0, e.g. seconds (argparse ``type``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, not {text!r}")
    return value
