"""Hadoop's delegation-token formats, as Hive's metastore hands tokens out and keeps them: pure
encoders and decoders, no I/O.

**Writable numbers.** Hadoop's variable-length integers (``WritableUtils`` vint/vlong): a value
in [-112, 127] is one byte; anything else is a marker byte saying the sign and how many bytes
follow (1 to 8), then the magnitude (negative values stored as their one's complement)
big-endian, without leading zero bytes. A ``Text`` is a vint length and that many UTF-8 bytes.

**A token** (``Token``): vint-length identifier bytes, vint-length password bytes, ``Text``
kind (``HIVE_DELEGATION_TOKEN``), ``Text`` service (empty as issued; clients set it to their
``hive.metastore.token.signature``). Its string form (``encodeToUrlString``) is that record in
URL-safe base64 without padding.

**The identifier** (``AbstractDelegationTokenIdentifier``): a version byte (0), the owner,
renewer and real user as ``Text``, issue and maximum dates (ms since the epoch) as vlongs, the
sequence number and master key id as vints. The token's password is HMAC-SHA1 of the
identifier's bytes under the master key.

**In the token store** (as HMS's database token store writes them): a token row is keyed by the
identifier's bytes in URL-safe base64, and holds, in URL-safe base64, the password (vint length,
bytes) and the renewal deadline (ms, 8 bytes big-endian); a master key is its id (vint),
expiry (vlong, ms) and key bytes (vint length, bytes), in URL-safe base64.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import struct
from dataclasses import dataclass

#: The kind of Hive's delegation tokens.
HIVE_TOKEN_KIND = "HIVE_DELEGATION_TOKEN"
#: The only identifier version Hadoop writes and reads.
IDENTIFIER_VERSION = 0
#: Longest Text read (Hadoop's ``Text.DEFAULT_MAX_LEN``).
MAX_TEXT = 1024 * 1024
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_LONG = struct.Struct(">q")


class TokenFormatError(ValueError):
    """Bytes or text that are not what they should be (a truncated or malformed token)."""


# -- Writable numbers and text ------------------------------------------------------------------


def write_vlong(value: int) -> bytes:
    """``value`` (a signed 64-bit integer) as Hadoop writes a vlong."""
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise TokenFormatError(f"{value} does not fit in a 64-bit integer")
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    negative = value < 0
    magnitude = ~value if negative else value  # one's complement of a negative: >= 0
    size = (magnitude.bit_length() + 7) // 8
    marker = (-120 if negative else -112) - size
    return struct.pack(">b", marker) + magnitude.to_bytes(size, "big")


def write_vint(value: int) -> bytes:
    """``value`` (a signed 32-bit integer) as Hadoop writes a vint (the vlong encoding)."""
    if not _INT_MIN <= value <= _INT_MAX:
        raise TokenFormatError(f"{value} does not fit in a 32-bit integer")
    return write_vlong(value)


def write_text(text: str) -> bytes:
    """A Hadoop ``Text``: vint length, UTF-8 bytes."""
    data = text.encode("utf-8")
    return write_vint(len(data)) + data


class Reader:
    """Reads Writable values off ``data`` from the start; TokenFormatError past its end."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, size: int) -> bytes:
        """The next ``size`` bytes."""
        if size < 0 or self.pos + size > len(self.data):
            raise TokenFormatError(f"truncated: {size} bytes wanted at offset {self.pos}")
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def byte(self) -> int:
        """The next byte, signed (as Java's readByte)."""
        value: int = struct.unpack(">b", self.take(1))[0]
        return value

    def vlong(self) -> int:
        """The next vlong."""
        first = self.byte()
        if first >= -112:
            return first
        negative = first < -120
        size = (-120 - first) if negative else (-112 - first)
        magnitude = int.from_bytes(self.take(size), "big")
        return ~magnitude if negative else magnitude

    def vint(self) -> int:
        """The next vint (a vlong that must fit in 32 bits)."""
        value = self.vlong()
        if not _INT_MIN <= value <= _INT_MAX:
            raise TokenFormatError(f"value {value} too long to fit in an integer")
        return value

    def sized(self, limit: int = MAX_TEXT) -> bytes:
        """The next vint-length byte string (at most ``limit`` bytes)."""
        size = self.vint()
        if size < 0 or size > limit:
            raise TokenFormatError(f"a length of {size} (at most {limit})")
        return self.take(size)

    def text(self) -> str:
        """The next ``Text``."""
        try:
            return self.sized().decode("utf-8")
        except UnicodeDecodeError:
            raise TokenFormatError("a Text that is not UTF-8") from None

    def long(self) -> int:
        """The next 8-byte big-endian long (``DataOutput.writeLong``)."""
        value: int = _LONG.unpack(self.take(_LONG.size))[0]
        return value

    def end(self) -> None:
        """Refuse bytes left over."""
        if self.pos != len(self.data):
            raise TokenFormatError(f"{len(self.data) - self.pos} bytes after the end")


# -- base64 -------------------------------------------------------------------------------------


