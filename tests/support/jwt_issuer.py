"""A local identity provider for the REST catalog's JWT tests: RSA keys made by the test, their
JWKS served over loopback HTTP, and tokens signed with them (or forged as an attacker would)."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .net import LOOPBACK

ISSUER = "https://idp.example.test/realms/lake"
AUDIENCE = "iceberg-catalog"


class Issuer:
    """Signing keys (``kid`` -> key) and the JWKS of their public halves."""

    def __init__(self) -> None:
        self.keys = {"k1": rsa.generate_private_key(public_exponent=65537, key_size=2048)}
        self.fetches = 0

    def jwks(self) -> dict[str, Any]:
        out = []
        for kid, key in self.keys.items():
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            out.append({**jwk, "kid": kid, "alg": "RS256", "use": "sig"})
        return {"keys": out}

    def public_pem(self, kid: str = "k1") -> bytes:
        return self.keys[kid].public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def token(self, user: str = "alice", *, kid: str = "k1", key: Any = None,
              lifetime: float = 600, **claims: Any) -> str:  # fmt: skip
        """A token of ``user``; ``claims`` override or (None) remove the standard ones."""
        now = int(time.time())
        body: dict[str, Any] = {"iss": ISSUER, "aud": AUDIENCE, "sub": user, "iat": now,
                                "exp": now + int(lifetime)}  # fmt: skip
        for name, value in claims.items():
            if value is None:
                body.pop(name, None)
            else:
                body[name] = value
        return jwt.encode(body, key or self.keys[kid], algorithm="RS256", headers={"kid": kid})


def unsigned(claims: dict[str, Any]) -> str:
    """A token with ``alg: none`` and no signature."""
    return f"{_part({'alg': 'none', 'typ': 'JWT', 'kid': 'k1'})}.{_part(claims)}."


def hs256_with_public_key(issuer: Issuer, claims: dict[str, Any]) -> str:
    """A token MACed with HS256 under the issuer's public key (PEM) as the secret: what an
    attacker makes against a server that lets the token choose the algorithm."""
    import hashlib
    import hmac

    signing = f"{_part({'alg': 'HS256', 'typ': 'JWT', 'kid': 'k1'})}.{_part(claims)}"
    mac = hmac.new(issuer.public_pem(), signing.encode(), hashlib.sha256).digest()
    return signing + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def _part(document: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).rstrip(b"=").decode()


@contextmanager
def serving(issuer: Issuer) -> Iterator[str]:
    """The issuer's JWKS served on loopback while the block runs: its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            issuer.fetches += 1
            data = json.dumps(issuer.jwks()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()
