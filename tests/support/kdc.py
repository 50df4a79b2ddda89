"""A real MIT Kerberos KDC for tests: a throw-away realm on loopback, made and started by the
test (Debian's ``krb5-kdc``; ``.ci/run`` installs it), with principals and keytabs made by
``kadmin.local``.

``with Kdc(workdir) as kdc:`` starts ``krb5kdc`` on a free loopback port; ``kdc.add_principal``
makes a principal (with a password, or a random key and a keytab), ``kdc.kinit`` gets a ticket
into a credentials cache of its own, and ``kdc.env`` is the environment (``KRB5_CONFIG``) that
makes the MIT libraries of this process and of its children use the realm. ``KDC_SKIP_REASON``
says why tests that need one skip (None when the KDC programs are installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType

from .net import LOOPBACK, free_port

REALM = "METASTORE.TEST"
_PROGRAMS = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit")
_SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")


def _program(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in _SBIN:
        path = Path(folder) / name
        if path.exists():
            return str(path)
    return None


def _skip_reason() -> str | None:
    missing = [name for name in _PROGRAMS if _program(name) is None]
    if missing:
        return (
            f"no MIT Kerberos KDC here ({', '.join(missing)} not found): install Debian's "
            "krb5-kdc, krb5-admin-server and krb5-user (.ci/run does)"
        )
    return None


#: Why tests needing a KDC skip here (None: they run).
KDC_SKIP_REASON = _skip_reason()


class Kdc:
    """A running throw-away KDC (see the module docstring)."""

    def __init__(self, workdir: Path, realm: str = REALM, clockskew: int | None = None) -> None:
        self.workdir = Path(workdir)
        self.realm = realm
        self.clockskew = clockskew  # seconds; None: the libraries' default (5 minutes)
        self.port = free_port(LOOPBACK)
        self.krb5_conf = self.workdir / "krb5.conf"
        self._process: subprocess.Popen[bytes] | None = None
        self.env = {**os.environ, "KRB5_CONFIG": str(self.krb5_conf),
                    "KRB5_KDC_PROFILE": str(self.workdir / "kdc.conf")}  # fmt: skip

    def _run(self, *args: str) -> str:
        program = _program(args[0])
        if program is None:
            raise RuntimeError(f"{args[0]} is not installed")
        done = subprocess.run([program, *args[1:]], env=self.env, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def _write_config(self) -> None:
        data = self.workdir / "kdc"
        data.mkdir(parents=True, exist_ok=True)
        skew = f" clockskew = {self.clockskew}\n" if self.clockskew is not None else ""
        self.krb5_conf.write_text(
            f"[libdefaults]\n default_realm = {self.realm}\n dns_lookup_kdc = false\n"
            f" dns_lookup_realm = false\n rdns = false\n dns_canonicalize_hostname = false\n"
            f" udp_preference_limit = 1\n"
            f" ticket_lifetime = 1h\n forwardable = true\n{skew}"
            f"[realms]\n {self.realm} = {{\n  kdc = {LOOPBACK}:{self.port}\n"
            f"  admin_server = {LOOPBACK}:{self.port + 1}\n }}\n"
        )
        (self.workdir / "kdc.conf").write_text(
            f"[kdcdefaults]\n kdc_ports = {self.port}\n kdc_tcp_ports = {self.port}\n"
            f"[realms]\n {self.realm} = {{\n  database_name = {data}/principal\n"
            f"  key_stash_file = {data}/stash\n  acl_file = {data}/kadm5.acl\n"
            f"  max_life = 1h\n  max_renewable_life = 2h\n }}\n"
        )
        (data / "kadm5.acl").write_text(f"*/admin@{self.realm} *\n")

    def start(self) -> Kdc:
        """Create the realm's database and start the KDC (waits until it answers)."""
        self._write_config()
        self._run("kdb5_util", "create", "-s", "-r", self.realm, "-P", "master-password")
        program = _program("krb5kdc")
        assert program is not None
        log = (self.workdir / "krb5kdc.log").open("wb")
        self._process = subprocess.Popen([program, "-n", "-r", self.realm], env=self.env,
                                         stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        self.add_principal("probe", password="probe")
        deadline = time.monotonic() + 30
        while True:  # the KDC answers once a ticket can be had
            try:
                self.kinit("probe", password="probe")
                return self
            except RuntimeError:
                if time.monotonic() > deadline or self._process.poll() is not None:
                    self.stop()
                    raise
                time.sleep(0.1)

    def add_principal(self, name: str, *, password: str | None = None,
                      max_life: str | None = None) -> str:  # fmt: skip
        """Make ``name`` (``user`` or ``service/host``) in the realm, with ``password`` or a
        random key, its tickets living at most ``max_life`` (``"4 seconds"``) if given; its
        full name."""
        key = ["-pw", password] if password is not None else ["-randkey"]
        life = ["-maxlife", f'"{max_life}"'] if max_life is not None else []
        self._run("kadmin.local", "-r", self.realm, "-q",
                  " ".join(["addprinc", *key, *life, f"{name}@{self.realm}"]))  # fmt: skip
        return f"{name}@{self.realm}"

    def keytab(self, name: str, path: Path) -> Path:
        """Write the keys of principal ``name`` to the keytab ``path`` (made with -randkey); the
        keys stay as they are, so keytabs written earlier still hold them."""
        self._run("kadmin.local", "-r", self.realm, "-q",
                  f"ktadd -norandkey -k {path} {name}@{self.realm}")  # fmt: skip
        return path

    def kinit(self, name: str, *, password: str | None = None, keytab: Path | None = None,
              cache: Path | None = None, lifetime: str | None = None) -> Path:  # fmt: skip
        """A ticket for ``name`` in the credentials cache ``cache`` (a file of its own by
        default), from a password or a keytab, asking for ``lifetime`` (kinit's ``-l``: ``4s``)
        if given; the cache's path."""
        cache = cache or self.workdir / f"cc_{name.replace('/', '_')}"
        args = ["kinit", "-c", f"FILE:{cache}", *(["-l", lifetime] if lifetime else [])]
        if keytab is not None:
            args += ["-k", "-t", str(keytab), f"{name}@{self.realm}"]
            self._run(*args)
            return cache
        program = _program("kinit")
        assert program is not None
        done = subprocess.run([program, *args[1:], f"{name}@{self.realm}"], env=self.env,
                              input=f"{password}\n", capture_output=True, text=True,
                              timeout=30, check=False)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"kinit {name} failed: {done.stderr.strip()}")
        return cache

    def stop(self) -> None:
        """Stop the KDC."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def __enter__(self) -> Kdc:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:  # fmt: skip
        self.stop()
