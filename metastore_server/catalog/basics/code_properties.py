"""Properties that name code: keys under which Iceberg's readers (Java's and pyiceberg's) take
the name of a class, module or FileIO to load (``py-io-impl``, ``io-impl``,
``write.py-location-provider.impl``, ``s3.retry-strategy-impl``, ``client.factory``...).

The server never loads code a caller names: it builds its FileIO from its own settings and
reads no such key. A table or namespace whose properties would set one is refused, so that no
other reader of the same properties (a pyiceberg process, a Spark job) is led to load it
through this catalog either. See ``docs/security.md``."""

from __future__ import annotations

from collections.abc import Mapping

#: Keys naming code that do not end in ``impl``: Iceberg's AWS client factory and
#: credentials provider classes.
_NAMED = frozenset({"client.factory", "client.credentials-provider"})
#: How a key naming an implementation ends (``io-impl``, ``write.location-provider.impl``).
_ENDINGS = (".impl", "-impl", "_impl")


def names_code(key: str) -> bool:
    """Whether the property ``key`` names a class, module or implementation to load."""
    folded = key.strip().lower()
    return folded in _NAMED or folded == "impl" or folded.endswith(_ENDINGS)


def code_keys(properties: Mapping[str, object] | None) -> list[str]:
    """The keys of ``properties`` that name code, sorted."""
    return sorted(key for key in properties or {} if isinstance(key, str) and names_code(key))


def keys_set(
    new: Mapping[str, object] | None, old: Mapping[str, object] | None = None
) -> list[str]:
    """The keys naming code that ``new`` sets: those it holds with a value ``old`` does not
    hold (a definition carried over unchanged sets nothing)."""
    after, before = new or {}, old or {}
    return [key for key in code_keys(after) if key not in before or before[key] != after[key]]


def refusal(keys: list[str], what: str) -> str:
    """The message refusing ``what`` (``Table db.t``) that would set ``keys``."""
    return (f"{what} may not set {', '.join(keys)}: properties naming a class, module or "
            "FileIO implementation are not accepted (this server loads no code a caller "
            "names)")  # fmt: skip
