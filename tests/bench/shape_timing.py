"""Timing one call shape on one target: warm-up, timed calls, our server's audit lines of
them, and the figures (``Result``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from process_memory import MemorySampler
from timing_clients import DrainClient, JavaClient, PythonClient, open_client

if TYPE_CHECKING:
    from bench_targets import Target
    from filter_shapes import Shape


@dataclass
class Result:
    """The figures of one shape on one target."""

    samples_ms: list[float] = field(default_factory=list)
    returned: int | None = None
    scanned: int | None = None
    matched: int | None = None
    server_ms: list[float] = field(default_factory=list)
    error: str | None = None
    #: Growth of the server's resident memory (its processes together) while timed, MiB.
    memory_mib: float | None = None

    def pct(self, q: float) -> float:
        """Latency percentile ``q`` (0..100) in ms, interpolated between samples."""
        xs = sorted(self.samples_ms)
        if not xs:
            return float("nan")
        pos = (len(xs) - 1) * q / 100
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def time_shape(
    target: Target,
    shape: Shape,
    *,
    client_kind: str,
    warmup: int,
    repeat: int,
    max_seconds: float,
) -> Result:
    """Warm up, then time ``repeat`` calls (see ``timed_calls``) of one shape."""
    result = Result()
    client: PythonClient | JavaClient | DrainClient | None = None
    sampler = MemorySampler(target.pid) if target.pid is not None else None
    try:
        client = open_client(client_kind, target)
        timed = client.timed
        with sampler if sampler is not None else contextlib.nullcontext():
            result.returned = timed_calls(
                target,
                result,
                lambda: timed(shape.method, *shape.args),
                warmup=warmup,
                repeat=repeat,
                max_seconds=max_seconds,
            )
        if sampler is not None:
            result.memory_mib = sampler.growth_mib
    except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
        result.error = error_text(exc)
        return result
    finally:
        if client is not None:
            client.close()
    read_audit(target, shape.method, result)
    return result


def timed_calls(
    target: Target,
    result: Result,
    call: Callable[[], tuple[Any, float]],
    *,
    warmup: int,
    repeat: int,
    max_seconds: float,
) -> Any:
    """Warm up, then time ``repeat`` calls of ``call`` (it returns its answer and its time in
    ms, added to ``result``); fewer when they take longer than ``max_seconds`` (at least one),
    and fewer warm-up calls when they take over a quarter of it. The last answer."""
    warm_until = time.monotonic() + max_seconds / 4
    for _ in range(warmup):
        call()
        if time.monotonic() > warm_until:
            break
    if target.audit is not None:
        target.audit.mark()
    deadline = time.monotonic() + max_seconds
    answer = None
    for _ in range(repeat):
        answer, ms = call()
        result.samples_ms.append(ms)
        if time.monotonic() > deadline:
            break
    return answer


def read_audit(target: Target, method: str, result: Result) -> list[dict[str, Any]]:
    """Our server's audit lines of the timed calls: their own times and the last one's row
    counts go into ``result``; the lines (none for other targets)."""
    if target.audit is None:
        return []
    calls = target.audit.calls(method)
    result.server_ms = [float(c["ms"]) for c in calls if "ms" in c]
    if calls:
        result.scanned = calls[-1].get("rows_scanned")
        result.matched = calls[-1].get("rows_matched")
    return calls


def error_text(exc: BaseException) -> str:
    """A failed shape's error as the report shows it."""
    message = getattr(exc, "message", None) or str(exc)
    return f"{type(exc).__name__}: {message}"[:200]
