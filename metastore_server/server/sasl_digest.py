"""The DIGEST-MD5 mechanism (RFC 2831) on the server, for delegation-token logins as HMS takes
them (Hadoop's ``SaslRpcServer`` conventions): the user name is the token identifier in
base64, the password the token's password in base64, the realm ``default``.

One round: the server sends a challenge (realm, a fresh nonce from :mod:`secrets`, the QOP it
offers, ``charset=utf-8``, ``algorithm=md5-sess``); the client answers with its digest response;
the server checks it against the password kept for the token (a constant-time comparison) and
answers with ``rspauth``, which proves it knew the password too. The connection's user is the
token's owner (and its real user the token's, when a proxy user got the token for the owner).

Checked: the nonce is the one sent and counted once (``nc=00000001``: no reuse of a login), the
QOP is the one offered, the realm (when named) is ``default``, the digest-uri names the ``hive``
service (``hive/<host>``, as Python clients name it) or is ``null/default`` (Hive's Java
client: no protocol, the server ``default``), an authorization identity (if any) is the user
itself (a token acts for its owner only). The response is bounded: at most
:data:`MAX_DIRECTIVES` directives, each once.

Protection: ``auth`` (none) and ``auth-int`` (each frame signed with HMAC-MD5 and a sequence
number, RFC 2831 section 2.3) follow ``--sasl-qop``; ``auth-conf`` (encryption) is not built,
so a server with ``--sasl-qop auth-conf`` refuses token logins, saying so.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
from collections.abc import Callable
from typing import Any

from metastore_server.server.sasl import AuthenticationFailed, SecurityLayer

#: Hadoop's realm of token logins (``SaslRpcServer.SASL_DEFAULT_REALM``).
REALM = "default"
#: The services a client's digest-uri may name: Python clients say ``hive/<host>``; Hive's Java
#: client creates its SASL client without a protocol and names the server ``default``.
SERVICES = ("hive",)
JAVA_CLIENT_URI = "null/default"
#: Most directives a digest response may carry.
MAX_DIRECTIVES = 32
#: The largest frame a client may send under auth-int (RFC 2831's maximum).
MAX_BUFFER = 16777215
_INT_KEYS = (b"Digest session key to client-to-server signing key magic constant",
             b"Digest session key to server-to-client signing key magic constant")  # fmt: skip
_NO_BODY = ":" + "0" * 32

#: What a token login is checked with: identifier bytes -> its login (``.owner``, the
#: ``.password`` bytes); raises ValueError (an unknown, expired or malformed token).
TokenLookup = Callable[[bytes], Any]


class DigestMd5Mechanism:
    """DIGEST-MD5 for one connection, against the token store behind ``lookup``."""

    name = "DIGEST-MD5"

    def __init__(self, lookup: TokenLookup, qop: str = "auth") -> None:
        self._lookup = lookup
        self._qop = qop
        self._nonce = ""
        self._user: str | None = None
        self._real_user: str | None = None
        self._layer: _IntegrityLayer | None = None

    def step(self, response: bytes) -> tuple[bytes, bool]:
        """The challenge (first round), then the check of the digest response."""
        if not self._nonce:
            # An initial response (RFC 2831 "subsequent authentication") is not taken: the
            # client gets a challenge and authenticates afresh.
            return self._challenge(), False
        return self._check(response), True

    def _challenge(self) -> bytes:
        if self._qop not in ("auth", "auth-int"):
            raise AuthenticationFailed(
                f"DIGEST-MD5 logins need --sasl-qop auth or auth-int on this server, not "
                f"{self._qop} (delegation tokens with privacy are not supported)",
                f"DIGEST-MD5 refused: --sasl-qop {self._qop}",
            )
        self._nonce = base64.b64encode(secrets.token_bytes(24)).decode("ascii")
        parts = [f'realm="{REALM}"', f'nonce="{self._nonce}"', f'qop="{self._qop}"',
                 "charset=utf-8", "algorithm=md5-sess"]  # fmt: skip
        if self._qop == "auth-int":
            parts.append(f"maxbuf={MAX_BUFFER}")
        return ",".join(parts).encode("ascii")

    def _check(self, response: bytes) -> bytes:
        fields = parse_directives(response)
        username, realm, digest_uri, qop = self._checked_fields(fields)
        try:
            identifier = base64.b64decode(username, validate=True)
            login = self._lookup(identifier)
        except ValueError as exc:
            raise AuthenticationFailed(
                "DIGEST-MD5: the delegation token is expired, cancelled or unknown",
                f"DIGEST-MD5: {exc}",
            ) from None
        except Exception as exc:  # noqa: BLE001 - a store that failed: refused, not a crash
            raise AuthenticationFailed(
                "DIGEST-MD5: the delegation token could not be checked (the token store failed)",
                f"DIGEST-MD5: token lookup failed: {type(exc).__name__}: {exc}",
            ) from None
        owner, secret = login.owner, base64.b64encode(login.password).decode("ascii")
        authzid = fields.get("authzid")
        ha1 = session_key(username, realm, secret, self._nonce, fields["cnonce"], authzid)
        expected = digest(ha1, self._nonce, fields["nc"], fields["cnonce"], qop,
                          "AUTHENTICATE:" + digest_uri)  # fmt: skip
        if not hmac.compare_digest(expected.encode(), fields["response"].lower().encode()):
            raise AuthenticationFailed(
                "DIGEST-MD5: wrong password for the delegation token (mismatched response)",
                f"DIGEST-MD5: mismatched response for a token of {owner}",
            )
        self._user = owner
        self._real_user = getattr(login, "real_user", "") or None
        if qop == "auth-int":
            self._layer = _IntegrityLayer(ha1)
        rspauth = digest(ha1, self._nonce, fields["nc"], fields["cnonce"], qop, ":" + digest_uri)
        return f"rspauth={rspauth}".encode("ascii")

    def _checked_fields(self, fields: dict[str, str]) -> tuple[str, str, str, str]:
        """(username, realm, digest-uri, qop) of a response that follows the rules."""
        missing = [k for k in ("username", "nonce", "cnonce", "nc", "response", "digest-uri")
                   if k not in fields]  # fmt: skip
        if missing:
            raise _refused(f"the digest response lacks {', '.join(missing)}")
        if not hmac.compare_digest(fields["nonce"].encode(), self._nonce.encode()):
            raise _refused("the digest response answers another nonce")
        if fields["nc"] != "00000001":
            raise _refused(f"nonce count {fields['nc']!r}: a nonce is used once")
        qop = fields.get("qop", "auth")
        if qop != self._qop:
            raise _refused(f"qop {qop!r} chosen, {self._qop!r} offered")
        realm = fields.get("realm", "")
        if realm not in ("", REALM):
            raise _refused(f"realm {realm!r} is not offered (only {REALM!r})")
        if fields.get("charset", "utf-8").lower() != "utf-8":
            raise _refused(f"charset {fields['charset']!r} (only utf-8)")
        if "cipher" in fields:
            raise _refused("a cipher was chosen but auth-conf is not offered")
        uri = fields["digest-uri"]
        if uri != JAVA_CLIENT_URI and uri.split("/", 1)[0] not in SERVICES:
            raise _refused(f"digest-uri {uri!r} names another service (expected hive/<host>)")
        authzid = fields.get("authzid")
        if authzid is not None and authzid != fields["username"]:
            raise _refused(
                "an authorization identity other than the token's (a token login "
                "acts for the token's owner)"
            )
        return fields["username"], realm, uri, qop

    @property
    def user(self) -> str:
        """The token's owner."""
        assert self._user is not None, "DIGEST-MD5 not complete"
        return self._user

    @property
    def authorization_id(self) -> str | None:
        """None: a token login acts for the token's owner, checked when it was issued."""
        return None

    @property
    def real_user(self) -> str | None:
        """The token's real user (who got it for its owner), if any."""
        return self._real_user

    def security_layer(self) -> SecurityLayer | None:
        """The integrity layer under auth-int; None under auth."""
        return self._layer


