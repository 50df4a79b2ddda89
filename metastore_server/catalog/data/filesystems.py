"""Location URIs to file systems: every scheme is served by its fsspec implementation.

A location is read as Hadoop's ``Path`` reads it: ``scheme://authority/path`` or a bare path,
with no query, fragment or percent-decoding (Hive writes escaped partition values such as
``%3A`` literally into directory names). ``file:`` and bare paths are local; ``s3``, ``s3a`` and
``s3n`` go to s3fs; ``hdfs`` to pyarrow's HadoopFileSystem; any other scheme to whatever fsspec
knows for it once its package is installed.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import fsspec
from fsspec import AbstractFileSystem

from metastore_server.distribution import install_hint

#: Schemes whose paths are this machine's.
LOCAL_SCHEMES = frozenset({"", "file"})
#: Hadoop's names of S3 file systems, all served by s3fs.
S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
#: What to install for a scheme, named in the error when it is missing.
#: Resolved places a ``FileSystems`` keeps (drops check every database's location).
_PLACES_KEPT = 65536
_EXTRAS = {"s3": ("s3", "s3fs"), "hdfs": ("hdfs", "pyarrow")}


class FileSystemUnavailable(Exception):
    """No file system can serve a location: unknown scheme, missing package or client."""

    def __init__(self, message: str, *, lasting: bool = False) -> None:
        super().__init__(message)
        #: Whether it stays so while the server runs (a package or library is missing).
        self.lasting = lasting


@dataclass(frozen=True)
class Place:
    """A location resolved to the file system that holds it."""

    #: The scheme as written (``s3a``), ``file`` for bare paths.
    scheme: str
    #: The fsspec protocol serving it (``s3`` for ``s3a``).
    protocol: str
    #: Host (and port), bucket, or '' (local).
    authority: str
    #: The path as the file system takes it: absolute and normalised for local and HDFS
    #: paths, ``bucket/key`` for object stores.
    path: str
    fs: AbstractFileSystem

    @property
    def is_local(self) -> bool:
        """Whether this is a path of this machine."""
        return self.protocol == "file"

    @property
    def uri(self) -> str:
        """The location as a URI (``file:/x`` for local paths, as HMS writes them)."""
        return self.uri_of(self.path)

    def uri_of(self, path: str) -> str:
        """The URI of another ``path`` of the same file system."""
        if self.is_local:
            return "file:" + path
        if self.protocol == "s3" or not path.startswith("/"):
            return f"{self.scheme}://{path}"
        return f"{self.scheme}://{self.authority}{path}"

    def with_path(self, path: str) -> Place:
        """The place of another path of the same file system."""
        return Place(self.scheme, self.protocol, self.authority, path, self.fs)

    @property
    def parent(self) -> Place | None:
        """The enclosing directory; None at a file system (or bucket) root."""
        if self.is_root:
            return None
        return self.with_path(posixpath.dirname(self.path.rstrip("/")) or "/")

    @property
    def is_root(self) -> bool:
        """Whether this is a file system root (``/``, a bucket)."""
        if self.protocol == "s3":
            return "/" not in self.path.strip("/")
        return self.path.rstrip("/") == ""

    def same_filesystem(self, other: Place) -> bool:
        """Whether a rename from one to the other stays on one file system (Hadoop compares
        scheme and authority; an S3 bucket is an authority)."""
        if self.protocol != other.protocol:
            return False
        if self.protocol == "s3":
            return self.path.split("/", 1)[0] == other.path.split("/", 1)[0]
        return self.authority == other.authority

    def contains(self, other: Place) -> bool:
        """Whether ``other`` lies strictly inside this place (paths as written)."""
        if not self.same_filesystem(other):
            return False
        mine = self.path.rstrip("/") + "/"
        return other.path.rstrip("/") != self.path.rstrip("/") and other.path.startswith(mine)

    def same_as(self, other: Place) -> bool:
        """Whether both name the same path of the same file system."""
        return self.same_filesystem(other) and self.path.rstrip("/") == other.path.rstrip("/")


def split_location(location: str) -> tuple[str, str, str]:
    """(scheme, authority, path) of a location, as Hadoop's Path splits it; a bare path has
    scheme '' and authority ''."""
    match = _SCHEME.match(location)
    if match is None or location.startswith("/"):
        return "", "", location
    scheme = match.group(1).lower()
    rest = location[match.end() :]
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        return scheme, authority, slash + path
    return scheme, "", rest


class FileSystems:
    """fsspec file systems by scheme, with per-scheme options (``{"s3": {"endpoint_url":
    ...}}``); S3's credentials, region and endpoint otherwise come from the standard AWS
    variables and files, as boto reads them."""

    def __init__(self, options: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self._options = {k.lower(): dict(v) for k, v in (options or {}).items()}
        self._cache: dict[tuple[str, str], AbstractFileSystem] = {}
        self._failures: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()
        #: Places resolved, by location (a place is a function of its location once its file
        #: system is open); bounded, cleared when full. Failures are never kept here.
        self._places: dict[str, Place] = {}

    def resolve(self, location: str) -> Place:
        """The place of a location URI; FileSystemUnavailable says why none serves it."""
        place = self._places.get(location)
        if place is None:
            place = self._resolve(location)
            if len(self._places) >= _PLACES_KEPT:
                self._places.clear()
            self._places[location] = place
        return place

    def _resolve(self, location: str) -> Place:
        if not location or "\x00" in location:
            raise FileSystemUnavailable(f"not a location: {location!r}")
        scheme, authority, path = split_location(location)
        if scheme in LOCAL_SCHEMES:
            if authority not in ("", "localhost"):
                raise FileSystemUnavailable(
                    f"file://{authority}/...: a file URI must name this machine"
                )
            if not path.startswith("/"):
                raise FileSystemUnavailable(f"a local location must be absolute: {location}")
            return Place("file", "file", "", posixpath.normpath(path), self._fs("file", ""))
        if scheme in S3_SCHEMES:
            if not authority:
                raise FileSystemUnavailable(f"{location}: an S3 location must name a bucket")
            key = path.strip("/")
            fs_path = f"{authority}/{key}" if key else authority
            return Place(scheme, "s3", authority, fs_path, self._fs("s3", ""))
        fs = self._fs(scheme, authority)
        if scheme == "hdfs":
            return Place(scheme, scheme, authority, posixpath.normpath(path or "/"), fs)
        stripped = fs._strip_protocol(location)
        return Place(scheme, scheme, authority, stripped, fs)

    def _fs(self, protocol: str, authority: str) -> AbstractFileSystem:
        key = (protocol, authority)
        with self._lock:
            failure = self._failures.get(key)
            if failure is not None:
                raise FileSystemUnavailable(failure)
            cached = self._cache.get(key)
            if cached is None:
                try:
                    cached = self._cache[key] = self._open(protocol, authority)
                except FileSystemUnavailable as exc:
                    if exc.lasting:  # a missing package or library stays missing
                        self._failures[key] = str(exc)
                    raise
            return cached

    def _open(self, protocol: str, authority: str) -> AbstractFileSystem:
        options = dict(self._options.get(protocol, {}))
        if protocol == "s3":
            # Other writers (Spark, Hive) change buckets too: listings are never cached.
            options.setdefault("use_listings_cache", False)
        if protocol == "hdfs":
            host, _, port = authority.partition(":")
            options.setdefault("host", host or "default")
            if port:
                options.setdefault("port", int(port))
        try:
            return fsspec.filesystem(protocol, **options)
        except ValueError as exc:  # fsspec: "Protocol not known"
            raise FileSystemUnavailable(
                f"No FileSystem for scheme: {protocol} ({exc})", lasting=True
            ) from None
        except ImportError as exc:
            extra = _EXTRAS.get(protocol)
            hint = f"{extra[1]}: {install_hint(extra[0])}" if extra else str(exc)
            raise FileSystemUnavailable(
                f"{protocol}:// locations need a package that is not installed: {hint}",
                lasting=True,
            ) from None
        except OSError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if protocol == "hdfs":
                raise FileSystemUnavailable(
                    f"no Hadoop client for hdfs://{authority}: {first} (pyarrow needs a JVM "
                    "(JAVA_HOME), libhdfs (HADOOP_HOME or ARROW_LIBHDFS_DIR) and "
                    "CLASSPATH=$(hadoop classpath --glob))",
                    lasting="load" in first,
                ) from None
            raise FileSystemUnavailable(f"{protocol}://{authority}: {first}") from None


def local_path(location: str | None) -> str | None:
    """The normalised local path of a ``file:`` URI or bare absolute path; None otherwise."""
    if not location or "\x00" in location:
        return None
    scheme, authority, path = split_location(location)
    if scheme not in LOCAL_SCHEMES or authority not in ("", "localhost"):
        return None
    if not path.startswith("/"):
        return None
    return os.path.normpath(path)
