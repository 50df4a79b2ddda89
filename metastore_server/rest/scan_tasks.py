"""pyiceberg's planned file scan tasks written as the spec's ``FileScanTask`` and content-file
JSON: a data file with its partition values (JSON single-value form), the delete files a task
needs (listed once a batch, referenced by index), and column statistics only for the fields a
request names in ``stats-fields``. The residual is left out: a client then applies its own
filter, as the spec allows. Pure: no I/O."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.conversions import from_bytes, to_json
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.table import FileScanTask
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.types import PrimitiveType

CONTENT = {DataFileContent.DATA: "data", DataFileContent.POSITION_DELETES: "position-deletes",
           DataFileContent.EQUALITY_DELETES: "equality-deletes"}  # fmt: skip
#: The count statistics of a data file: (spec name, DataFile attribute).
COUNTS = (("column-sizes", "column_sizes"), ("value-counts", "value_counts"),
          ("null-value-counts", "null_value_counts"), ("nan-value-counts", "nan_value_counts"))


@dataclass
class TaskWriter:
    """Writes tasks of one table version: its partition specs and schema give the types of
    partition values and bounds; ``stats``: the field ids whose statistics are sent."""

    metadata: TableMetadata
    stats: frozenset[int] = frozenset()
    _partition_types: dict[int, list[Any]] = field(default_factory=dict)

    def batch(self, tasks: Sequence[FileScanTask]) -> dict[str, Any]:
        """``file-scan-tasks`` and ``delete-files`` of ``tasks`` (each delete file once)."""
        deletes: list[dict[str, Any]] = []
        index: dict[str, int] = {}
        written = []
        for task in tasks:
            references = []
            for delete in sorted(task.delete_files, key=lambda d: d.file_path):
                if delete.file_path not in index:
                    index[delete.file_path] = len(deletes)
                    deletes.append(self.content_file(delete))
                references.append(index[delete.file_path])
            entry: dict[str, Any] = {"data-file": self.content_file(task.file)}
            if references:
                entry["delete-file-references"] = references
            written.append(entry)
        answer: dict[str, Any] = {"file-scan-tasks": written}
        if deletes:
            answer["delete-files"] = deletes
        return answer

    def content_file(self, data_file: DataFile) -> dict[str, Any]:
        """The spec's ContentFile (DataFile, PositionDeleteFile or EqualityDeleteFile)."""
        spec_id = data_file.spec_id
        written: dict[str, Any] = {
            "spec-id": spec_id,
            "content": CONTENT[DataFileContent(data_file.content)],
            "file-path": data_file.file_path,
            "file-format": data_file.file_format.value.lower(),
            "partition": self._partition(spec_id, data_file.partition),
            "file-size-in-bytes": data_file.file_size_in_bytes,
            "record-count": data_file.record_count,
        }
        if data_file.key_metadata:
            written["key-metadata"] = bytes(data_file.key_metadata).hex().upper()
        if data_file.split_offsets:
            written["split-offsets"] = list(data_file.split_offsets)
        if data_file.sort_order_id is not None:
            written["sort-order-id"] = data_file.sort_order_id
        if data_file.content == DataFileContent.EQUALITY_DELETES and data_file.equality_ids:
            written["equality-ids"] = list(data_file.equality_ids)
        if data_file.content == DataFileContent.DATA and self.stats:
            written.update(self._statistics(data_file))
        return written

    def _partition(self, spec_id: int, partition: Any) -> list[Any]:
        """The partition tuple in JSON single-value form (by the spec's result types)."""
        types = self._partition_types.get(spec_id)
        if types is None:
            spec = self.metadata.specs()[spec_id]
            struct = spec.partition_type(self.metadata.schema())
            types = [f.field_type for f in struct.fields]
            self._partition_types[spec_id] = types
        values = list(partition or ())
        pairs = zip(types, values, strict=False)
        return [None if value is None else _json(kind, value) for kind, value in pairs]

    def _statistics(self, data_file: DataFile) -> dict[str, Any]:
        written: dict[str, Any] = {}
        for name, attribute in COUNTS:
            kept = _only(getattr(data_file, attribute) or {}, self.stats)
            if kept:
                written[name] = {"keys": list(kept), "values": list(kept.values())}
        for name, attribute in (("lower-bounds", "lower_bounds"), ("upper-bounds", "upper_bounds")):
            bounds = self._bounds(_only(getattr(data_file, attribute) or {}, self.stats))
            if bounds:
                written[name] = {"keys": list(bounds), "values": list(bounds.values())}
        return written

    def _bounds(self, raw: dict[int, bytes]) -> dict[int, Any]:
        """Bounds of primitive fields, decoded and in JSON single-value form."""
        schema, decoded = self.metadata.schema(), {}
        for field_id, value in raw.items():
            try:
                found = schema.find_field(field_id)
            except ValueError:
                continue  # a field the current schema no longer has
            if not isinstance(found.field_type, PrimitiveType):
                continue
            try:
                written = _json(found.field_type, from_bytes(found.field_type, value))
            except (TypeError, ValueError, NotImplementedError, UnicodeDecodeError):
                continue  # a bound this type cannot decode is left out, as a missing one
            if isinstance(written, float) and not math.isfinite(written):
                continue
            decoded[field_id] = written
        return decoded


def _only(values: dict[int, Any], ids: Iterable[int]) -> dict[int, Any]:
    wanted = set(ids)
    return {k: v for k, v in sorted(values.items()) if k in wanted}


def _json(kind: Any, value: Any) -> Any:
    """A value in JSON single-value form; floats that JSON cannot carry as None."""
    written = to_json(kind, value)
    if isinstance(written, float) and not math.isfinite(written):
        return None
    return written
