"""EXPLAIN of a partition filter: the plan's scans in readable form, their residuals as filter
text and as HBase filter strings, and with ``analyze`` the rows each scan read and returned.

The text shows a scan's HBase filter string only on a store that runs it (``filters_scans``:
HBase); the answer's ``hbaseFilter`` field carries it on every store."""

from __future__ import annotations

from metastore_server.catalog.objects.tables import TableRef
from metastore_server.catalog.reads.scan import KeyRange, plan_ranges, range_counts
from metastore_server.planner.explain import describe_scan, format_bound, format_values, summary
from metastore_server.planner.plan import Get, MultiScanPlan
from metastore_server.storage.port import StoragePort
from metastore_server.thrift_api import hms


def printable_filter(text: str | None) -> str | None:
    """An HBase filter string (one character per byte) with unprintable bytes as ``\\xNN``."""
    if text is None:
        return None
    return "".join(ch if " " <= ch <= "~" else f"\\x{ord(ch):02x}" for ch in text)


def _filter_text(key_range: KeyRange) -> str | None:
    """The HBase filter string a range sends, as text (one character per byte)."""
    data = key_range.server_filter
    return None if data is None else data.decode("latin-1")


def explain_plan(
    store: StoragePort,
    ref: TableRef,
    plan: MultiScanPlan,
    *,
    analyze: bool = False,
    like: str = "regex",
) -> hms.ExplainFilterResult:
    """The EXPLAIN answer of a planned filter; with ``analyze`` the scans are run and counted."""
    names = ref.key_names
    ranges: list[KeyRange] = plan_ranges(ref, plan, like=like)
    normalized = "" if plan.filter is None else plan.filter.to_filter_string()
    lines = [f"table: {ref.db}.{ref.name} ({', '.join(f'{n} {t}' for n, t in ref.key_types)})"]
    lines.append(f"filter: {normalized or '(none: every partition)'}")
    lines.append(f"plan: {summary(plan)}")
    scans = []
    filters_shown = store.filters_scans
    total_scanned = total_returned = 0
    for scan, key_range in zip(plan.scans, ranges, strict=True):
        is_get = isinstance(scan, Get)
        explained = hms.ExplainedScan(
            kind="get" if is_get else "scan",
            start=f"[{format_values(scan.values, names)}]"
            if isinstance(scan, Get)
            else format_bound(scan.lower, names, upper=False),
            stop=f"[{format_values(scan.values, names)}]"
            if isinstance(scan, Get)
            else format_bound(scan.upper, names, upper=True),
            residual=None if scan.residual is None else scan.residual.to_filter_string(),
            hbaseFilter=printable_filter(_filter_text(key_range)),
        )
        lines.append(f"  {describe_scan(scan, names)}")
        if key_range.skip is not None:
            lines.append(
                f"      skip scan: under each {names[0]} value, "
                f"{len(key_range.skip.tails)} block(s) of the later keys"
            )
        if explained.hbaseFilter and filters_shown:
            lines.append(f"      hbase filter: {explained.hbaseFilter}")
        if analyze:
            scanned, returned = range_counts(store, ref, key_range)
            explained.rowsScanned, explained.rowsReturned = scanned, returned
            total_scanned += scanned
            total_returned += returned
            lines.append(f"      rows scanned {scanned}, returned {returned}")
        scans.append(explained)
    result = hms.ExplainFilterResult(normalizedFilter=normalized, scans=scans)
    if analyze:
        result.rowsScanned, result.rowsReturned = total_scanned, total_returned
        lines.append(f"total: rows scanned {total_scanned}, returned {total_returned}")
    result.text = "\n".join(lines)
    return result
