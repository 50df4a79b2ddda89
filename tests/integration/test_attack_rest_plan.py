"""Attacks on server-side scan planning, against the server started as users start it, under
``--auth none`` and ``--auth password --authorization privileges`` (with ``--data-roots``):
plans only of tables the caller may read, plan ids and plan-task tokens bound to their caller
and table and not to be guessed, malformed or oversized requests refused with 400, and a
table's metadata that names another table's manifests refused before anything is read.

A test here that fails is a bypass that was found; one that passes is an attack refused."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
import pyarrow as pa  # noqa: E402
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from support.rest_attacks import PASSWORDS, Setting, start  # noqa: E402
from support.rest_attacks import commit as _commit  # noqa: E402
from support.rest_attacks import create as _create  # noqa: E402
from support.rest_attacks import namespace as _namespace  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402

from metastore_server.thrift_api import hms  # noqa: E402

#: Plans of more than one data file are made in the background; one task an answer.
PLANNING = ["--rest-plan-async-files", "1", "--rest-plan-batch", "1"]


@pytest.fixture(scope="module")
def open_setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from start(tmp_path_factory.mktemp("rest-plan-attack"), PLANNING, 200)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    """``--auth password`` (alice, bob) with ``--authorization privileges``."""
    from metastore_server.server.passwords import hash_password

    work = tmp_path_factory.mktemp("rest-plan-attack-secured")
    passwords = work / "passwords"
    passwords.write_text("".join(f"{u}:{hash_password(p)}\n" for u, p in PASSWORDS.items()))
    yield from start(work, ["--auth", "password", "--password-file", str(passwords),
                            "--authorization", "privileges", "--rest-oauth-tokens", "on",
                            *PLANNING])  # fmt: skip


def _table_with_data(setting: Setting, ns: str, name: str, token: str = "") -> str:
    """``ns.name`` with three appends (three data files); its plan path."""
    _namespace(setting.both, ns, token)
    status, created = _create(setting.both, ns, name, token)
    assert status == 200, created
    catalog = RestCatalog("rest", uri=setting.both.uri, **({"token": token} if token else {}))
    table = catalog.load_table(f"{ns}.{name}")
    for value in range(3):
        table.append(pa.table({"id": pa.array([value], pa.int64())}))
    return f"/v1/namespaces/{ns}/tables/{name}/plan"


def _tasks_path(plan_path: str) -> str:
    return plan_path.rsplit("/plan", 1)[0] + "/tasks"


def _completed(setting: Setting, path: str, answer: dict[str, Any],
               token: str = "") -> dict[str, Any]:  # fmt: skip
    """The plan's completed answer (polled while submitted)."""
    deadline = time.monotonic() + 120
    while answer["status"] == "submitted":
        assert time.monotonic() < deadline
        time.sleep(0.05)
        status, answer = setting.both.http("GET", f"{path}/{answer['plan-id']}", token=token)
        assert status == 200, answer
    assert answer["status"] == "completed", answer
    return answer


def _grant_select(setting: Setting, owner: str, db: str, name: str, to: str) -> None:
    ref = hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName=db, objectName=name)
    info = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="ignored",
                                  grantorType=hms.PrincipalType.USER, grantOption=False)
    with setting.thrift(owner) as client:
        assert client.grant_privileges(hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
            hiveObject=ref, principalName=to, principalType=hms.PrincipalType.USER,
            grantInfo=info)]))  # fmt: skip


def test_a_caller_who_may_not_read_the_table_gets_no_plan(secured: Setting) -> None:
    both = secured.both
    alice, bob = _token(both, "alice"), _token(both, "bob")
    path = _table_with_data(secured, "plan_alice", "t", alice)
    status, mine = both.http("POST", path, {}, token=alice)
    assert status == 200 and mine["status"] == "submitted", mine
    for body in ({}, {"filter": {"type": "eq", "term": "id", "value": 1}}):
        status, refused = both.http("POST", path, body, token=bob)
        assert status == 403 and refused["error"]["type"] == "ForbiddenException", refused
        assert "plan-id" not in refused and "file-scan-tasks" not in refused
    assert both.http("POST", path, {})[0] == 401  # no credentials
    plan = f"{path}/{mine['plan-id']}"
    for method in ("GET", "DELETE"):
        assert both.http(method, plan, token=bob)[0] == 403
    done = _completed(secured, path, mine, alice)  # bob's DELETE cancelled nothing
    token = done["plan-tasks"][0]
    status, answer = both.http("POST", _tasks_path(path), {"plan-task": token}, token=bob)
    assert status == 403 and "file-scan-tasks" not in answer
    status, batch = both.http("POST", _tasks_path(path), {"plan-task": token}, token=alice)
    assert status == 200 and len(batch["file-scan-tasks"]) == 1, batch
    secured.untouched()


