"""The DIGEST-MD5 server mechanism (``server/sasl_digest``), step by step against pure-sasl's
DIGEST-MD5 client: the challenge, a good response and the rspauth the client checks, and each
refusal (wrong password, unknown token, replayed nonce count, another realm or service, a
malformed or oversized response, auth-conf); the auth-int layer's frames as RFC 2831 defines
them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
from types import SimpleNamespace

import pytest
from puresasl.client import SASLClient

from metastore_server.server.sasl import AuthenticationFailed
from metastore_server.server.sasl_digest import (
    MAX_DIRECTIVES,
    DigestMd5Mechanism,
    parse_directives,
    session_key,
)

IDENTIFIER = b"\x00\x05alice\x05alice\x00\x01\x02\x03\x04"
PASSWORD = bytes(range(20))
USER = base64.b64encode(IDENTIFIER).decode()
SECRET = base64.b64encode(PASSWORD).decode()


def lookup(identifier: bytes) -> SimpleNamespace:
    if identifier != IDENTIFIER:
        raise ValueError("token expired or does not exist: (the test's)")
    return SimpleNamespace(owner="alice", password=PASSWORD)


def client(password: str = SECRET, service: str = "hive", host: str = "meta.example.com",
           qop: str = "auth", user: str = USER) -> SASLClient:  # fmt: skip
    return SASLClient(host, service=service, mechanism="DIGEST-MD5", username=user,
                      password=password, qops=[qop.encode()])  # fmt: skip


def negotiate(mechanism: DigestMd5Mechanism, sasl: SASLClient) -> bytes:
    """Run the exchange; the server's last answer (rspauth)."""
    challenge, done = mechanism.step(sasl.process() or b"")
    assert not done
    answer, done = mechanism.step(sasl.process(challenge))
    assert done
    sasl.process(answer)  # pure-sasl checks rspauth here
    assert sasl.complete
    return answer


def test_a_token_login_is_the_tokens_owner() -> None:
    mechanism = DigestMd5Mechanism(lookup)
    challenge, done = mechanism.step(b"")
    fields = parse_directives(challenge)
    assert not done
    assert fields["realm"] == "default" and fields["qop"] == "auth"
    assert fields["charset"] == "utf-8" and fields["algorithm"] == "md5-sess"
    assert len(base64.b64decode(fields["nonce"])) == 24
    answer, done = mechanism.step(client().process(challenge))
    assert done and answer.startswith(b"rspauth=")
    assert mechanism.user == "alice"
    assert mechanism.security_layer() is None


def test_rspauth_proves_the_server_knows_the_password() -> None:
    assert negotiate(DigestMd5Mechanism(lookup), client())
    mechanism = DigestMd5Mechanism(lookup)
    sasl = client()
    challenge, _ = mechanism.step(b"")
    _answer, _ = mechanism.step(sasl.process(challenge))
    with pytest.raises(Exception, match="Invalid server auth response"):  # noqa: PT011
        sasl.process(b"rspauth=" + b"0" * 32)


def test_each_nonce_is_new() -> None:
    nonces = {parse_directives(DigestMd5Mechanism(lookup).step(b"")[0])["nonce"]
              for _ in range(20)}  # fmt: skip
    assert len(nonces) == 20


def test_hive_java_clients_uri_is_taken() -> None:
    # Hive's Java client names no protocol and the server "default": digest-uri null/default.
    negotiate(DigestMd5Mechanism(lookup), client(service="null", host="default"))


@pytest.mark.parametrize(
    ("sasl", "message"),
    [
        (client(password=base64.b64encode(b"forged").decode()), "wrong password"),
        (client(user=base64.b64encode(b"\x00other").decode()), "expired, cancelled or unknown"),
        (client(user="not base64 at all!"), "expired, cancelled or unknown"),
        (client(service="hdfs"), "digest-uri 'hdfs/meta.example.com' names another service"),
    ],
)
def test_refusals(sasl: SASLClient, message: str) -> None:
    mechanism = DigestMd5Mechanism(lookup)
    challenge, _ = mechanism.step(b"")
    with pytest.raises(AuthenticationFailed, match=message):
        mechanism.step(sasl.process(challenge))


