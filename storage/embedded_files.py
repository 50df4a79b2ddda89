"""The embedded store's files on disk, kept to the server's user.

The store holds secrets (the REST catalog's token signing key and the delegation tokens'
master keys, in its meta table): whoever reads the file, or its ``-wal`` beside it, can make
tokens. So a store file the server creates is made mode 0600 before SQLite opens it (SQLite
gives the ``-wal`` and ``-shm`` files it makes the main file's mode), and each directory it
creates for it 0700. Existing files and an existing directory are left as they are: when
group or others may use them, a warning at start names the path, its mode and what to run.
"""

from __future__ import annotations

import os
import shlex
import stat

import structlog

log = structlog.get_logger(__name__)

#: The mode of the store's files the server creates.
FILE_MODE = 0o600
#: The mode of each directory the server creates for the store.
DIR_MODE = 0o700
#: The files SQLite keeps beside the store's file (WAL mode).
SIDE_SUFFIXES = ("-wal", "-shm")
_HOLDS = (
    "the store holds the REST catalog's token signing key and the delegation tokens' "
    "master keys: whoever can read it can make tokens"
)


def private_opener(path: str, flags: int) -> int:
    """An ``open(..., opener=)`` that creates a missing file with mode 0600."""
    return os.open(path, flags, FILE_MODE)


def prepare(path: str) -> None:
    """Make the store file's missing directories (0700) and the file itself (0600, empty:
    SQLite takes an empty file for an empty database) when missing; warn about an existing
    file, ``-wal``, ``-shm`` or directory that group or others may use."""
    directory = os.path.dirname(os.path.abspath(path))
    if not make_directories(directory):
        _check_directory(directory)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        pass
    for name in (path, *(path + suffix for suffix in SIDE_SUFFIXES)):
        _check_file(name)


def make_directories(directory: str) -> bool:
    """Make ``directory`` and its missing parents, each 0700; whether it was made here."""
    if os.path.isdir(directory):
        return False
    parent = os.path.dirname(directory)
    if parent != directory:
        make_directories(parent)
    try:
        os.mkdir(directory, DIR_MODE)
    except FileExistsError:
        return False  # made by another process meanwhile: checked as an existing one
    return True


def open_to_others(mode: int) -> bool:
    """Whether a file or directory of ``mode`` lets group or others in."""
    return bool(stat.S_IMODE(mode) & 0o077)


def _check_file(name: str) -> None:
    try:
        info = os.stat(name)
    except FileNotFoundError:
        return
    if open_to_others(info.st_mode):
        log.warning("store_file_open_to_others", path=name, mode=_octal(info.st_mode),
                    hint=f"chmod 600 {shlex.quote(name)}", detail=_HOLDS)  # fmt: skip


def _check_directory(directory: str) -> None:
    info = os.stat(directory)
    if not open_to_others(info.st_mode):
        return
    shared = bool(info.st_mode & stat.S_ISVTX) or info.st_uid != os.geteuid()
    hint = ("keep the store in a directory of its own, mode 700" if shared
            else f"chmod 700 {shlex.quote(directory)}")  # fmt: skip
    log.warning("store_directory_open_to_others", path=directory, mode=_octal(info.st_mode),
                hint=hint, detail=f"{_HOLDS}; its -wal and -shm files are made in this "
                "directory")  # fmt: skip


def _octal(mode: int) -> str:
    return f"{stat.S_IMODE(mode):04o}"