def test_another_callers_plan_cannot_be_fetched_or_cancelled(secured: Setting) -> None:
    """bob may read alice's table (SELECT) and plan it himself, but her plan id and tokens
    are hers: 404 to him, and her plan goes on."""
    both = secured.both
    alice, bob = _token(both, "alice"), _token(both, "bob")
    path = _table_with_data(secured, "plan_shared", "t", alice)
    _grant_select(secured, "alice", "plan_shared", "t", "bob")
    status, hers = both.http("POST", path, {}, token=alice)
    assert status == 200 and hers["status"] == "submitted", hers
    plan = f"{path}/{hers['plan-id']}"
    for method in ("GET", "DELETE"):
        status, answer = both.http(method, plan, token=bob)
        assert status == 404 and answer["error"]["type"] == "NoSuchPlanIdException", answer
    status, his = both.http("POST", path, {}, token=bob)  # he may plan it himself
    assert status == 200 and his["plan-id"] != hers["plan-id"]
    done = _completed(secured, path, hers, alice)
    assert len(done["file-scan-tasks"]) == 1 and len(done["plan-tasks"]) == 2
    for token in done["plan-tasks"]:
        status, answer = both.http("POST", _tasks_path(path), {"plan-task": token}, token=bob)
        assert status == 404 and answer["error"]["type"] == "NoSuchPlanTaskException"
    # Her id on another table of hers is no plan either.
    other = _table_with_data(secured, "plan_shared", "other", alice)
    assert both.http("GET", f"{other}/{hers['plan-id']}", token=alice)[0] == 404
    got = [both.http("POST", _tasks_path(path), {"plan-task": t}, token=alice)
           for t in done["plan-tasks"]]  # fmt: skip
    assert [status for status, _ in got] == [200, 200]
    secured.untouched()


def _bad_bodies() -> list[Any]:
    eq = {"type": "eq", "term": "id", "value": 1}
    deep: Any = eq
    for _ in range(200):
        deep = {"type": "not", "child": deep}
    return [
        {"filter": {"type": "eq", "term": "id"}},                   # no value
        {"filter": {"type": "eq", "term": "id", "value": 1, "x": 1}},  # an unknown key
        {"filter": {"type": "like", "term": "id", "value": 1}},     # an unknown type
        {"filter": {"type": "eq", "term": {"type": "transform", "transform": "bucket[4]",
                                           "term": "id"}, "value": 1}},  # fmt: skip
        {"filter": {"type": "eq", "term": "id", "value": {"a": 1}}},  # not a scalar
        {"filter": {"type": "eq", "term": "id", "value": 2**64}},   # no long
        {"filter": {"type": "in", "term": "id", "values": list(range(10_001))}},
        {"filter": {"type": "in", "term": "id", "values": []}},
        {"filter": {"type": "eq", "term": "nope", "value": 1}},     # no such column
        {"filter": {"type": "eq", "term": "id", "value": "abc"}},   # not a long
        {"filter": deep},                                           # too deep
        {"filter": "id = 1"},                                       # a string expression
        {"filter": {"type": "and", "left": eq}},
        {"select": ["id"] * 10_001},
        {"select": "id"},
        {"select": ["nope"]},
        {"stats-fields": [1]},
        {"min-rows-requested": 2**64},
        {"min-rows-requested": -1},
        {"snapshot-id": "1"},
        {"snapshot-id": 1234},                                      # no such snapshot
        {"snapshot-id": 1, "start-snapshot-id": 1, "end-snapshot-id": 2},
        {"start-snapshot-id": 1},
        {"case-sensitive": "yes"},
        {"unknown-field": 1},
        [],
    ]


