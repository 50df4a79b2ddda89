"""The view updates of a CommitViewRequest applied to view metadata (pyiceberg's model has no
code for them): ``assign-uuid``, ``upgrade-format-version`` (to 1), ``add-schema``,
``set-location``, ``set-properties``, ``remove-properties``, ``add-view-version`` and
``set-current-view-version`` (-1: the version added last). Anything else is a 400."""

from __future__ import annotations

import time
from typing import Any

from pydantic import ValidationError
from pyiceberg.schema import Schema
from pyiceberg.view.metadata import ViewHistoryEntry, ViewMetadata, ViewVersion

from metastore_server.rest.errors import bad_request

#: How many versions a view keeps (Iceberg's ``version.history.num-entries`` default).
VERSIONS_KEPT = 10


def apply_view_updates(metadata: ViewMetadata, updates: list[Any]) -> ViewMetadata:
    """``metadata`` with ``updates`` applied in order (400 for one that cannot apply)."""
    changed = metadata
    last_added: int | None = None
    for update in updates:
        if not isinstance(update, dict):
            raise bad_request("A view update must be an object")
        try:
            changed, added = _apply(changed, update, last_added)
        except (ValidationError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise bad_request(f"Cannot apply view update {update.get('action')}: {exc}") from None
        last_added = added if added is not None else last_added
    return changed


def _apply(metadata: ViewMetadata, update: dict[str, Any],
           last_added: int | None) -> tuple[ViewMetadata, int | None]:  # fmt: skip
    action = update.get("action")
    if action == "assign-uuid":
        return metadata.model_copy(update={"view_uuid": str(update["uuid"])}), None
    if action == "upgrade-format-version":
        if int(update["format-version"]) != 1:
            raise ValueError("views have format version 1 only")
        return metadata, None
    if action == "add-schema":
        schema = Schema.model_validate(update["schema"])
        kept = [s for s in metadata.schemas if s.schema_id != schema.schema_id]
        return metadata.model_copy(update={"schemas": [*kept, schema]}), None
    if action == "set-location":
        return metadata.model_copy(update={"location": str(update["location"])}), None
    if action == "set-properties":
        merged = {**metadata.properties, **{str(k): str(v) for k, v in update["updates"].items()}}
        return metadata.model_copy(update={"properties": merged}), None
    if action == "remove-properties":
        remaining = {k: v for k, v in metadata.properties.items() if k not in update["removals"]}
        return metadata.model_copy(update={"properties": remaining}), None
    if action == "add-view-version":
        return _add_version(metadata, ViewVersion.model_validate(update["view-version"]))
    if action == "set-current-view-version":
        wanted = int(update["view-version-id"])
        if wanted == -1:
            if last_added is None:
                raise ValueError("no view version was added before -1")
            wanted = last_added
        return _set_current(metadata, wanted), None
    raise ValueError(f"unknown view update action {action!r}")


def _add_version(metadata: ViewMetadata, version: ViewVersion) -> tuple[ViewMetadata, int]:
    """Add ``version`` (a new id, the highest plus one, unless it repeats a kept one)."""
    if not any(s.schema_id == version.schema_id for s in metadata.schemas):
        raise ValueError(f"schema {version.schema_id} of the view version is not in the view")
    for kept in metadata.versions:
        same = kept.model_copy(update={"version_id": version.version_id,
                                       "timestamp_ms": version.timestamp_ms})  # fmt: skip
        if same == version:
            return metadata, kept.version_id
    new_id = max((v.version_id for v in metadata.versions), default=0) + 1
    added = version.model_copy(update={"version_id": new_id})
    versions = [*metadata.versions, added]
    while len(versions) > VERSIONS_KEPT:  # the oldest go, never the current one
        versions.remove(next(v for v in versions if v.version_id != metadata.current_version_id))
    return metadata.model_copy(update={"versions": versions}), new_id


def _set_current(metadata: ViewMetadata, version_id: int) -> ViewMetadata:
    if not any(v.version_id == version_id for v in metadata.versions):
        raise ValueError(f"view version {version_id} is not in the view")
    entry = ViewHistoryEntry(timestamp_ms=int(time.time() * 1000), version_id=version_id)
    return metadata.model_copy(update={"current_version_id": version_id,
                                       "version_log": [*metadata.version_log, entry]})  # fmt: skip
