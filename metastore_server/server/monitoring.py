"""Health and metrics over HTTP, for operators and orchestrators: ``/health``, ``/ready`` and
``/metrics`` on ``--metrics-port`` (on ``--host``), served from a thread of the supervisor (or
of the server in one process) by the standard library's ``http.server``.

* ``/health``: 200 while the process answers (liveness).
* ``/ready``: 200 when workers are ready to take connections and the store answers a cheap
  read (``StoreHealth``), else 503 with the reason (readiness).
* ``/metrics``: every process's figures in Prometheus's text format
  (:func:`metastore_server.metrics.exposition`).

No credentials are asked (see docs/security.md): the port is the operators', bound to loopback
unless ``--host`` says otherwise. Requests are small and served one thread each, each
connection dropped after ``REQUEST_TIMEOUT_S`` of silence; nothing is logged per request.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import structlog

from metastore_server import metrics
from metastore_server.storage.open import probe_store

log = structlog.get_logger(__name__)

#: A store is read at most this often for readiness; askers in between get the last answer.
PROBE_EVERY_S = 1.0
#: Seconds a monitoring connection may stay silent.
REQUEST_TIMEOUT_S = 10.0

Check = Callable[[], str | None]


class StoreHealth:
    """Whether the store answers (None) or why not: a fresh cheap read of it, made at most
    once per ``PROBE_EVERY_S``; a change either way is logged once."""

    def __init__(
        self, url: str, probe: Callable[[str], tuple[str | None, str]] = probe_store
    ) -> None:
        self._url = url
        self._probe = probe
        self._lock = threading.Lock()
        self._checked = -math.inf
        self._reason: str | None = None

    def __call__(self) -> str | None:
        with self._lock:  # one probe at a time: others wait for its answer
            if time.monotonic() - self._checked >= PROBE_EVERY_S:
                try:
                    reason, detail = self._probe(self._url)
                except Exception as exc:  # noqa: BLE001 - a check answers, it never raises
                    reason, detail = "store: cannot be checked", f"{type(exc).__name__}: {exc}"
                self._checked = time.monotonic()
                if reason != self._reason:
                    if reason is None:
                        log.info("store_answers")
                    else:
                        log.warning("store_not_answering", reason=reason, detail=detail)
                self._reason = reason
            return self._reason


def readiness(serving: Check, store: Check) -> Check:
    """Not ready while ``serving`` says why not (workers down), else while ``store`` does."""

    def check() -> str | None:
        return serving() or store()

    return check


class _Handler(BaseHTTPRequestHandler):
    """``GET``/``HEAD`` of the three paths; anything else is 404 (or 501 for other methods)."""

    server: _HttpServer
    timeout = REQUEST_TIMEOUT_S

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(with_body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(with_body=False)

    def _answer(self, *, with_body: bool) -> None:
        code, body, content_type = answer(self.path.split("?", 1)[0], self.server.ready)
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def version_string(self) -> str:
        """The ``Server`` header: no versions."""
        return "metastore"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's
        """No access log (probes come every few seconds)."""


TEXT = "text/plain; charset=utf-8"


def answer(path: str, ready: Check) -> tuple[int, bytes, str]:
    """(status, body, content type) of a monitoring ``path``."""
    if path == "/health":
        return 200, b"ok\n", TEXT
    if path == "/ready":
        reason = ready()
        if reason is None:
            return 200, b"ready\n", TEXT
        return 503, f"not ready: {reason}\n".encode(), TEXT
    if path == "/metrics":
        body, content_type = metrics.exposition()
        return 200, body, content_type
    return 404, b"not found: /health, /ready and /metrics are served here\n", TEXT


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], ready: Check) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.ready = ready
        super().__init__(address, _Handler)


class MonitoringServer:
    """``/health``, ``/ready`` and ``/metrics`` on ``host:port``, from a thread of its own."""

    def __init__(self, host: str, port: int, ready: Check) -> None:
        self._address = (host, port)
        self._ready = ready
        self._http: _HttpServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) bound."""
        assert self._http is not None, "not started"
        host, port = self._http.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        """Bind and serve in the background (OSError when the port cannot be bound)."""
        self._http = _HttpServer(self._address, self._ready)
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.5,),
                                        name="monitoring", daemon=True)  # fmt: skip
        self._thread.start()
        log.info("monitoring_listening", host=self.address[0], port=self.address[1],
                 paths="/health /ready /metrics")  # fmt: skip

    def stop(self) -> None:
        """Stop serving and close the port."""
        if self._http is None:
            return
        self._http.shutdown()
        self._http.server_close()
        self._http = None
