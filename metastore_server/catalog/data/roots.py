"""Data roots: the directories under which the server may create, move and delete data
(``--data-roots``). None set: anywhere, as before.

A root is a directory URI; a place lies under it when both are on the same file system (scheme
family, host, bucket) and the place's path is the root's path or continues it after a ``/``
(``/data/x`` never holds ``/data/xyz``). Local places are compared with symbolic links resolved
too, so a link under a root does not lead the server outside it. See ``docs/managed-data.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from metastore_server.catalog.data.deletions import Guard, real_path, within
from metastore_server.catalog.data.filesystems import FileSystems, FileSystemUnavailable, Place


def _under(place: Place, root: Place) -> bool:
    """Whether ``place`` is ``root`` or lies below it, by path on one file system (``same_as``
    or ``contains``, the file systems compared once)."""
    if not root.same_filesystem(place):
        return False
    top, path = root.path.rstrip("/"), place.path.rstrip("/")
    return path == top or path.startswith(top + "/")


@dataclass(frozen=True)
class DataRoots:
    """The data roots, resolved once at start; empty: everywhere is allowed."""

    roots: tuple[Guard, ...] = ()

    @classmethod
    def parse(cls, uris: Sequence[str], filesystems: FileSystems) -> DataRoots:
        """Resolve ``uris``; ValueError names a relative or unresolvable one (the file
        systems refuse a relative local path, a bucket-less S3 URI, an unknown scheme)."""
        found = []
        for uri in uris:
            try:
                place = filesystems.resolve(uri)
            except FileSystemUnavailable as exc:
                raise ValueError(f"data root {uri!r}: {exc}") from None
            found.append(Guard.of(place))
        return cls(tuple(found))

    @property
    def active(self) -> bool:
        """Whether any root is set (otherwise nothing is bounded)."""
        return bool(self.roots)

    def describe(self) -> str:
        """The roots as a list for messages: ``file:/a, s3://b/c``."""
        return ", ".join(root.place.uri for root in self.roots)

    def covering(self, place: Place) -> Place | None:
        """The innermost root holding ``place`` (or being it); None when none does. Local
        places must lie under a root both as written and with links resolved."""
        real: str | None = None
        resolved = False  # links are resolved only for a place under a root by its path
        best: Place | None = None
        for root in self.roots:
            if not _under(place, root.place):
                continue
            if not resolved:
                real, resolved = real_path(place), True
            if real is not None and root.real is not None and not within(real, root.real):
                continue
            if best is None or len(root.place.path) > len(best.path):
                best = root.place
        return best

    def outside(self, place: Place) -> str | None:
        """Why ``place`` is out of bounds (for a refusal); None when it is allowed."""
        if not self.active or self.covering(place) is not None:
            return None
        return f"{place.uri} is outside the data roots of this server ({self.describe()})"

    def levels_inside(self, place: Place) -> int:
        """How many of ``place``'s parents lie strictly inside its root (the parents a drop
        may remove); unbounded (a large number) without roots."""
        if not self.active:
            return 1 << 30
        root = self.covering(place)
        if root is None:
            return 0
        below = place.path.rstrip("/")[len(root.path.rstrip("/")) :].strip("/")
        return max(below.count("/"), 0) if below else 0