def _refused(reason: str) -> AuthenticationFailed:
    return AuthenticationFailed(f"DIGEST-MD5: {reason}")


def parse_directives(data: bytes) -> dict[str, str]:
    """The ``name=value`` directives of a digest response (values plain or quoted, with
    backslash escapes), names in lower case; AuthenticationFailed on a malformed one, a
    repeated one or more than MAX_DIRECTIVES."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refused("the digest response is not UTF-8") from None
    fields: dict[str, str] = {}
    pos, size = 0, len(text)
    while pos < size:
        while pos < size and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= size:
            break
        equals = text.find("=", pos)
        if equals < 0:
            raise _refused(f"a directive without a value at offset {pos}")
        name = text[pos:equals].strip().lower()
        pos = equals + 1
        if pos < size and text[pos] == '"':
            value, pos = _quoted(text, pos + 1)
        else:
            end = text.find(",", pos)
            end = size if end < 0 else end
            value, pos = text[pos:end].strip(), end
        if not name or name in fields:
            raise _refused(f"directive {name!r} is empty or repeated")
        if len(fields) >= MAX_DIRECTIVES:
            raise _refused(f"more than {MAX_DIRECTIVES} directives")
        fields[name] = value
    return fields


def _quoted(text: str, pos: int) -> tuple[str, int]:
    """A quoted string's value starting after its opening quote, and the offset after it."""
    chars: list[str] = []
    while pos < len(text):
        char = text[pos]
        if char == "\\" and pos + 1 < len(text):
            chars.append(text[pos + 1])
            pos += 2
        elif char == '"':
            return "".join(chars), pos + 1
        else:
            chars.append(char)
            pos += 1
    raise _refused("an unterminated quoted string")


