"""Paging and freshness of the REST catalog's answers, by their pure parts: page tokens made
and checked, pages cut in name order, ETags and ``If-None-Match`` compared as RFC 9110 says."""

from __future__ import annotations

import base64

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
from metastore_server.rest import freshness, paging  # noqa: E402
from metastore_server.rest.errors import RestError  # noqa: E402

NAMES = [f"t{i:03}" for i in range(25)]


def walk(names: list[str], size: int, keep: object = list) -> list[str]:
    """Every name, a page at a time."""
    seen: list[str] = []
    query = {"pageSize": str(size), "pageToken": ""}
    while True:
        page, token = paging.collect(names, paging.requested(query), keep, chunk=4)  # type: ignore[arg-type]
        assert len(page) <= size
        seen += page
        if token is None:
            return seen
        query = {"pageSize": str(size), "pageToken": token}


def test_pages_walk_the_whole_list_in_name_order_once() -> None:
    shuffled = NAMES[::-1]
    for size in (1, 3, 7, 25, 26, 1000):
        assert walk(shuffled, size) == NAMES
    odd = walk(shuffled, 4, lambda chunk: [n for n in chunk if int(n[1:]) % 2])
    assert odd == [n for n in NAMES if int(n[1:]) % 2]


def test_no_paging_asked_is_the_whole_list_and_no_token() -> None:
    assert paging.requested({}) == paging.WHOLE
    assert paging.collect(NAMES, paging.WHOLE, list) == (NAMES, None)


def test_a_size_alone_pages_and_a_size_is_bounded() -> None:
    page, token = paging.collect(NAMES, paging.requested({"pageSize": "10"}), list)
    assert page == NAMES[:10] and token is not None
    assert paging.requested({"pageSize": "99999999999"}).size == paging.MAX_PAGE_SIZE
    assert paging.requested({"pageToken": ""}).size == paging.DEFAULT_PAGE_SIZE


@pytest.mark.parametrize("size", ["0", "-1", "x", "1.5", "", " 3", "٣"])
def test_a_bad_size_is_a_400(size: str) -> None:
    with pytest.raises(RestError) as refused:
        paging.requested({"pageSize": size})
    assert refused.value.code == 400


@pytest.mark.parametrize("token", [
    "garbage!", "e30", base64.urlsafe_b64encode(b'{"v":2,"after":"a"}').decode(),
    base64.urlsafe_b64encode(b'{"v":1,"after":5}').decode(), "A" * 5000, "é",
    base64.urlsafe_b64encode(b"[" * 10000).decode(),
])  # fmt: skip
def test_a_token_this_server_did_not_make_is_a_400(token: str) -> None:
    with pytest.raises(RestError) as refused:
        paging.requested({"pageToken": token})
    assert refused.value.code == 400 and token not in refused.value.message


def test_etags_name_the_version_and_the_form() -> None:
    one = freshness.etag("table", "file:/w/t/metadata/00001-a.metadata.json")
    assert one is not None and one.startswith('"') and one.endswith('"') and "/" not in one
    assert one == freshness.etag("table", "file:/w/t/metadata/00001-a.metadata.json", "all")
    assert one != freshness.etag("table", "file:/w/t/metadata/00001-a.metadata.json", "refs")
    assert one != freshness.etag("view", "file:/w/t/metadata/00001-a.metadata.json")
    assert one != freshness.etag("table", "file:/w/t/metadata/00002-b.metadata.json")
    assert freshness.etag("table", None) is None


def test_if_none_match_compares_weakly_and_takes_lists() -> None:
    tag = freshness.etag("table", "file:/x.metadata.json")
    assert freshness.matches(tag, tag) and freshness.matches(f"W/{tag}", tag)
    assert freshness.matches(f'"other", {tag}', tag) and freshness.matches("*", tag)
    assert not freshness.matches('"other"', tag) and not freshness.matches("", tag)
    assert not freshness.matches(tag.strip('"'), tag) and not freshness.matches(None, tag)
    assert not freshness.matches(tag, None)
