"""The password file of ``--auth password``: argon2 and bcrypt hashes, both verified; an unknown
user is checked against a dummy of the scheme and cost the file's users have; ``hash-password
--scheme``."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import bcrypt
import pytest
import structlog
from argon2 import PasswordHasher
from structlog.testing import capture_logs

from metastore_server.cli import main as cli
from metastore_server.server import passwords
from metastore_server.server.passwords import PasswordFile, hash_password, profile

#: Cheap hashes for the tests (the schemes' real costs take a fraction of a second each).
_ARGON2_CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


def _bcrypt(password: str, cost: int = 4, prefix: bytes = b"2b") -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(cost, prefix)).decode()


@pytest.fixture(autouse=True)
def fresh_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passwords, "log", structlog.get_logger(passwords.__name__))


@pytest.fixture()
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The hashes passwords are checked against, in order."""
    seen: list[str] = []
    real = passwords._matches

    def spy(hashed: str, password: str) -> bool:
        seen.append(hashed)
        return real(hashed, password)

    monkeypatch.setattr(passwords, "_matches", spy)
    return seen


def _file(tmp_path: Path, *lines: str) -> PasswordFile:
    path = tmp_path / "passwords"
    path.write_text("".join(f"{line}\n" for line in lines))
    return PasswordFile(str(path))


def test_both_schemes_are_made_and_verified(tmp_path: Path) -> None:
    argon, crypt = hash_password("wonderland"), hash_password("builder", "bcrypt")
    assert argon.startswith("$argon2id$") and crypt.startswith("$2b$12$")
    assert profile(crypt) == ("bcrypt", 12) and profile(argon)[0] == "argon2"  # type: ignore[index]
    users = _file(tmp_path, f"alice:{argon}", f"bob:{crypt}")
    assert users.verify("alice", "wonderland") is None
    assert users.verify("bob", "builder") is None
    assert users.verify("alice", "builder") == "wrong password"
    assert users.verify("bob", "wonderland") == "wrong password"
    assert users.verify("carol", "builder") == "unknown user"


@pytest.mark.parametrize("prefix", [b"2a", b"2b"])
def test_bcrypt_hashes_of_other_tools_are_taken(tmp_path: Path, prefix: bytes) -> None:
    made = _bcrypt("s3cret", prefix=prefix)
    users = _file(tmp_path, f"dave:{made}", f"erin:$2y${made[4:]}")
    assert users.verify("dave", "s3cret") is None
    assert users.verify("erin", "s3cret") is None  # ($2y$: PHP's name for the same hash)
    assert users.verify("dave", "S3cret") == "wrong password"


def test_bcrypt_passwords_past_72_bytes(tmp_path: Path, checked: list[str]) -> None:
    """hash-password refuses them; one whose first 72 bytes match is still wrong, after the
    same check as any other."""
    with pytest.raises(ValueError, match="at most 72 bytes of a password; this one has 73"):
        hash_password("x" * 73, "bcrypt")
    assert hash_password("é" * 36, "bcrypt")  # 72 bytes of UTF-8
    users = _file(tmp_path, f"frank:{_bcrypt('y' * 72)}")
    assert users.verify("frank", "y" * 72) is None
    assert users.verify("frank", "y" * 73) == "wrong password"
    assert checked == [users.users()["frank"]] * 2


@pytest.mark.parametrize(
    "hashed",
    ["plaintext", "$2b$12$short", "$2b$03$" + "a" * 53, "$2x$12$" + "a" * 53, "$argon2id$v=19$"],
)
def test_what_is_no_hash_refuses_the_file(tmp_path: Path, hashed: str) -> None:
    with pytest.raises(ValueError, match="line 2: the hash of 'bob' is not an argon2 or bcrypt"):
        _file(tmp_path, f"alice:{_bcrypt('a')}", f"bob:{hashed}")


def test_an_unknown_user_is_checked_against_the_files_scheme_and_cost(
    tmp_path: Path, checked: list[str]
) -> None:
    """The time of an unknown user's login is that of the users': a dummy hash of the same
    scheme and cost, whatever the file holds, followed through a reload."""
    users = _file(tmp_path, f"alice:{_bcrypt('a', 5)}", f"bob:{_bcrypt('b', 5)}")
    assert users.verify("nobody", "a") == "unknown user"
    assert profile(checked[-1]) == ("bcrypt", 5)
    assert checked[-1] not in users.users().values()
    cheap = _ARGON2_CHEAP.hash("c")
    (tmp_path / "passwords").write_text(f"carol:{cheap}\n")
    assert users.verify("nobody", "c") == "unknown user"
    assert profile(checked[-1]) == profile(cheap)
    assert users.verify("carol", "c") is None and checked[-1] == cheap


def test_a_file_mixing_schemes_is_warned_about(tmp_path: Path, checked: list[str]) -> None:
    with capture_logs() as logs:
        users = _file(tmp_path, f"a:{_bcrypt('a')}", f"b:{_bcrypt('b')}",
                      f"c:{_ARGON2_CHEAP.hash('c')}")  # fmt: skip
    (warning,) = [entry for entry in logs if entry["event"] == "password_file_mixed_schemes"]
    assert warning["kinds"] == 2 and warning["log_level"] == "warning"
    assert users.verify("nobody", "x") == "unknown user"
    assert profile(checked[-1]) == ("bcrypt", 4)  # the most common one


def test_an_empty_file_checks_against_argon2(tmp_path: Path, checked: list[str]) -> None:
    users = _file(tmp_path, "# nobody yet")
    assert users.verify("nobody", "x") == "unknown user"
    assert profile(checked[-1]) == profile(hash_password("x"))


@pytest.mark.parametrize(("scheme", "start"), [("argon2", "$argon2id$"), ("bcrypt", "$2b$12$")])
def test_hash_password_command_schemes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    scheme: str, start: str,
) -> None:  # fmt: skip
    monkeypatch.setattr(sys, "stdin", io.StringIO("s3cret\n"))
    assert cli.main(["hash-password", "--user", "carol", "--scheme", scheme]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"carol:{start}") and "s3cret" not in line
    users = _file(tmp_path, line)
    assert users.verify("carol", "s3cret") is None


def test_hash_password_command_defaults_to_argon2_and_refuses_long_bcrypt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("s3cret\n"))
    assert cli.main(["hash-password"]) == 0
    assert capsys.readouterr().out.startswith("$argon2id$")
    monkeypatch.setattr(sys, "stdin", io.StringIO("z" * 100 + "\n"))
    assert cli.main(["hash-password", "--scheme", "bcrypt"]) == 2
    assert (
        "bcrypt reads at most 72 bytes of a password; this one has 100" in capsys.readouterr().err
    )
    with pytest.raises(SystemExit):
        cli.main(["hash-password", "--scheme", "md5"])
