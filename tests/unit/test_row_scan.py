"""The compiled inner loops of big reads (storage/row_scan.py), as compiled at install and as
plain Python: they agree with the packed-row format and the key codec they shortcut."""

from __future__ import annotations

import contextlib
import random
import shutil
import struct
from types import ModuleType

import pytest
from metastore_server.planner.types import KeyKind
from metastore_server.storage import row_scan
from metastore_server.storage.codec import encode_values, split_order_parts
from metastore_server.storage.embedded import pack_row, unpack_row
from support.plain_python import plain_python, variants

PLAIN = plain_python(row_scan)
VARIANTS = variants(row_scan, PLAIN)
COLUMN_NAMES = [b"c:n", b"c:o", b"c:x", b"k:0", b"k:1", b"k:10", b"k", b"c:o2"]


def _random_rows(rng: random.Random, count: int) -> list[tuple[bytes, bytes]]:
    rows = []
    for i in range(count):
        names = rng.sample(COLUMN_NAMES, rng.randint(1, len(COLUMN_NAMES)))
        row = {name: bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
               for name in names}  # fmt: skip
        rows.append((i.to_bytes(4, "big"), pack_row(row)))
    return rows


@pytest.mark.parametrize("module", VARIANTS)
def test_packed_row_is_the_row_format(module: ModuleType) -> None:
    rng = random.Random(11)
    for size in (0, 1, 40, 4095, 4096, 70000):
        names = rng.sample(COLUMN_NAMES, rng.randint(1, len(COLUMN_NAMES)))
        row = {name: rng.randbytes(rng.randint(0, size)) for name in names}
        ordered = sorted(row)
        lengths = [n for name in ordered for n in (len(name), len(row[name]))]
        expected = struct.pack(f">BI{len(lengths)}I", 1, len(row), *lengths) + b"".join(
            name + row[name] for name in ordered
        )
        assert module.packed_row(row) == expected
        assert unpack_row(module.packed_row(row)) == row


@pytest.mark.parametrize("module", VARIANTS)
def test_packed_columns_agrees_with_unpack_row(module: ModuleType) -> None:
    rng = random.Random(7)
    rows = _random_rows(rng, 400)
    for wanted in ([b"c:n", b"c:o"], [b"c:n"], [b"k:1", b"c:o", b"k"], [b"c:o2", b"c:o"]):
        expected = []
        for key, blob in rows:
            row = unpack_row(blob, frozenset(wanted))
            if row:
                expected.append((*[row.get(name) for name in wanted], key))
        got, read, incomplete = module.packed_columns(iter(rows), wanted)
        assert got == expected
        assert read == len(rows)
        assert incomplete == sum(1 for values in expected if None in values)
        keyless, _, _ = module.packed_columns(iter(rows), wanted, keys=False)
        assert keyless == [
            values if None in values else (*values[:-1], None) for values in expected
        ]


@pytest.mark.parametrize("module", VARIANTS)
def test_packed_columns_tests_keys_first_and_stops_at_the_limit(module: ModuleType) -> None:
    rows = _random_rows(random.Random(2), 50)
    seen: list[bytes] = []

    def even(key: bytes) -> bool:
        seen.append(key)
        return key[-1] % 2 == 0

    got, read, _ = module.packed_columns(rows, [b"c:n", b"c:o", b"k"], even, 5)
    assert [values[-1][-1] % 2 for values in got] == [0] * len(got)
    assert len(got) <= 5 and read == len(seen)
    with pytest.raises(ValueError, match="unknown format"):
        module.packed_columns([(b"k", b"\x07rubbish")], [b"c:n"])


KINDS = [KeyKind.STRING, KeyKind.INTEGRAL, KeyKind.DATE, KeyKind.STRING]


def _random_value(rng: random.Random, kind: KeyKind) -> str:
    choice = rng.random()
    if kind is KeyKind.INTEGRAL and choice < 0.7:
        return rng.choice(["7", "-3", "007", "+12", str(rng.randrange(-(10**12), 10**12))])
    if kind is KeyKind.DATE and choice < 0.7:
        return rng.choice(["2024-01-05", "2024-1-5", "1999-12-31"])
    return rng.choice(["", "a", "a\x00b", "\x00", "é☕", "__HIVE_DEFAULT_PARTITION__", "x" * 50])


@pytest.mark.parametrize("module", VARIANTS)
def test_rows_cut_short_go_to_the_cut_list(module: ModuleType) -> None:
    """Heads (the first bytes of packed rows): a row whose wanted columns are all within its
    head is answered as whole; one whose head ends before they are told goes to ``cut``."""
    rows = _random_rows(random.Random(5), 300)
    wanted = [b"c:n", b"c:o"]
    whole, _, _ = module.packed_columns(iter(rows), wanted)
    for size in (5, 12, 40, 90, 200):
        heads = [(key, blob[:size]) for key, blob in rows]
        cut: list[bytes] = []
        got, read, _ = module.packed_columns(iter(heads), wanted, cut=cut)
        assert read == len(rows)
        told = [values for values in whole if values[-1] not in cut]
        assert got == told
        for key, blob in rows:
            if key in cut:
                assert len(blob) > size
        assert sorted(got + [v for v in whole if v[-1] in cut], key=lambda v: v[-1]) == whole
        with pytest.raises(ValueError) if cut else contextlib.nullcontext():
            module.packed_columns(iter(heads), wanted)


@pytest.mark.parametrize("module", VARIANTS)
def test_order_parts_splits_keys_as_the_codec_does(module: ModuleType) -> None:
    rng = random.Random(5)
    for _ in range(2000):
        values = [_random_value(rng, kind) for kind in KINDS]
        encoded = encode_values(KINDS, values)
        parts, suffix = split_order_parts(KINDS, encoded)
        key = b"\x00" * 8 + encoded
        assert module.order_parts(key, 8, len(KINDS)) == [*parts, suffix]
        assert module.order_parts(key, 8, 2) == [*parts[:2], b"".join(parts[2:]) + suffix]
    with pytest.raises(ValueError):
        module.order_parts(b"\x02abc", 0, 1)


@pytest.mark.parametrize("module", VARIANTS)
@pytest.mark.parametrize("spelled", [False, True])
def test_part_memo_tests_each_distinct_part_once(module: ModuleType, spelled: bool) -> None:
    rng = random.Random(9)
    seven = encode_values([KeyKind.INTEGRAL], ["7"])[:-1]  # the order part of 7, any spelling
    keys = []
    for _ in range(3000):
        values = [rng.choice(["a", "b", "c"]), rng.choice(["7", "007", "8"]), "2024-01-05", "z"]
        keys.append(b"\x00" * 8 + encode_values(KINDS, values))
    calls: list[bytes] = []

    def hr_is_seven(key: bytes) -> bool:
        calls.append(key)
        return split_order_parts(KINDS, key[8:])[0][1] == seven

    memo = module.PartMemo(hr_is_seven, 8, (1,), spelled)
    expected = [split_order_parts(KINDS, key[8:])[0][1] == seven for key in keys]
    assert [memo(key) for key in keys] == expected
    # Verdicts by the hr part alone: 7 and 8 (007 is 7); with spellings, by its spelling too.
    assert len(calls) == (3 if spelled else 2)


def test_the_installed_module_is_compiled_where_a_compiler_is_at_hand() -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the row loops run as plain Python")
    assert row_scan.compiled(), "reinstall (make install) to compile storage/row_scan"
    assert not PLAIN.compiled()