def url_encode(data: bytes) -> str:
    """URL-safe base64 without padding (commons-codec's ``encodeBase64URLSafeString``)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64_decode(text: str) -> bytes:
    """Base64 in either alphabet (standard or URL-safe), padded or not; TokenFormatError else."""
    cleaned = text.strip().rstrip("=").replace("+", "-").replace("/", "_")
    if len(cleaned) % 4 == 1:
        raise TokenFormatError("not base64 (a length no encoding gives)")
    try:
        return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise TokenFormatError("not base64") from None


# -- identifiers, tokens, stored records -----------------------------------------------------------


@dataclass(frozen=True)
class TokenIdentifier:
    """What a delegation token says: who owns it, who may renew it, when it was issued and
    when it ends for good, its sequence number and the master key that signed it."""

    owner: str
    renewer: str
    real_user: str
    issue_date: int  # ms
    max_date: int  # ms
    sequence_number: int
    master_key_id: int

    def encode(self) -> bytes:
        """The identifier's Writable bytes."""
        return b"".join((
            struct.pack(">b", IDENTIFIER_VERSION),
            write_text(self.owner),
            write_text(self.renewer),
            write_text(self.real_user),
            write_vlong(self.issue_date),
            write_vlong(self.max_date),
            write_vint(self.sequence_number),
            write_vint(self.master_key_id),
        ))  # fmt: skip

    @classmethod
    def decode(cls, data: bytes) -> TokenIdentifier:
        """The identifier of Writable bytes; TokenFormatError on anything else."""
        reader = Reader(data)
        version = reader.byte()
        if version != IDENTIFIER_VERSION:
            raise TokenFormatError(f"Unknown version of delegation token {version}")
        ident = cls(reader.text(), reader.text(), reader.text(), reader.vlong(), reader.vlong(),
                    reader.vint(), reader.vint())  # fmt: skip
        reader.end()
        return ident

    def store_key(self) -> str:
        """The token store's key for this identifier (URL-safe base64 of its bytes)."""
        return url_encode(self.encode())

    def __str__(self) -> str:
        """As Hadoop prints an identifier in its messages."""
        return (
            f"{HIVE_TOKEN_KIND} owner={self.owner}, renewer={self.renewer}, "
            f"realUser={self.real_user}, issueDate={self.issue_date}, maxDate={self.max_date}, "
            f"sequenceNumber={self.sequence_number}, masterKeyId={self.master_key_id}"
        )


def password_for(identifier: bytes, key: bytes) -> bytes:
    """A token's password: HMAC-SHA1 of its identifier's bytes under the master key."""
    return hmac.new(key, identifier, hashlib.sha1).digest()


@dataclass(frozen=True)
class Token:
    """A delegation token as clients hold it."""

    identifier: bytes
    password: bytes
    kind: str = HIVE_TOKEN_KIND
    service: str = ""

    def encode(self) -> bytes:
        """The token's Writable bytes."""
        return (write_vint(len(self.identifier)) + self.identifier
                + write_vint(len(self.password)) + self.password
                + write_text(self.kind) + write_text(self.service))  # fmt: skip

    def to_url_string(self) -> str:
        """The string form clients pass around (``Token.encodeToUrlString``)."""
        return url_encode(self.encode())

    @classmethod
    def decode(cls, data: bytes) -> Token:
        """The token of Writable bytes; TokenFormatError on anything else."""
        reader = Reader(data)
        token = cls(reader.sized(), reader.sized(), reader.text(), reader.text())
        reader.end()
        return token

    @classmethod
    def from_url_string(cls, text: str) -> Token:
        """The token of its string form; TokenFormatError on anything else."""
        return cls.decode(b64_decode(text))


@dataclass(frozen=True)
class StoredToken:
    """A token store's record of a token: its password and when it must next be renewed."""

    password: bytes
    renew_date: int  # ms

    def encode(self) -> str:
        """The record as the token store keeps it."""
        raw = write_vint(len(self.password)) + self.password + _LONG.pack(self.renew_date)
        return url_encode(raw)

    @classmethod
    def decode(cls, text: str) -> StoredToken:
        """The record of its stored text; TokenFormatError on anything else."""
        reader = Reader(b64_decode(text))
        record = cls(reader.sized(), reader.long())
        reader.end()
        return record


@dataclass(frozen=True)
class MasterKey:
    """A master key: its id (the store's sequence number), expiry (ms) and secret bytes."""

    key_id: int
    expiry_date: int
    secret: bytes

    def encode(self) -> str:
        """The key as the token store keeps it."""
        raw = write_vint(self.key_id) + write_vlong(self.expiry_date)
        return url_encode(raw + write_vint(len(self.secret)) + self.secret)

    @classmethod
    def decode(cls, text: str) -> MasterKey:
        """The key of its stored text; TokenFormatError on anything else (no key bytes too)."""
        reader = Reader(b64_decode(text))
        key_id, expiry = reader.vint(), reader.vlong()
        secret = reader.sized()
        reader.end()
        return cls(key_id, expiry, secret)
