"""The REST catalog's file boundary: every file it writes or deletes for a table or view lies
under that table's (view's) own location, and every location and file it writes, reads or
deletes lies under a data root when ``--data-roots`` is set. Locations are compared as the
Thrift side compares them (the file systems' places: scheme family, host or bucket, path;
local paths also with symbolic links resolved). A location with ``.`` or ``..`` segments is
refused outright: a local file system resolves ``..`` after following links, which no
comparison of the written path can foresee."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from metastore_server.catalog.data.deletions import real_path, within
from metastore_server.catalog.data.filesystems import (
    FileSystems,
    FileSystemUnavailable,
    Place,
    split_location,
)
from metastore_server.catalog.data.roots import DataRoots
from metastore_server.rest.errors import RestError, bad_request, forbidden

#: Characters a location may not hold: controls (URL parsers drop tabs and line ends
#: anywhere, so ``\t..`` would become ``..`` after the check) and ``?``/``#`` (a URL parser
#: cuts the path there: the file opened would not be the path checked).
_REFUSED = re.compile(r"[\x00-\x1f\x7f?#]")


def _dot_segments(location: str) -> bool:
    """Whether the path of ``location`` has a ``.`` or ``..`` segment."""
    path = split_location(location)[2]
    return any(part in (".", "..") for part in path.split("/"))


@dataclass
class FileBoundary:
    """Where the catalog may write, read and delete: ``roots`` (none: anywhere), on the
    file systems ``filesystems`` names places with."""

    filesystems: FileSystems = field(default_factory=FileSystems)
    roots: DataRoots = field(default_factory=DataRoots)

    @classmethod
    def of(cls, handler: Any) -> FileBoundary:
        """The boundary of a metastore handler's data operations (its file systems and
        ``--data-roots``)."""
        data = handler.catalog.ctx.data
        return cls(data.filesystems, data.roots)

    def place(self, location: str, what: str) -> Place:
        """The place of ``location``; 400 when it has dot segments or no file system here
        serves it."""
        if not isinstance(location, str) or not location:
            raise bad_request(f"{what} must be a location")
        scheme, authority, _ = split_location(location)
        bad = _REFUSED.search(location)
        if bad is not None:
            raise bad_request(f"{what} {location!r} holds {bad.group()!r}: control characters, "
                              "'?' and '#' are not taken in locations")  # fmt: skip
        if _dot_segments(location):
            raise bad_request(f"{what} {location} has '.' or '..' segments: give it as a "
                              "normalised location")  # fmt: skip
        if scheme == "file" and authority:  # pyiceberg's FileIO would take it as a folder
            raise bad_request(f"{what} {location}: a file URI names no host here (file:/path)")
        try:
            return self.filesystems.resolve(location)
        except FileSystemUnavailable as exc:
            raise bad_request(f"{what} {location}: {exc}") from None

    def check_root(self, location: str, what: str) -> Place:
        """``location``'s place; 403 when it lies outside the data roots."""
        place = self.place(location, what)
        outside = self.roots.outside(place)
        if outside is not None:
            raise forbidden(f"{what}: {outside}")
        return place

    def outside_table(self, path: str, table_location: str) -> str | None:
        """Why the catalog may not write or delete ``path`` for the table at
        ``table_location`` (None: it may): not under the table's location (by path, and by
        real path for local files), or outside the data roots."""
        try:
            place = self.place(path, "File")
            table = self.place(table_location, "Table location")
        except RestError as exc:
            return exc.message
        if not (table.same_as(place) or table.contains(place)):
            return f"{place.uri} is not under the table's location {table.uri}"
        real, table_real = real_path(place), real_path(table)
        if real is not None and table_real is not None and not within(real, table_real):
            return f"{place.uri} leads outside the table's location {table.uri} (a link)"
        return self.roots.outside(place)

    def same(self, location: str, other: str) -> bool:
        """Whether two locations name the same place (False when either is none here)."""
        try:
            return self.place(location, "Location").same_as(self.place(other, "Location"))
        except RestError:
            return False

    def check_file(self, path: str, table_location: str) -> None:
        """403 unless the catalog may write or delete ``path`` for the table at
        ``table_location``."""
        reason = self.outside_table(path, table_location)
        if reason is not None:
            raise forbidden(f"Refused to write or delete a file: {reason}")

    def check_read(self, path: str, what: str) -> None:
        """400/403 unless the catalog may read ``path`` (a file a caller names): a place
        here, inside the data roots."""
        self.check_root(path, what)
