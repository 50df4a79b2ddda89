"""Freshness and paging of the Iceberg REST catalog, and their attacks, against the server
started as users start it: ETags on create, load and commit answers, 304 on a matching
``If-None-Match`` only for a caller who may read the table (never a way to learn that a table
exists or what it points at), page tokens that are checked and bounded, and pages that hold
every name once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
from support.rest_attacks import Setting, start  # noqa: E402
from support.rest_attacks import commit as _commit  # noqa: E402
from support.rest_attacks import create as _create  # noqa: E402
from support.rest_attacks import namespace as _namespace  # noqa: E402
from support.rest_attacks import secured as secured_setting  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402
from support.rest_attacks import view as _view  # noqa: E402

from metastore_server.rest import paging  # noqa: E402


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from start(tmp_path_factory.mktemp("rest-fresh"))


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from secured_setting(tmp_path_factory.mktemp("rest-fresh-secured"))


def _load(setting: Setting, path: str, tag: str | None = None, token: str = "",
          ) -> tuple[int, dict[str, str], Any]:  # fmt: skip
    headers = {"If-None-Match": tag} if tag is not None else None
    return setting.both.exchange("GET", path, token=token, headers=headers)


def test_etags_follow_the_tables_version(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "fresh")
    status, headers, created = both.exchange(
        "POST", "/v1/namespaces/fresh/tables", {"name": "t", "schema": _schema()})
    assert status == 200 and headers["etag"].startswith('"'), headers
    path = "/v1/namespaces/fresh/tables/t"
    status, loaded_headers, loaded = _load(setting, path)
    assert status == 200 and loaded_headers["etag"] == headers["etag"]
    assert loaded["metadata-location"] == created["metadata-location"]
    # The tag of any of create, load or commit answers a 304, with no body.
    status, not_modified, body = _load(setting, path, headers["etag"])
    assert (status, body, not_modified["etag"]) == (304, None, headers["etag"])
    assert _load(setting, path, f'W/{headers["etag"]}')[0] == 304  # as a proxy leaves it
    assert _load(setting, path, '"another"')[0] == 200
    refs = _load(setting, path + "?snapshots=refs")
    assert refs[0] == 200 and refs[1]["etag"] != headers["etag"]  # another form, another tag
    assert _load(setting, path + "?snapshots=refs", headers["etag"])[0] == 200
    assert _load(setting, path + "?snapshots=refs", refs[1]["etag"])[0] == 304
    status, commit_headers, _ = both.exchange("POST", path, {
        "requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]})
    assert status == 200 and commit_headers["etag"] != headers["etag"]
    assert _load(setting, path, headers["etag"])[0] == 200  # the old version: the whole load
    assert _load(setting, path, commit_headers["etag"])[0] == 304
    setting.untouched()


def test_views_carry_etags_too(setting: Setting) -> None:
    _namespace(setting.both, "fresh_views")
    status, answer = _view(setting.both, "fresh_views", "v")
    assert status == 200, answer
    path = "/v1/namespaces/fresh_views/views/v"
    status, headers, _ = _load(setting, path)
    assert status == 200 and _load(setting, path, headers["etag"])[0] == 304


def test_if_none_match_never_tells_a_caller_what_he_may_not_read(secured: Setting) -> None:
    """bob has no privilege on alice's table: with her tag, or ``*``, he gets the 403 a load
    gets, never a 304 (which would tell him the table exists and is at that version); a
    missing table is a 404 whatever the tag."""
    both = secured.both
    alice = _token(both, "alice")
    _namespace(both, "fresh_alice", alice)
    assert _create(both, "fresh_alice", "t", alice)[0] == 200
    path = "/v1/namespaces/fresh_alice/tables/t"
    status, headers, _ = _load(secured, path, token=alice)
    assert status == 200
    assert _load(secured, path, headers["etag"], alice)[0] == 304
    bob = _token(both, "bob")
    for tag in (headers["etag"], "*", f'"x", {headers["etag"]}'):
        status, got, body = _load(secured, path, tag, bob)
        assert status == 403 and "etag" not in got, (status, got, body)
    assert _load(secured, path, headers["etag"])[0] == 401  # no credentials at all
    assert _load(secured, "/v1/namespaces/fresh_alice/tables/none", "*", alice)[0] == 404
    secured.untouched()


def test_pages_hold_every_name_once_and_bad_tokens_are_refused(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "paged")
    names = [f"t{i:02}" for i in range(12)]
    for name in reversed(names):
        assert _create(both, "paged", name)[0] == 200
    _view(both, "paged", "not_a_table")
    status, whole = both.http("GET", "/v1/namespaces/paged/tables")
    assert status == 200 and whole["next-page-token"] is None
    assert [i["name"] for i in whole["identifiers"]] == names
    seen: list[str] = []
    query = "?pageToken=&pageSize=5"
    while True:
        status, page = both.http("GET", "/v1/namespaces/paged/tables" + query)
        assert status == 200 and len(page["identifiers"]) <= 5, page
        seen += [i["name"] for i in page["identifiers"]]
        if page["next-page-token"] is None:
            break
        query = f"?pageToken={page['next-page-token']}&pageSize=5"
    assert seen == names
    status, views = both.http("GET", "/v1/namespaces/paged/views?pageSize=1")
    assert status == 200 and [i["name"] for i in views["identifiers"]] == ["not_a_table"]
    for bad in ("pageToken=nonsense", "pageSize=0", "pageSize=-3", "pageSize=abc",
                "pageToken=" + "A" * 5000):  # fmt: skip
        for listing in ("/v1/namespaces", "/v1/namespaces/paged/tables",
                        "/v1/namespaces/paged/views"):  # fmt: skip
            status, body = both.http("GET", f"{listing}?{bad}")
            assert status == 400 and body["error"]["type"] == "BadRequestException", (bad, body)
            assert "AAAAAAAAAA" not in body["error"]["message"]  # the token is not echoed
    status, big = both.http("GET", "/v1/namespaces?pageSize=100000000")
    assert status == 200 and len(big["namespaces"]) <= paging.MAX_PAGE_SIZE
    # A token naming a name past every table (forged, or made in another namespace): the
    # page after it is empty, never an error nor another namespace's names.
    status, page = both.http("GET", "/v1/namespaces/paged/tables?pageToken="
                             + paging.token_after("zzz"))  # fmt: skip
    assert status == 200 and page == {"identifiers": [], "next-page-token": None}
    status, _ = _commit(both, "paged", "t00", [])
    assert status == 200
    setting.untouched()


def test_namespaces_page_too(setting: Setting) -> None:
    both = setting.both
    for i in range(4):
        _namespace(both, f"pns_{i}")
    status, whole = both.http("GET", "/v1/namespaces")
    assert status == 200 and whole["next-page-token"] is None
    seen: list[list[str]] = []
    query = "?pageSize=2"
    while True:
        status, page = both.http("GET", "/v1/namespaces" + query)
        assert status == 200 and len(page["namespaces"]) <= 2
        seen += page["namespaces"]
        if page["next-page-token"] is None:
            break
        query = f"?pageSize=2&pageToken={page['next-page-token']}"
    assert seen == sorted(whole["namespaces"])


def test_pyiceberg_pages_through_its_listings(setting: Setting) -> None:
    """pyiceberg's ``rest-page-size`` walks the pages (``next-page-token``)."""
    from pyiceberg.catalog.rest import RestCatalog

    both = setting.both
    _namespace(both, "pyiceberg_pages")
    for i in range(7):
        assert _create(both, "pyiceberg_pages", f"p{i}")[0] == 200
    catalog = RestCatalog("rest", uri=both.uri, **{"rest-page-size": "3"})
    listed = catalog.list_tables("pyiceberg_pages")
    assert sorted(name for _, name in listed) == [f"p{i}" for i in range(7)]
    assert ("pyiceberg_pages",) in catalog.list_namespaces()


def _schema() -> dict[str, Any]:
    from support.rest_attacks import SCHEMA

    return SCHEMA
