"""The one declaration of a Thrift method: its facts, written on the area method serving it.

An area method (``api/<area>.py``) is a Thrift method when it carries :func:`thrift`; the
decorator notes a :class:`Declared` on the function and changes nothing else. Every mechanism
that treats some methods apart (the generation a call shows, the user it stamps, the replies
kept, the authorization rules, the locations a call names) reads these declarations
(``api/areas.py`` collects them); none keeps a list of method names of its own. See
``docs/design.md#where-a-thrift-method-lives``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from metastore_server.api.authorization.location_finders import LocationRule
from metastore_server.api.authorization.rules import Rule
from metastore_server.api.authorization.storage_rules import StorageCheck

#: Sets the user fields of a call's arguments (by IDL name) to the authenticated user.
Stamp = Callable[[dict[str, Any], str], None]

#: The HMS generations a method may come from: in 2.3 already, or new in HMS 3 or later.
GENERATIONS = ("2.3", "3")
#: Whose replies may be kept: none, the replies as sent (``server/kept_wire.py``), or the
#: answer too (``api/listing_replies.py``; such a reply is kept as sent as well).
KEPT = ("", "wire", "listing")
#: How its request is read: the usual way, with its partitions left as the wire bytes they came
#: as (``wire/adds.py``), or in whichever HMS generation's layout it came (``wire/layouts.py``).
DECODE = ("", "wire_partitions", "either_layout")

#: The attribute of a function holding its declaration.
ATTRIBUTE = "__thrift__"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Declared:
    """What the server treats apart in one Thrift method (the method of the same name)."""

    name: str
    #: The first HMS generation with this method: a call of a ``"3"`` method shows a newer
    #: client (``server/generations.py``).
    since: str = "2.3"
    #: Whether its reply may be kept while the store is unchanged (one of :data:`KEPT`).
    kept: str = ""
    #: How the authenticated user is written into its request (None: it records no user).
    stamp: Stamp | None = None
    #: What it needs under ``--authorization privileges`` (built with
    #: ``api/authorization/shorthand.py``; None: the admin only, failing closed).
    rule: Rule | None = None
    #: How ``--authorization storage`` treats it (built with
    #: ``api/authorization/storage_rules.py``; None: it is not checked).
    storage: StorageCheck | None = None
    #: What locations it gives objects under ``--authorization privileges`` (built with
    #: ``api/authorization/location_finders.py``; None: it gives none and changes none).
    locations: LocationRule | None = None
    #: How its request is read (one of :data:`DECODE`).
    decode: str = ""
    #: Whether its answer carries catalog names HMS 4 fills and HMS 2.3.10 leaves unset (so
    #: they are unset for a client that reads 2.3's layout: ``server/generations.py``).
    catalog_named: bool = False

    def __post_init__(self) -> None:
        if self.since not in GENERATIONS:
            raise ValueError(f"{self.name}: since must be one of {GENERATIONS}")
        if self.kept not in KEPT:
            raise ValueError(f"{self.name}: kept must be one of {KEPT}")
        if self.decode not in DECODE:
            raise ValueError(f"{self.name}: decode must be one of {DECODE}")


def thrift(
    *,
    since: str = "2.3",
    kept: str = "",
    stamp: Stamp | None = None,
    rule: Rule | None = None,
    storage: StorageCheck | None = None,
    locations: LocationRule | None = None,
    decode: str = "",
    catalog_named: bool = False,
) -> Callable[[F], F]:
    """Declare the decorated area method a Thrift method of the same name, with its facts."""

    def declare(method: F) -> F:
        declared = Declared(
            method.__name__,
            since=since,
            kept=kept,
            stamp=stamp,
            rule=rule,
            storage=storage,
            locations=locations,
            decode=decode,
            catalog_named=catalog_named,
        )
        setattr(method, ATTRIBUTE, declared)
        return method

    return declare


def declaration_of(method: object) -> Declared | None:
    """The declaration a function carries (None: it is no Thrift method)."""
    found = getattr(method, ATTRIBUTE, None)
    return found if isinstance(found, Declared) else None


def declared_in(area: type) -> dict[str, Declared]:
    """The Thrift methods an area class defines, by name; TypeError for a public method
    without a declaration or one declared under another name."""
    found: dict[str, Declared] = {}
    for name, value in vars(area).items():
        if name.startswith("_") or not callable(value):
            continue
        declared = declaration_of(value)
        if declared is None:
            raise TypeError(f"{area.__name__}.{name} is public but declares no Thrift method")
        if declared.name != name:
            raise TypeError(f"{area.__name__}.{name} is declared as {declared.name}")
        found[name] = declared
    return found
