"""Hadoop's token formats (``catalog/security/hadoop_tokens``): the vint/vlong encoding at its
edges (bytes worked out by hand from the encoding's rules), Text, the identifier's byte layout,
tokens and their string form, the token store's records, and refusal of malformed input."""

from __future__ import annotations

import base64

import pytest

from metastore_server.catalog.security.hadoop_tokens import (
    MasterKey,
    Reader,
    StoredToken,
    Token,
    TokenFormatError,
    TokenIdentifier,
    b64_decode,
    password_for,
    write_text,
    write_vint,
    write_vlong,
)

#: value -> bytes: one byte for [-112, 127]; else a marker (-112 - n for n magnitude bytes of a
#: positive value, -120 - n for a negative one, stored as its one's complement) and the bytes.
VLONG_CASES = [
    (0, "00"),
    (1, "01"),
    (-1, "ff"),
    (127, "7f"),
    (-112, "90"),
    (128, "8f80"),
    (255, "8fff"),
    (256, "8e0100"),
    (-113, "8770"),
    (-129, "8780"),
    (-257, "860100"),
    (1000, "8e03e8"),
    (2**31 - 1, "8c7fffffff"),
    (-(2**31), "847fffffff"),
    (2**32, "8b0100000000"),
    (2**63 - 1, "887fffffffffffffff"),
    (-(2**63), "807fffffffffffffff"),
]


@pytest.mark.parametrize(("value", "expected"), VLONG_CASES)
def test_vlong_bytes_at_the_edges(value: int, expected: str) -> None:
    assert write_vlong(value).hex() == expected
    assert Reader(bytes.fromhex(expected)).vlong() == value


def test_vlong_round_trips_across_every_width() -> None:
    values = {0, -1}
    for bits in range(1, 64):
        for edge in (2**bits, 2**bits - 1, -(2**bits), -(2**bits) + 1):
            if -(2**63) <= edge < 2**63:
                values.add(edge)
    for value in sorted(values):
        reader = Reader(write_vlong(value))
        assert reader.vlong() == value
        reader.end()


def test_vint_bounds() -> None:
    assert Reader(write_vint(2**31 - 1)).vint() == 2**31 - 1
    with pytest.raises(TokenFormatError):
        write_vint(2**31)
    with pytest.raises(TokenFormatError, match="too long to fit in an integer"):
        Reader(write_vlong(2**31)).vint()
    with pytest.raises(TokenFormatError):
        write_vlong(2**63)


def test_text_counts_utf8_bytes() -> None:
    assert write_text("") == b"\x00"
    assert write_text("héllo") == b"\x06h\xc3\xa9llo"
    assert Reader(write_text("日本")).text() == "日本"
    with pytest.raises(TokenFormatError, match="not UTF-8"):
        Reader(b"\x01\xff").text()


def test_identifier_byte_layout() -> None:
    ident = TokenIdentifier("alice", "bob", "", 1000, 2000, 1, 2)
    expected = "00" + "05" + b"alice".hex() + "03" + b"bob".hex() + "00" + "8e03e8" + "8e07d0"
    assert ident.encode().hex() == expected + "0102"
    assert TokenIdentifier.decode(ident.encode()) == ident
    assert "owner=alice, renewer=bob, realUser=, issueDate=1000" in str(ident)


def test_identifier_refuses_other_versions_and_leftovers() -> None:
    raw = TokenIdentifier("a", "b", "", 1, 2, 3, 4).encode()
    with pytest.raises(TokenFormatError, match="Unknown version of delegation token 1"):
        TokenIdentifier.decode(b"\x01" + raw[1:])
    with pytest.raises(TokenFormatError, match="after the end"):
        TokenIdentifier.decode(raw + b"\x00")
    for cut in range(len(raw)):
        with pytest.raises(TokenFormatError):
            TokenIdentifier.decode(raw[:cut])


def test_password_is_hmac_sha1() -> None:
    # RFC 2202, HMAC-SHA1 test case 2.
    digest = password_for(b"what do ya want for nothing?", b"Jefe")
    assert digest.hex() == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"


def test_token_string_form() -> None:
    ident = TokenIdentifier("alice", "alice", "", 1_700_000_000_000, 1_700_604_800_000, 7, 3)
    token = Token(ident.encode(), b"\xfb\xff" * 10)
    text = token.to_url_string()
    assert "=" not in text and "+" not in text and "/" not in text
    assert Token.from_url_string(text) == token
    raw = token.encode()
    assert raw[0] == len(ident.encode())
    assert raw.endswith(write_text("HIVE_DELEGATION_TOKEN") + b"\x00")
    # Standard alphabet and padding (what some clients write) are read as well.
    assert Token.from_url_string(base64.b64encode(raw).decode()) == token
    signed = Token(token.identifier, token.password, service="hive_metastore_sig")
    assert Token.from_url_string(signed.to_url_string()).service == "hive_metastore_sig"


@pytest.mark.parametrize("text", ["", "A", "not base64!", "////", "AAAA"])
def test_malformed_token_strings_are_refused(text: str) -> None:
    with pytest.raises(TokenFormatError):
        Token.from_url_string(text)


def test_a_length_past_the_data_is_refused_before_reading() -> None:
    with pytest.raises(TokenFormatError, match="truncated"):
        Token.decode(write_vint(2**20) + b"x")
    with pytest.raises(TokenFormatError, match="a length of"):
        Token.decode(write_vint(2**21))


def test_store_records() -> None:
    record = StoredToken(b"\x01\x02\x03", 1_700_000_000_123)
    assert StoredToken.decode(record.encode()) == record
    assert b64_decode(record.encode()) == b"\x03\x01\x02\x03" + (1_700_000_000_123).to_bytes(
        8, "big"
    )
    key = MasterKey(12, 1_700_000_000_000, b"k" * 64)
    assert MasterKey.decode(key.encode()) == key
    assert b64_decode(key.encode())[:1] == b"\x0c"
    with pytest.raises(TokenFormatError):
        MasterKey.decode(
            base64.urlsafe_b64encode(write_vint(1) + write_vlong(5) + write_vint(-1)).decode()
        )
