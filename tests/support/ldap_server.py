"""A real OpenLDAP server for tests: Debian's ``slapd`` (``.ci/run`` installs it) on a free
loopback port, with a throw-away database made by the test (a ``slapd.conf`` and an LDIF loaded
with ``slapadd`` before the start).

``with LdapServer(workdir) as ldap:`` starts it with the entries of :data:`USERS` and
:data:`GROUPS` under :data:`SUFFIX`; ``ldap.url`` is its ``ldap://`` URL, ``ldap.stop()`` stops it
(logins against it then fail). ``tls=(cert, key)`` also offers StartTLS with that certificate,
and ``ldap.ldaps_url`` (TLS from the first byte) on a second port.
``LDAP_SKIP_REASON`` says why tests that need one skip (None when slapd is installed).
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from .net import LOOPBACK, free_port

SUFFIX = "dc=example,dc=com"
PEOPLE = f"ou=people,{SUFFIX}"
GROUPS_BASE = f"ou=groups,{SUFFIX}"
#: The search user (cn=reader) and its password.
READER_DN, READER_PASSWORD = f"cn=reader,{SUFFIX}", "reader-secret"
#: The directory's administrator (its rootdn), who may change entries while it runs.
ADMIN_DN, ADMIN_PASSWORD = f"cn=admin,{SUFFIX}", "admin-secret"
#: uid -> password. ``x,y`` (a comma) and ``*`` (a filter wildcard) find their own entries only
#: when names are escaped; ``*`` is in no group, ``carol`` only in ``others``.
USERS = {"alice": "wonderland", "bob": "builder", "carol": "carrot", "x,y": "comma", "*": "star"}
#: group cn -> member uids (groupOfNames, members by DN).
GROUPS = {"metastore-users": ("alice", "bob", "x,y"), "others": ("carol",)}

_PROGRAMS = ("slapd", "slapadd")
_SCHEMAS = ("core", "cosine", "inetorgperson", "nis")
_SCHEMA_DIR = Path("/etc/ldap/schema")
_MODULE_DIR = Path("/usr/lib/ldap")


def _program(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in ("/usr/sbin", "/usr/bin", "/sbin"):
        if (Path(folder) / name).exists():
            return str(Path(folder) / name)
    return None


def _skip_reason() -> str | None:
    missing = [name for name in _PROGRAMS if _program(name) is None]
    missing += [f"{s}.schema" for s in _SCHEMAS if not (_SCHEMA_DIR / f"{s}.schema").exists()]
    if missing:
        return (
            f"no OpenLDAP server here ({', '.join(missing)} not found): install Debian's slapd "
            "and ldap-utils (.ci/run does)"
        )
    return None


#: Why tests needing an LDAP server skip here (None: they run).
LDAP_SKIP_REASON = _skip_reason()


def user_dn(uid: str) -> str:
    """The DN of user ``uid`` (``,`` and the like escaped)."""
    escaped = "".join(f"\\{c}" if c in ',+"\\<>;=' else c for c in uid)
    return f"uid={escaped},{PEOPLE}"


def ssha(password: str) -> str:
    """An OpenLDAP ``{SSHA}`` userPassword value."""
    salt = os.urandom(8)
    digest = hashlib.sha1(password.encode() + salt).digest()
    return "{SSHA}" + base64.b64encode(digest + salt).decode()


def _ldif() -> str:
    entries = [
        f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example",
        f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people",
        f"dn: {GROUPS_BASE}\nobjectClass: organizationalUnit\nou: groups",
        f"dn: {READER_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\n"
        f"cn: reader\nuserPassword: {ssha(READER_PASSWORD)}",
    ]
    for number, (uid, password) in enumerate(USERS.items(), 1):
        entries.append(
            f"dn: {user_dn(uid)}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid}\n"
            f"sn: user{number}\nuserPassword: {ssha(password)}"
        )
    for name, members in GROUPS.items():
        lines = [f"dn: cn={name},{GROUPS_BASE}", "objectClass: groupOfNames", f"cn: {name}"]
        lines += [f"member: {user_dn(uid)}" for uid in members]
        entries.append("\n".join(lines))
    return "\n\n".join(entries) + "\n"


class LdapServer:
    """A running throw-away slapd (see the module docstring)."""

    def __init__(self, workdir: Path, *, tls: tuple[Path, Path] | None = None) -> None:
        self.workdir = Path(workdir)
        self.port = free_port(LOOPBACK)
        self.url = f"ldap://{LOOPBACK}:{self.port}"
        self.tls = tls
        self.ldaps_url = f"ldaps://{LOOPBACK}:{free_port(LOOPBACK)}" if tls else ""
        self.config = self.workdir / "slapd.conf"
        self._process: subprocess.Popen[bytes] | None = None

    def _write_config(self) -> None:
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        lines = [f"include {_SCHEMA_DIR / f'{s}.schema'}" for s in _SCHEMAS]
        lines += [
            f"pidfile {self.workdir / 'slapd.pid'}",
            f"argsfile {self.workdir / 'slapd.args'}",
        ]
        if (_MODULE_DIR / "back_mdb.la").exists() or (_MODULE_DIR / "back_mdb.so").exists():
            lines += [f"modulepath {_MODULE_DIR}", "moduleload back_mdb"]
        if self.tls is not None:
            cert, key = self.tls
            lines += [f"TLSCertificateFile {cert}", f"TLSCertificateKeyFile {key}"]
        lines += [
            "database mdb",
            "maxsize 16777216",
            f'suffix "{SUFFIX}"',
            f'rootdn "{ADMIN_DN}"',
            f"rootpw {ssha(ADMIN_PASSWORD)}",
            f"directory {data}",
            "access to attrs=userPassword by anonymous auth by self read by * none",
            "access to * by * read",
        ]
        self.config.write_text("\n".join(lines) + "\n")
        (self.workdir / "data.ldif").write_text(_ldif())

    def _run(self, *args: str) -> None:
        program = _program(args[0])
        if program is None:
            raise RuntimeError(f"{args[0]} is not installed")
        done = subprocess.run([program, *args[1:]], capture_output=True, text=True, timeout=60,
                              check=False)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()}")

    def start(self) -> LdapServer:
        """Make the database and start slapd on loopback (waits until it accepts)."""
        self._write_config()
        self._run("slapadd", "-f", str(self.config), "-l", str(self.workdir / "data.ldif"))
        program = _program("slapd")
        assert program is not None
        log = (self.workdir / "slapd.log").open("wb")
        self._process = subprocess.Popen(
            [program, "-f", str(self.config), "-h", f"{self.url}/ {self.ldaps_url}", "-d", "0"],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection((LOOPBACK, self.port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline or self._process.poll() is not None:
                    self.stop()
                    text = (self.workdir / "slapd.log").read_text(errors="replace")
                    raise RuntimeError(f"slapd did not start: {text[-2000:]}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop slapd."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def __enter__(self) -> LdapServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:  # fmt: skip
        self.stop()
