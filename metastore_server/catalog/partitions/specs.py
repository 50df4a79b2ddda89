"""PartitionSpec, HMS's compact form of a table's partitions, both ways.

Reading (``add_partitions_pspec``): a spec holds either a plain list of partitions
(PartitionListComposingSpec, taken first when both are set) or partitions without storage
descriptors sharing one (PartitionSpecWithSharedSD): each becomes a partition with a copy of the
shared descriptor whose location is the shared location followed by the partition's
``relativePath`` (concatenated as Java concatenates, ``null`` included), and with the spec's
database and table names.

Writing (``get_partitions_pspec``, ``get_part_specs_by_filter``), as HMS 2.3 groups them: one
PartitionListComposingSpec of every partition, rooted at the table's location, unless the table
has ``hive.hcatalog.partition.spec.grouping.enabled=true``. Then the partitions whose location
starts with the table's are grouped by input format, output format, serde library and columns,
one PartitionSpecWithSharedSD per group (the group's first descriptor, with the table's
location; each partition's location past the table's is its relative path), and the others
make one PartitionListComposingSpec with no root path.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from metastore_server.thrift_api import hms

GROUPING_KEY = "hive.hcatalog.partition.spec.grouping.enabled"


class UnusableSpec(Exception):
    """A spec with neither form set (HMS 2.3 fails on it with an internal error)."""


def _java_concat(*parts: str | None) -> str:
    return "".join("null" if part is None else part for part in parts)


def partitions_of(specs: Sequence[hms.PartitionSpec | None]) -> list[hms.Partition]:
    """The partitions the specs hold, in order."""
    found: list[hms.Partition] = []
    for spec in specs:
        if spec is not None and spec.partitionList is not None:
            found.extend(spec.partitionList.partitions or [])
        elif spec is not None and spec.sharedSDPartitionSpec is not None:
            shared = spec.sharedSDPartitionSpec
            if shared.sd is None:
                raise UnusableSpec("a PartitionSpecWithSharedSD without its storage descriptor")
            for part in shared.partitions or []:
                sd = copy.deepcopy(shared.sd)
                sd.location = _java_concat(shared.sd.location, part.relativePath)
                found.append(
                    hms.Partition(
                        values=part.values, dbName=spec.dbName, tableName=spec.tableName,
                        createTime=part.createTime, lastAccessTime=part.lastAccessTime,
                        sd=sd, parameters=part.parameters,
                    )  # fmt: skip
                )
        else:
            raise UnusableSpec("a PartitionSpec with neither partitions nor shared partitions")
    return found


def grouping_enabled(table: hms.Table) -> bool:
    """Whether the table asks for partitions grouped by storage descriptor."""
    return (table.parameters or {}).get(GROUPING_KEY, "").lower() == "true"


def specs_of(
    table: hms.Table, partitions: list[hms.Partition], db: str, table_name: str
) -> list[hms.PartitionSpec]:
    """The partitions of ``table`` as HMS 2.3 answers them in specs; ``db`` and ``table_name``
    name the single list spec (grouped specs take the table's own names)."""
    root = table.sd.location if table.sd is not None else None
    if not grouping_enabled(table):
        listing = hms.PartitionListComposingSpec(partitions=partitions)
        return [hms.PartitionSpec(dbName=db, tableName=table_name, rootPath=root,
                                  partitionList=listing)]  # fmt: skip
    root_text = _java_concat(root)
    groups: dict[tuple[object, ...], tuple[hms.StorageDescriptor, list[hms.PartitionWithoutSD]]]
    groups = {}
    outside = []
    for part in partitions:
        location = part.sd.location if part.sd is not None else None
        if location is None or not location.startswith(root_text):
            outside.append(part)
            continue
        bare = hms.PartitionWithoutSD(
            values=part.values, createTime=part.createTime, lastAccessTime=part.lastAccessTime,
            relativePath=location[len(root_text):], parameters=part.parameters,
        )  # fmt: skip
        groups.setdefault(_sd_key(part.sd), (part.sd, []))[1].append(bare)
    specs = []
    for sd, members in groups.values():
        shared_sd = copy.deepcopy(sd)
        shared_sd.location = root
        specs.append(
            hms.PartitionSpec(
                dbName=table.dbName, tableName=table.tableName, rootPath=root,
                sharedSDPartitionSpec=hms.PartitionSpecWithSharedSD(partitions=members,
                                                                    sd=shared_sd),
            )  # fmt: skip
        )
    if outside:
        specs.append(
            hms.PartitionSpec(dbName=table.dbName, tableName=table.tableName,
                              partitionList=hms.PartitionListComposingSpec(partitions=outside))
        )  # fmt: skip
    return specs


def _sd_key(sd: hms.StorageDescriptor) -> tuple[object, ...]:
    """What partitions sharing a descriptor must have in common (HMS's StorageDescriptorKey)."""
    serde = sd.serdeInfo.serializationLib if sd.serdeInfo is not None else None
    columns = tuple((c.name, c.type, c.comment) for c in sd.cols or [])
    return (sd.inputFormat, sd.outputFormat, serde, columns)


def java_short(value: int | None) -> int:
    """``value`` cast to a Java short, as HMS casts these calls' ``max_parts``."""
    if value is None:
        return -1
    return ((int(value) + 0x8000) & 0xFFFF) - 0x8000
