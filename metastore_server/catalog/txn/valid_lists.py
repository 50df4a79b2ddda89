"""The string forms clients exchange for transaction and write-id snapshots.

A *ValidTxnList* (HMS's ``ValidReadTxnList``) is ``hwm:minOpen:open,ids:aborted,ids``: the
highest transaction id handed out when the snapshot was taken, the lowest open one (Java's
``Long.MAX_VALUE`` when none), and the exceptions below the high watermark, open ones and
aborted ones, each comma-separated and ascending (``"5:9223372036854775807::"`` when there are
none). A transaction is valid (committed) in the snapshot when it is at or below the high
watermark and no exception.

A *ValidWriteIdList* (HMS's ``ValidReaderWriteIdList``) has the same shape behind the table's
full name: ``db.table:hwm:minOpenWriteId:open,ids:aborted,ids``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Java's Long.MAX_VALUE: "no open transaction / write id" in both string forms.
NONE_OPEN = 9223372036854775807


def bit_set(indexes: list[int]) -> bytes:
    """The bytes of Java's ``BitSet.toByteArray`` with these bits set (bit i of byte j is
    index 8j+i; no trailing zero bytes): the ``abortedBits`` of both snapshots' answers."""
    if not indexes:
        return b""
    out = bytearray(max(indexes) // 8 + 1)
    for index in indexes:
        out[index // 8] |= 1 << (index % 8)
    return bytes(out)


def _ids(text: str) -> tuple[int, ...]:
    return tuple(sorted(int(part) for part in text.split(",") if part.strip()))


@dataclass(frozen=True)
class ValidTxnList:
    """A snapshot of the transactions: which ids are committed in it."""

    high_watermark: int
    min_open: int = NONE_OPEN
    open: tuple[int, ...] = ()
    aborted: tuple[int, ...] = ()

    def is_valid(self, txnid: int) -> bool:
        """Whether the transaction is committed in the snapshot."""
        return txnid <= self.high_watermark and txnid not in self.open and txnid not in self.aborted

    def is_aborted(self, txnid: int) -> bool:
        """Whether the transaction is aborted in the snapshot."""
        return txnid in self.aborted


def parse_valid_txn_list(text: str) -> ValidTxnList:
    """Read a ValidTxnList string; ValueError when it is not one. An empty string or a
    missing part is what HMS reads it as: nothing handed out, no exception."""
    if text is None or not text.strip():
        return ValidTxnList(NONE_OPEN)
    parts = text.strip().split(":")
    if len(parts) > 4:
        raise ValueError(f"Not a ValidTxnList: {text!r}")
    parts += [""] * (4 - len(parts))
    try:
        hwm = int(parts[0])
        min_open = int(parts[1]) if parts[1] else NONE_OPEN
        return ValidTxnList(hwm, min_open, _ids(parts[2]), _ids(parts[3]))
    except ValueError as error:
        raise ValueError(f"Not a ValidTxnList: {text!r}") from error


def parse_valid_write_id_list(text: str) -> tuple[str, int, int, list[int], list[int]]:
    """Read a ValidWriteIdList string: (full table name, high watermark, min open write id,
    open ids, aborted ids); ValueError when it is not one."""
    parts = (text or "").split(":")
    if len(parts) != 5 or not parts[0]:
        raise ValueError(f"Not a ValidWriteIdList: {text!r}")
    try:
        return (parts[0], int(parts[1]), int(parts[2]) if parts[2] else NONE_OPEN,
                list(_ids(parts[3])), list(_ids(parts[4])))  # fmt: skip
    except ValueError as error:
        raise ValueError(f"Not a ValidWriteIdList: {text!r}") from error