def response_to(challenge: bytes, **changes: str) -> bytes:
    """A good response to ``challenge`` (pure-sasl's), with directives changed or removed."""
    fields = parse_directives(client().process(challenge))
    for name, value in changes.items():
        name = name.replace("_", "-")
        if value == "":
            fields.pop(name)
        else:
            fields[name] = value
    return ",".join(f'{k}="{v}"' for k, v in fields.items()).encode()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"nc": "00000002"}, "a nonce is used once"),
        ({"nonce": "c29tZXRoaW5nIGVsc2U="}, "answers another nonce"),
        ({"realm": "EXAMPLE.COM"}, "realm 'EXAMPLE.COM' is not offered"),
        ({"qop": "auth-int"}, "qop 'auth-int' chosen, 'auth' offered"),
        ({"cnonce": ""}, "lacks cnonce"),
        ({"authzid": "bob"}, "authorization identity other than the token's"),
        ({"cipher": "rc4"}, "auth-conf is not offered"),
    ],
)
def test_responses_that_break_the_rules(changes: dict[str, str], message: str) -> None:
    mechanism = DigestMd5Mechanism(lookup)
    challenge, _ = mechanism.step(b"")
    with pytest.raises(AuthenticationFailed, match=message):
        mechanism.step(response_to(challenge, **changes))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"username", "without a value"),
        (b'username="a",username="b"', "repeated"),
        (b'username="open', "unterminated"),
        (b"\xff\xfe", "not UTF-8"),
        (",".join(f"k{i}=v" for i in range(MAX_DIRECTIVES + 1)).encode(), "more than 32"),
    ],
)
def test_malformed_responses(data: bytes, message: str) -> None:
    with pytest.raises(AuthenticationFailed, match=message):
        parse_directives(data)


def test_directives_with_escapes_and_spaces() -> None:
    parsed = parse_directives(b' username="a\\"b" , qop=auth,\tnc=00000001 ')
    assert parsed == {"username": 'a"b', "qop": "auth", "nc": "00000001"}


def test_a_failing_store_refuses_the_login() -> None:
    def broken(identifier: bytes) -> SimpleNamespace:
        raise OSError("store unreachable")

    mechanism = DigestMd5Mechanism(broken)
    challenge, _ = mechanism.step(b"")
    with pytest.raises(AuthenticationFailed, match="could not be checked") as caught:
        mechanism.step(client().process(challenge))
    assert "store unreachable" in caught.value.reason


def test_auth_conf_is_refused_clearly() -> None:
    with pytest.raises(AuthenticationFailed, match="need --sasl-qop auth or auth-int"):
        DigestMd5Mechanism(lookup, qop="auth-conf").step(b"")


def test_auth_int_signs_frames_as_rfc_2831_says() -> None:
    mechanism = DigestMd5Mechanism(lookup, qop="auth-int")
    challenge, _ = mechanism.step(b"")
    assert parse_directives(challenge)["qop"] == "auth-int"
    # pure-sasl's DIGEST-MD5 speaks only auth: the response is written here, from RFC 2831.
    nonce, cnonce, uri = parse_directives(challenge)["nonce"], "c-nonce-1", "hive/meta"
    inner = hashlib.md5(f"{USER}:default:{SECRET}".encode()).digest()
    ha1 = hashlib.md5(inner + f":{nonce}:{cnonce}".encode()).digest()
    ha2 = hashlib.md5(f"AUTHENTICATE:{uri}:{'0' * 32}".encode()).hexdigest()
    value = hashlib.md5(f"{ha1.hex()}:{nonce}:00000001:{cnonce}:auth-int:{ha2}".encode())
    response = (f'username="{USER}",realm="default",nonce="{nonce}",cnonce="{cnonce}",'
                f'nc=00000001,qop=auth-int,digest-uri="{uri}",maxbuf=65536,'
                f"response={value.hexdigest()}").encode()  # fmt: skip
    mechanism.step(response)
    layer = mechanism.security_layer()
    assert layer is not None
    assert session_key(USER, "default", SECRET, nonce, cnonce) == ha1
    magic = b"Digest session key to %s signing key magic constant"
    to_client = hashlib.md5(ha1 + magic % b"server-to-client").digest()
    to_server = hashlib.md5(ha1 + magic % b"client-to-server").digest()
    for number, message in enumerate([b"first", b"", b"third" * 1000]):
        sequence = struct.pack(">I", number)
        mac = hmac.new(to_client, sequence + message, hashlib.md5).digest()[:10]
        assert layer.wrap(message) == message + mac + b"\x00\x01" + sequence
        signed = message + hmac.new(to_server, sequence + message, hashlib.md5).digest()[:10]
        assert layer.unwrap(signed + b"\x00\x01" + sequence) == message
    replayed = b"x" + hmac.new(to_server, struct.pack(">I", 0) + b"x", hashlib.md5).digest()[:10]
    with pytest.raises(ConnectionError, match="out of sequence"):
        layer.unwrap(replayed + b"\x00\x01" + struct.pack(">I", 0))
    sequence = struct.pack(">I", 3)
    with pytest.raises(ConnectionError, match="does not check"):
        layer.unwrap(b"tampered" + b"\x00" * 10 + b"\x00\x01" + sequence)