@pytest.mark.parametrize("mode", ["none", "password"])
def test_malformed_requests_are_refused_with_400(mode: str, request: pytest.FixtureRequest,
                                                 ) -> None:  # fmt: skip
    setting: Setting = request.getfixturevalue("open_setting" if mode == "none" else "secured")
    token = _token(setting.both, "alice") if mode == "password" else ""
    path = _table_with_data(setting, f"plan_bad_{mode}", "t", token)
    both = setting.both
    for body in _bad_bodies():
        status, answer = both.http("POST", path, body, token=token)
        assert status == 400, (json.dumps(body)[:200], answer)
        assert answer["error"]["type"] == "BadRequestException" and answer["error"]["code"] == 400
    for raw in (b"not json", b"[" * 100_000, b'{"filter": ' * 5000):
        assert both.http("POST", path, raw, token=token)[0] == 400
    tasks = _tasks_path(path)
    for body in ({}, {"plan-task": 5}, {"plan-task": "x", "more": 1}, {"plan-task": ""}):
        assert both.http("POST", tasks, body, token=token)[0] == 400, body
    status, answer = both.http("POST", tasks, {"plan-task": "A" * 100_000}, token=token)
    assert status == 404 and "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" \
        not in answer["error"]["message"]  # fmt: skip
    assert both.http("GET", f"{path}/{'B' * 5000}", token=token)[0] == 404
    status, answer = both.http("POST", path, {"filter": {"type": "eq", "term": "id", "value": 1}},
                               token=token)  # fmt: skip
    assert status == 200 and answer["status"] in ("submitted", "completed")  # still serving
    setting.untouched()


def test_plan_ids_and_tokens_are_unguessable(open_setting: Setting) -> None:
    both = open_setting.both
    path = _table_with_data(open_setting, "plan_ids", "t")
    ids, tokens = set(), set()
    for _ in range(12):
        status, answer = both.http("POST", path, {})
        if status == 503:  # plans running at once are bounded: let them finish
            time.sleep(0.2)
            continue
        done = _completed(open_setting, path, answer)
        ids.add(done["plan-id"])
        tokens.update(done["plan-tasks"])
    assert len(ids) >= 6 and len(tokens) == 2 * len(ids)  # every one new
    for made in ids | tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", made), made  # 256 random bits
    known = sorted(ids)[0]
    forged = known[:-1] + ("A" if known[-1] != "A" else "B")
    assert both.http("GET", f"{path}/{forged}")[0] == 404
    assert both.http("GET", f"{path}/{sorted(tokens)[0]}")[0] == 404  # a token is no plan id
    status, answer = both.http("POST", _tasks_path(path), {"plan-task": known})
    assert status == 404 and answer["error"]["type"] == "NoSuchPlanTaskException"
    open_setting.untouched()


def _outcome(setting: Setting, plan: str) -> tuple[int, Any]:
    """A background plan's outcome: its error's code and the error, or 200 and the answer."""
    deadline = time.monotonic() + 120
    while True:
        status, answer = setting.both.http("GET", plan)
        assert status == 200, answer
        if answer["status"] == "failed":
            return answer["error"]["code"], answer["error"]
        if answer["status"] != "submitted":
            return status, answer
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_table_naming_another_tables_manifests_is_not_planned(open_setting: Setting) -> None:
    """mallory's table gets a snapshot whose manifest list is the victim's (or a file
    outside the data roots): the plan is refused before the file is read, and no path of the
    victim's is answered."""
    both = open_setting.both
    _table_with_data(open_setting, "plan_victim", "t")
    status, victim = both.http("GET", "/v1/namespaces/plan_victim/tables/t")
    assert status == 200
    current = victim["metadata"]["current-snapshot-id"]
    victims_list = next(s["manifest-list"] for s in victim["metadata"]["snapshots"]
                        if s["snapshot-id"] == current)  # fmt: skip
    _namespace(both, "plan_mallory")
    outside = str(Path(open_setting.outside) / "list.avro")
    planned = 0
    for number, manifest_list in enumerate((victims_list, "file:" + outside), start=1):
        name = f"t{number}"
        assert _create(both, "plan_mallory", name)[0] == 200
        snapshot = {"snapshot-id": 7000 + number, "sequence-number": 1, "schema-id": 0,
                    "timestamp-ms": int(time.time() * 1000), "manifest-list": manifest_list,
                    "summary": {"operation": "append"}}  # fmt: skip
        status, committed = _commit(both, "plan_mallory", name, [
            {"action": "add-snapshot", "snapshot": snapshot},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
             "snapshot-id": 7000 + number}])  # fmt: skip
        if status != 200:
            continue  # the commit was refused: the attack ends there
        planned += 1
        for body in ({}, {"stats-fields": ["id"]}):
            status, answer = both.http("POST", f"/v1/namespaces/plan_mallory/tables/{name}/plan",
                                       body)  # fmt: skip
            if status == 200:
                status, answer = _outcome(open_setting, f"/v1/namespaces/plan_mallory/tables/"
                                          f"{name}/plan/{answer['plan-id']}")  # fmt: skip
            assert status == 403, answer
            assert "plan_victim" not in json.dumps(answer)
    assert planned >= 1  # commits take a foreign manifest list: the planner is what refuses
    open_setting.untouched()
