"""Minted credentials are reused, as Polaris keeps them: the same location, access and user get
the credential minted before while half its lifetime is left, and nothing else ever does.
Against moto's STS (in-process), every AssumeRole counted at the client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from metastore_server.rest import vending as vending_module
from metastore_server.rest.vending import Vending

moto = pytest.importorskip("moto", reason="moto is not installed")
boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")

ROLE = "arn:aws:iam::123456789012:role/vendor"
DURATION = 900


class Clock:
    """A clock the test moves (seconds since the epoch, starting now)."""

    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Vending, list[str], Clock]]:
    """Vending over moto's STS, the AssumeRole calls it makes (their session names), a clock."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "server")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "server-secret")
    calls: list[str] = []
    clock = Clock()
    with moto.mock_aws():
        sts = boto3.client("sts", region_name="us-east-1")

        def count(params: dict[str, Any], **_: Any) -> None:
            calls.append(params["RoleSessionName"])

        sts.meta.events.register("provide-client-params.sts.AssumeRole", count)
        vend = Vending(role_arn=ROLE, duration=DURATION, clock=clock)
        vend._client = sts
        yield vend, calls, clock


def _mint(vend: Vending, location: str, write: bool = True, user: str = "alice") -> Any:
    minted = vend.mint(location, write, user)
    assert minted is not None
    return minted


def test_a_credential_is_reused_for_its_location_access_and_user_only(
    counted: tuple[Vending, list[str], Clock],
) -> None:
    vend, calls, _ = counted
    first = _mint(vend, "s3://b/wh/db/t")
    assert _mint(vend, "s3://b/wh/db/t/") is first  # the same location, with its slash
    assert calls == ["iceberg-alice"]
    # Another table (also one whose name extends it), read-only access, another user: each
    # its own credential, minted for it.
    others = [_mint(vend, "s3://b/wh/db/t2"), _mint(vend, "s3://b/wh/db/t", write=False),
              _mint(vend, "s3://b/wh/db/t", user="bob"), _mint(vend, "s3://c/wh/db/t")]
    assert len(calls) == 5 and calls[-2:] == ["iceberg-bob", "iceberg-alice"]
    assert [o.prefix for o in others] == ["s3://b/wh/db/t2/", "s3://b/wh/db/t/",
                                          "s3://b/wh/db/t/", "s3://c/wh/db/t/"]
    assert [o.write for o in others] == [True, False, True, True]
    assert len({o.access_key for o in [first, *others]}) == 5
    # Each is reused in turn.
    assert _mint(vend, "s3://b/wh/db/t", write=False) is others[1]
    assert _mint(vend, "s3://b/wh/db/t", user="bob") is others[2]
    assert len(calls) == 5


def test_a_credential_past_half_its_life_is_minted_anew(
    counted: tuple[Vending, list[str], Clock],
) -> None:
    vend, calls, clock = counted
    first = _mint(vend, "s3://b/wh/db/t")
    clock.now += DURATION / 2 - 30  # more than half left: reused
    assert _mint(vend, "s3://b/wh/db/t") is first
    clock.now += 60  # less than half left: a new one, kept in its place
    second = _mint(vend, "s3://b/wh/db/t")
    assert second is not first and second.access_key != first.access_key
    assert _mint(vend, "s3://b/wh/db/t") is second
    assert len(calls) == 2


def test_the_least_recently_used_go_first(counted: tuple[Vending, list[str], Clock],
                                          monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    vend, calls, _ = counted
    monkeypatch.setattr(vending_module, "KEPT_CREDENTIALS", 2)
    a = _mint(vend, "s3://b/a")
    _mint(vend, "s3://b/b")
    assert _mint(vend, "s3://b/a") is a  # a used last: b goes when c comes
    _mint(vend, "s3://b/c")
    assert _mint(vend, "s3://b/a") is a
    assert len(calls) == 3
    _mint(vend, "s3://b/b")  # minted again
    assert len(calls) == 4


def test_nothing_is_kept_for_locations_not_on_s3(
    counted: tuple[Vending, list[str], Clock],
) -> None:
    vend, calls, _ = counted
    assert vend.mint("file:/tmp/wh/t", True, "alice") is None
    assert vend.mint("hdfs://nn/wh/t", True, "alice") is None
    assert calls == [] and not vend._kept
