"""Whether a store answers a cheap read, asked without opening it as a server does: nothing
is created, migrated or recovered, and the read is bounded in time. For readiness checks
(``/ready``, fb303's ``getStatus``).

A probe answers None when the store answered, else a short reason naming neither paths nor
addresses (it may be shown to anyone who can reach a health endpoint); what it hides is
returned beside it for the log."""

from __future__ import annotations

import os
import sqlite3
from urllib.parse import quote

from metastore_server.storage.hbase_settings import HBaseSettings
from metastore_server.storage.layout import META

#: The row a probe of HBase reads (absent: the read answers nothing, quickly).
PROBE_KEY = b"\x00ready-probe"


def probe_sqlite(path: str, timeout_s: float = 2.0) -> tuple[str | None, str]:
    """(reason, detail) of the embedded store at ``path``: (None, "") when a fresh read-only
    connection reads its table list."""
    if not os.path.exists(path):
        return "store: its file is gone", f"no file at {os.path.abspath(path)}"
    try:
        conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True,
                               timeout=timeout_s)  # fmt: skip
    except sqlite3.Error as exc:
        return "store: its file cannot be opened", str(exc)
    try:
        conn.execute("SELECT name FROM port_tables LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        return "store: its file cannot be read", str(exc)
    finally:
        conn.close()
    return None, ""


def probe_hbase(settings: HBaseSettings, timeout_s: float = 3.0) -> tuple[str | None, str]:
    """(reason, detail) of HBase: (None, "") when the Thrift gateway, on a connection of its
    own, reads a row of the meta table (absent or not)."""
    import happybase

    timeout_ms = int(min(settings.timeout_ms, timeout_s * 1000))
    try:
        connection = happybase.Connection(settings.host, settings.port, timeout=timeout_ms,
                                          transport=settings.transport,
                                          protocol=settings.protocol,
                                          autoconnect=False)  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - a probe answers, it never raises
        return "store: HBase cannot be reached", f"{type(exc).__name__}: {exc}"
    try:
        connection.open()
        connection.client.getRowWithColumns(settings.table_name(META), PROBE_KEY, None, {})
    except Exception as exc:  # noqa: BLE001 - whatever the gateway or the network does
        return "store: HBase does not answer", f"{type(exc).__name__}: {exc}"
    finally:
        connection.close()
    return None, ""
