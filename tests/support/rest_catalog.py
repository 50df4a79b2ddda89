"""Our server's Iceberg REST catalog as tests reach it: the REST URI beside the Thrift
endpoint, raw requests, pyiceberg catalogs of both protocols, and a wait for the start."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from .net import LOOPBACK
from .our_server import OurServer

#: How long a REST catalog may take to start on a loaded machine (it starts in a few
#: seconds; the wait ends as soon as it answers).
START_WAIT_S = 180.0

class Both:
    """Our server with its REST catalog: the REST URI and the Thrift endpoint."""

    def __init__(self, server: OurServer, rest_port: int) -> None:
        self.server = server
        self.uri = f"http://{LOOPBACK}:{rest_port}"
        self.thrift = f"thrift://{LOOPBACK}:{server.port}"

    def rest_catalog(self) -> Any:
        from pyiceberg.catalog import rest

        return rest.RestCatalog("rest", uri=self.uri)

    def hive_catalog(self, warehouse: Path) -> Any:
        from pyiceberg.catalog import hive

        return hive.HiveCatalog("hive", uri=self.thrift, warehouse=f"file://{warehouse}", **{
            "lock-check-min-wait-time": "0.01", "lock-check-max-wait-time": "0.2",
            "lock-check-retries": "100"})  # fmt: skip

    def http(self, method: str, path: str, body: Any = None, token: str = "",
             content_type: str = "application/json") -> tuple[int, Any]:  # fmt: skip
        """A raw request: status and decoded JSON body (None when empty)."""
        data = None if body is None else (body if isinstance(body, bytes) else
                                          json.dumps(body).encode())  # fmt: skip
        headers = {"Content-Type": content_type}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.uri + path, data=data, method=method,
                                         headers=headers)  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                text = answer.read()
                return answer.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, json.loads(text) if text else None

    def exchange(
        self, method: str, path: str, body: Any = None, token: str = "",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], Any]:  # fmt: skip
        """A raw request with ``headers``: status, the answer's headers (names in lower
        case) and decoded JSON body (None when empty)."""
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        if token:
            sent["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.uri + path, data=data, method=method,
                                         headers=sent)  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                text = answer.read()
                got = {k.lower(): v for k, v in answer.headers.items()}
                return answer.status, got, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read()
            got = {k.lower(): v for k, v in error.headers.items()}
            return error.code, got, json.loads(text) if text else None

    def token(self, grant: str, client: str, secret: str) -> tuple[int, Any]:
        """A request to the OAuth2 token endpoint (a form, as clients send it)."""
        form = urllib.parse.urlencode({"grant_type": grant, "client_id": client,
                                       "client_secret": secret, "scope": "catalog"})
        return self.http("POST", "/v1/oauth/tokens", form.encode(),
                         content_type="application/x-www-form-urlencoded")


def ready(running: Both, status: int) -> Both:
    """``running`` once its REST catalog answers ``GET /v1/config`` with ``status``."""
    deadline = time.monotonic() + START_WAIT_S
    while True:
        try:
            if running.http("GET", "/v1/config")[0] == status:
                return running
        except OSError:
            pass  # not listening yet
        assert time.monotonic() < deadline, "the REST catalog did not start"
        time.sleep(0.1)
