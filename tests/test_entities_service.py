"""Entity resolution over the HTTP service (kgrag/server/entities.py), against a real uvicorn server on 127.0.0.1:
the open proposals with their evidence, decisions (merge, reject, split, undo) as jobs to poll, the answer that
needs a merge, and requests no job could apply refused at once with one line.

The index holds the sample corpus, built with no automatic merge: "TMS" and
"Tarnholm Maritime Society" are two entities until a person merges them."""

import json
import shutil
import time

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph_store.jobs import decide_job, undo_job
from graph_store.settings import load_settings
from graph_store.store import Decision
from kgrag import KGRag
from kgrag.server import create_app
from tests.helpers import serve_in_thread
from tests.test_entities import TMS

pytestmark = pytest.mark.door
KEY = {"Authorization": "Bearer entities-key"}
TMS_QUESTION = "When was the TMS founded?"  # 1903, in the full name's passage only


@pytest.fixture(scope="module")
def unmerged_index(tmp_path_factory, embedder, sample_docs):
    """The sample corpus indexed with no automatic merge (a folder each test copies)."""
    from graph_store.index import KnowledgeIndex

    base = tmp_path_factory.mktemp("entities-service")
    settings = load_settings(environ={}, index_dir=base / "idx", entity_auto_merge=1.0)
    index = KnowledgeIndex(settings, embedder=embedder, progress=False)
    index.add_documents(sample_docs)
    index.close()
    return base / "idx"


def serve_copy(unmerged_index, folder):
    """The service on a copy of the index; its entities' base URL and the server (stop: should_exit)."""
    shutil.copytree(unmerged_index, folder)
    settings = load_settings(environ={}, index_dir=folder, api_keys=["entities-key"], entity_auto_merge=1.0)
    server, base = serve_in_thread(
        create_app(settings, {"demo": KGRag(settings=settings)}, checkpointer=InMemorySaver())
    )
    return base + "/v1/indexes/demo/entities", server


@pytest.fixture
def service(unmerged_index, tmp_path):
    """A service of its own, for a test that decides."""
    base, server = serve_copy(unmerged_index, tmp_path / "idx")
    yield base
    server.should_exit = True


@pytest.fixture(scope="module")
def refusing(unmerged_index, tmp_path_factory):
    """One service for the tests whose requests are all refused (each checks nothing was recorded)."""
    base, server = serve_copy(unmerged_index, tmp_path_factory.mktemp("refusing") / "idx")
    yield base
    server.should_exit = True


def finished(base: str, job: dict, seconds: float = 120) -> dict:
    deadline = time.monotonic() + seconds
    while (job := httpx.get(base.split("/v1/")[0] + job["status_url"], headers=KEY).json())["status"] not in (
        "done",
        "failed",
    ):
        assert time.monotonic() < deadline, f"job still {job}"
        time.sleep(0.05)
    return job


def answer(base: str, question: str) -> str:
    url = base.split("/v1/")[0] + "/v1/ask?format=jsonl"
    asked = httpx.post(url, json={"question": question}, headers=KEY, timeout=120)
    assert asked.status_code == 200, asked.text
    last = json.loads(asked.text.splitlines()[-1])
    assert last["type"] == "answer", last
    return last["answer"]


def pairs(base: str) -> dict:
    listed = httpx.get(f"{base}/proposals", headers=KEY)
    assert listed.status_code == 200, listed.text
    return {frozenset((p["a"], p["b"])): p for p in listed.json()["proposals"]}


def test_review_through_the_service_merge_reject_undo_as_jobs(service):
    proposals = pairs(service)
    page = httpx.get(f"{service}/proposals?limit=2&offset=1", headers=KEY).json()
    assert page["total"] == len(proposals) > 3 and len(page["proposals"]) == 2
    best_first = sorted(proposals.values(), key=lambda p: -p["score"])
    assert [p["score"] for p in page["proposals"]] == [p["score"] for p in best_first[1:3]]
    tms = proposals[frozenset((TMS, "TMS"))]
    assert "acronym" in tms["reasons"] and 0 < tms["score"] <= 1
    assert {tms["a_type"], tms["b_type"]} == {"topic", "unknown"}  # the offline extractor's types of the two
    passages = [p["text"] for side in ("a", "b") for p in tms["evidence"][side]]
    assert any("Tarnholm Maritime Society (TMS)" in t for t in passages), passages
    assert all(p["title"] for side in ("a", "b") for p in tms["evidence"][side])
    assert "1903" not in answer(service, TMS_QUESTION)  # two entities

    sent = httpx.post(
        f"{service}/decisions",
        json={
            "decisions": [
                {"verdict": "merge", "a": "TMS", "b": TMS, "why": "the survey says so"},
                {"verdict": "reject", "a": "Tarnholm", "b": "Tarnholme"},
            ]
        },
        headers=KEY,
    )
    assert sent.status_code == 202 and sent.json()["action"] == "decide", sent.text
    job = finished(service, sent.json())
    assert job["status"] == "done" and len(job["decision_ids"]) == 2, job
    decisions = httpx.get(f"{service}/decisions", headers=KEY).json()["decisions"]
    assert [(d["verdict"], d["a"], d["b"], d["why"], d["undone"]) for d in decisions] == [
        ("merge", "TMS", TMS, "the survey says so", None),
        ("reject", "Tarnholm", "Tarnholme", "", None),
    ]
    assert "1903" in answer(service, TMS_QUESTION)  # one entity: the short name's passages count
    left = pairs(service)
    assert frozenset((TMS, "TMS")) not in left and frozenset(("Tarnholm", "Tarnholme")) not in left

    undone = httpx.post(f"{service}/undo", json={"decision_id": decisions[0]["id"]}, headers=KEY)
    assert undone.status_code == 202, undone.text
    assert finished(service, undone.json())["undone"] == decisions[0]["id"]
    after = httpx.get(f"{service}/decisions", headers=KEY).json()["decisions"]
    assert [d["undone"] is not None for d in after] == [True, False]
    assert frozenset((TMS, "TMS")) in pairs(service)
    assert "1903" not in answer(service, TMS_QUESTION)