def _md5(data: bytes) -> bytes:
    return hashlib.md5(data, usedforsecurity=False).digest()


def session_key(username: str, realm: str, password: str, nonce: str, cnonce: str,
                authzid: str | None = None) -> bytes:  # fmt: skip
    """H(A1) of RFC 2831 (md5-sess): the session key both sides derive."""
    inner = _md5(f"{username}:{realm}:{password}".encode())
    a1 = inner + f":{nonce}:{cnonce}".encode() + (f":{authzid}".encode() if authzid else b"")
    return _md5(a1)


def digest(ha1: bytes, nonce: str, nc: str, cnonce: str, qop: str, a2: str) -> str:
    """The response value (``a2`` "AUTHENTICATE:uri") or rspauth (``a2`` ":uri") of RFC 2831."""
    if qop != "auth":
        a2 += _NO_BODY
    ha2 = _md5(a2.encode()).hex()
    return _md5(f"{ha1.hex()}:{nonce}:{nc}:{cnonce}:{qop}:{ha2}".encode()).hex()


class _IntegrityLayer:
    """auth-int (RFC 2831 section 2.3): each message followed by the first 10 bytes of
    HMAC-MD5 over its sequence number and itself, the message type (1) and the sequence
    number; keys derived from H(A1), one per direction."""

    def __init__(self, ha1: bytes) -> None:
        self._receive_key = _md5(ha1 + _INT_KEYS[0])
        self._send_key = _md5(ha1 + _INT_KEYS[1])
        self._sent = 0
        self._received = 0

    def wrap(self, data: bytes) -> bytes:
        sequence = struct.pack(">I", self._sent)
        self._sent += 1
        mac = hmac.new(self._send_key, sequence + data, hashlib.md5).digest()[:10]
        return data + mac + b"\x00\x01" + sequence

    def unwrap(self, payload: bytes) -> bytes:
        if len(payload) < 16:
            raise ConnectionError("DIGEST-MD5: a signed frame shorter than its trailer")
        data, mac, kind, sequence = payload[:-16], payload[-16:-6], payload[-6:-4], payload[-4:]
        expected = hmac.new(self._receive_key, sequence + data, hashlib.md5).digest()[:10]
        if kind != b"\x00\x01" or struct.unpack(">I", sequence)[0] != self._received:
            raise ConnectionError("DIGEST-MD5: a signed frame out of sequence")
        if not hmac.compare_digest(mac, expected):
            raise ConnectionError("DIGEST-MD5: a signed frame whose signature does not check")
        self._received += 1
        return data