def test_split_takes_a_name_out_of_its_entity(service):
    merged = httpx.post(
        f"{service}/decisions",
        json={"decisions": [{"verdict": "merge", "a": "Halvard", "b": "Halvard Instruments"}]},
        headers=KEY,
    )
    assert finished(service, merged.json())["status"] == "done"
    again = httpx.post(
        f"{service}/decisions",
        json={"decisions": [{"verdict": "merge", "a": "Halvard", "b": "Halvard Instruments"}]},
        headers=KEY,
    )
    assert again.status_code == 400 and "already one entity" in again.json()["error"]["message"]
    split = httpx.post(f"{service}/split", json={"name": "Halvard", "why": "the place, not the firm"}, headers=KEY)
    assert split.status_code == 202, split.text
    assert finished(service, split.json())["status"] == "done"
    in_force = [d for d in httpx.get(f"{service}/decisions", headers=KEY).json()["decisions"] if not d["undone"]]
    assert [(d["verdict"], d["a"], d["b"], d["why"]) for d in in_force][-1] == (
        "reject",
        "Halvard",
        "Halvard Instruments",
        "the place, not the firm",
    )
    alone = httpx.post(f"{service}/split", json={"name": "Halvard"}, headers=KEY)
    assert alone.status_code == 400 and "nothing to split" in alone.json()["error"]["message"]


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        ("decisions", {"decisions": [{"verdict": "merge", "a": "TMS", "b": "Nobody Atall"}]}, 400, "no entity named"),
        ("decisions", {"decisions": [{"verdict": "maybe", "a": "TMS", "b": TMS}]}, 400, "merge or reject, not 'maybe'"),
        ("decisions", {"decisions": [{"verdict": "merge", "a": "TMS"}]}, 400, "needs two names"),
        ("decisions", {"decisions": [{"verdict": "merge", "a": 3, "b": TMS}]}, 400, "'a' must be a string"),
        ("decisions", {"verdict": "merge"}, 400, 'send {"decisions"'),
        ("decisions", [1], 400, "body must be a JSON object"),
        ("split", {"name": "Nobody Atall"}, 400, "no entity named 'Nobody Atall'"),
        ("split", {}, 400, 'send {"name"'),
        ("undo", {}, 400, "no decision in force to undo"),
        ("undo", {"decision_id": 7}, 400, "no decision 7 in force"),
        ("undo", {"decision_id": "7"}, 400, "'decision_id' must be an integer"),
    ],
)
def test_what_no_job_could_apply_is_refused_with_one_line(refusing, path, body, status, message):
    refused = httpx.post(f"{refusing}/{path}", json=body, headers=KEY)
    assert refused.status_code == status, refused.text
    error = refused.json()["error"]["message"]
    assert message in error and "\n" not in error and "Traceback" not in error
    assert httpx.get(f"{refusing}/decisions", headers=KEY).json()["decisions"] == []


def test_entities_need_the_key_and_a_known_index(refusing):
    service = refusing
    for method, path in (("GET", "proposals"), ("GET", "decisions"), ("POST", "decisions"), ("POST", "undo")):
        assert httpx.request(method, f"{service}/{path}", json={}).status_code == 401
    unknown = httpx.get(service.replace("/demo/", "/nope/") + "/proposals", headers=KEY)
    assert unknown.status_code == 404 and "no index 'nope'" in unknown.json()["error"]["message"]
    plain = httpx.post(
        f"{service}/decisions", content=b'{"decisions": []}', headers={**KEY, "Content-Type": "text/plain"}
    )
    assert plain.status_code == 415  # a page of another site cannot send a decision without asking
    assert httpx.get(f"{service}/decisions", headers=KEY).json()["decisions"] == []


def test_a_recorded_decision_job_is_applied_by_the_next_writer_and_a_bad_one_fails_alone(
    unmerged_index, tmp_path, embedder
):
    """What the service records before its 202 survives it: any writer of the index applies it (graph_store/jobs.py)."""
    from graph_store.index import KnowledgeIndex

    shutil.copytree(unmerged_index, tmp_path / "idx")
    settings = load_settings(environ={}, index_dir=tmp_path / "idx", entity_auto_merge=1.0)
    index = KnowledgeIndex(settings, embedder=embedder, progress=False)
    try:
        with pytest.raises(KeyError):  # a decision is recorded only with its job started, in one transaction
            index.store.add_decisions([Decision("merge", "TMS", TMS)], job=("no-such-job", {}))
        assert index.store.decisions() == []
        merge = index.store.create_job(decide_job("demo", "someone", [Decision("merge", "TMS", TMS, "someone")]))
        stale = index.store.create_job(undo_job("demo", "someone", 42))
        index.refresh()  # `kgrag index`, `repair`, a restarted service: every writer first applies recorded jobs
        done = index.store.get_job(merge.id)
        assert done.status == "done" and done.detail["decision_ids"] == [1] and done.payload == {}
        failed = index.store.get_job(stale.id)
        assert failed.status == "failed" and failed.detail["error"] == "no decision 42 in force"
        assert [(d.verdict, d.a, d.b, d.who) for d in index.store.decisions()] == [("merge", "TMS", TMS, "someone")]
        assert index.store.aliases()["tms"] == "tarnholm maritime society"
    finally:
        index.close()
