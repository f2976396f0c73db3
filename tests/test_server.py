"""The HTTP service against a real uvicorn server on 127.0.0.1: OpenAI clients, the native API, conversations
owned by their API key, hostile and malformed requests, documents added while questions are answered."""

import json
import logging
import shutil
import socket
import time

import httpx
import openai
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph_store.errors import ConfigError
from graph_store.settings import load_settings
from kgrag import KGRag
from kgrag.server import create_app
from tests.helpers import FakeOpenAIServer, Reply, serve_in_thread

QUESTION = "Which river flows through the city where the founder of Halvard Instruments was born?"
KEY_ONE = {"Authorization": "Bearer key-one"}
KEY_TWO = {"Authorization": "Bearer key-two"}


@pytest.fixture(scope="module")
def saver():
    return InMemorySaver()


@pytest.fixture(scope="module")
def server(sample_index, saver):
    settings = load_settings(
        environ={},
        index_dir=sample_index.dir,
        api_keys=["key-one", "key-two"],
        max_question_chars=300,
        max_request_bytes=20_000,
        request_timeout=3,
    )
    app = create_app(settings, {"demo": KGRag(settings=settings)}, checkpointer=saver)
    instance, base = serve_in_thread(app)
    yield base
    instance.should_exit = True


@pytest.fixture(scope="module")
def open_server(sample_index, saver, tmp_path_factory):
    """No API keys (open mode), over a copy of the sample index that a wrongly accepted write would change; a
    turn does not wait for its conversation's previous one."""
    folder = tmp_path_factory.mktemp("open") / "idx"
    shutil.copytree(sample_index.dir, folder)
    settings = load_settings(environ={}, index_dir=folder, allowed_hosts=["kgrag.example"], turn_wait=0)
    instance, base = serve_in_thread(create_app(settings, {"demo": KGRag(settings=settings)}, checkpointer=saver))
    yield base
    instance.should_exit = True


def client(base, key="key-two"):
    return openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=60)


def test_non_streamed_answer_renders_in_a_chat_front_end(server):
    reply = client(server).chat.completions.create(model="demo", messages=[{"role": "user", "content": QUESTION}])
    content = reply.choices[0].message.content
    assert content.startswith('Selva — "The river Selva flows through Tarnholm') and "[1]" in content
    assert "\n**Sources**\n1. Tarnholm" in content and "offline" not in content.lower()
    steps = reply.choices[0].message.model_extra["reasoning_content"]
    assert (
        steps.startswith("Answered offline") and "Plan (rule-based)" in steps and "1:q1 answer: Edda Morlund" in steps
    )
    assert "Answered offline" in steps and "(Steps:" not in content
    extra = reply.model_extra["kgrag"]
    assert extra["offline"] is True and extra["citations"][0]["title"] == "Tarnholm"
    assert "sources" not in extra["citations"][0]  # server paths only when configured
    assert reply.usage.total_tokens == 0  # no model was used


def test_streamed_steps_precede_the_answer_and_its_sources(server):
    stream = client(server).chat.completions.create(
        model="demo:full", stream=True, messages=[{"role": "user", "content": QUESTION}]
    )
    order = []
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if (delta.model_extra or {}).get("reasoning_content"):
            order.append(("step", delta.model_extra["reasoning_content"]))
        if delta.content:
            order.append(("answer", delta.content))
    kinds = [k for k, _ in order]
    assert kinds[0] == "step" and "answer" in kinds
    assert kinds.index("answer") > max(i for i, k in enumerate(kinds) if k == "step")
    answer = "".join(t for k, t in order if k == "answer")
    assert answer.startswith("Selva") and "**Sources**" in answer


def test_a_conversation_is_found_by_its_own_id_and_belongs_to_its_key(server):
    mine = client(server, "key-one")
    mine.chat.completions.create(
        model="demo",
        messages=[{"role": "user", "content": "Who founded Halvard Instruments?"}],
        extra_body={"conversation_id": "c-42"},
    )
    mine.chat.completions.create(
        model="demo",
        messages=[{"role": "user", "content": "Where was Edda Morlund born?"}],
        extra_body={"conversation_id": "c-42"},
    )
    thread = httpx.get(f"{server}/v1/threads/c-42", headers=KEY_ONE).json()
    assert [m["role"] for m in thread["messages"]] == ["human", "ai", "human", "ai"]
    assert thread["turn"] == 2 and "Tarnholm" in thread["answer"] and thread["short_answer"] == "Tarnholm"
    assert thread["question"] == "Where was Edda Morlund born?" and thread["offline"] is True
    assert {s["turn"] for s in thread["subquestions"]} == {1, 2}
    # another key neither reads nor continues it
    assert httpx.get(f"{server}/v1/threads/c-42", headers=KEY_TWO).status_code == 404
    with pytest.raises(openai.NotFoundError):
        client(server, "key-two").chat.completions.create(
            model="demo", messages=[{"role": "user", "content": "And when?"}], extra_body={"conversation_id": "c-42"}
        )
    assert httpx.get(f"{server}/v1/threads/c-42", headers=KEY_ONE).json()["turn"] == 2


def test_requests_without_a_conversation_keep_nothing(server, saver):
    client(server).chat.completions.create(
        model="demo", messages=[{"role": "user", "content": "Where was Ana Keldor born?"}]
    )
    threads = {c.config["configurable"]["thread_id"] for c in saver.list(None)}
    assert not any(t.startswith("req-") for t in threads)


def test_wrong_or_missing_key_gets_401(server):
    with pytest.raises(openai.AuthenticationError):
        client(server, key="nope").chat.completions.create(model="demo", messages=[{"role": "user", "content": "x"}])
    assert httpx.get(f"{server}/v1/models").status_code == 401
    assert httpx.get(f"{server}/health").status_code == 200


def test_oversized_input_gets_413_even_without_a_length(server):
    long_question = {"model": "demo", "messages": [{"role": "user", "content": "why " * 200}]}
    assert httpx.post(f"{server}/v1/chat/completions", json=long_question, headers=KEY_ONE).status_code == 413
    huge = {"model": "demo", "messages": [{"role": "user", "content": "x"}], "pad": "y" * 50_000}
    assert httpx.post(f"{server}/v1/chat/completions", json=huge, headers=KEY_ONE).status_code == 413

    def chunked():  # no Content-Length: the limit holds while the body arrives
        for _ in range(100):
            yield b"x" * 1000

    response = httpx.post(f"{server}/v1/chat/completions", content=chunked(), headers=KEY_ONE)
    assert response.status_code == 413


@pytest.mark.parametrize(
    "body, message",
    [
        ({"model": 42, "messages": [{"role": "user", "content": "x"}]}, "'model' must be a string"),
        ({"model": "demo", "messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}, "'text' string"),
        (
            {"model": "demo", "stream": "no", "messages": [{"role": "user", "content": "x"}]},
            "'stream' must be a boolean",
        ),
        ({"model": "demo", "messages": [{"role": "wizard", "content": "x"}]}, "'role' must be one of"),
        ({"model": "demo", "messages": []}, "non-empty list"),
        (
            {"model": "demo", "messages": [{"role": "user", "content": "x"}], "conversation_id": "a" * 500},
            "conversation id",
        ),
        (
            {"model": "demo", "messages": [{"role": "user", "content": "x"}], "conversation_id": "../x"},
            "conversation id",
        ),
    ],
)
def test_malformed_chat_requests_get_a_clear_400(server, body, message):
    response = httpx.post(f"{server}/v1/chat/completions", json=body, headers=KEY_ONE)
    assert response.status_code == 400 and message in response.json()["error"]["message"]


@pytest.mark.parametrize("question", [None, 123, ["a list"], ""])
def test_native_ask_refuses_what_is_not_a_question(server, question):
    response = httpx.post(f"{server}/v1/ask", json={"question": question}, headers=KEY_ONE)
    assert response.status_code == 400


def test_bad_requests_are_clear_and_leak_nothing(server):
    unknown = httpx.post(
        f"{server}/v1/chat/completions",
        headers=KEY_ONE,
        json={"model": "../../etc", "messages": [{"role": "user", "content": "x"}]},
    )
    assert unknown.status_code == 404 and "available: demo" in unknown.json()["error"]["message"]
    as_json = {**KEY_ONE, "Content-Type": "application/json"}
    broken = httpx.post(f"{server}/v1/chat/completions", headers=as_json, content=b"{not json")
    assert broken.status_code == 400 and "Traceback" not in broken.text


def test_native_ask_streams_json_lines_ending_with_the_answer(server):
    with httpx.stream(
        "POST", f"{server}/v1/ask?format=jsonl", headers=KEY_ONE, json={"question": QUESTION}, timeout=60
    ) as response:
        events = [json.loads(line) for line in response.iter_lines() if line]
    assert events[0]["type"] == "step" and events[0]["event"] == "plan"
    assert events[0]["data"]["subquestions"][0]["id"] == "1:q1"
    assert events[-1]["type"] == "answer" and events[-1]["short_answer"] == "Selva"
    assert 0 < events[-1]["confidence"] <= 1


def test_small_talk_gets_a_short_reply_not_an_entity(server):
    reply = client(server).chat.completions.create(model="demo", messages=[{"role": "user", "content": "hello"}])
    content = reply.choices[0].message.content.lower()
    assert "question" in content and "selva" not in content


def test_a_slow_client_times_out_and_a_disconnect_breaks_nothing(server):
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as slow:
        slow.sendall(
            f"POST /v1/ask HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer key-one\r\n".encode()
            + b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"question":'
        )
        slow.settimeout(10)
        assert b" 408 " in slow.recv(1000).split(b"\r\n")[0] + b" "
    with httpx.stream(
        "POST",
        f"{server}/v1/chat/completions",
        headers=KEY_ONE,
        timeout=60,
        json={"model": "demo", "stream": True, "messages": [{"role": "user", "content": QUESTION}]},
    ) as r:
        next(r.iter_lines())  # read the first event, then hang up
    reply = client(server).chat.completions.create(model="demo", messages=[{"role": "user", "content": QUESTION}])
    assert "Selva" in reply.choices[0].message.content


def _wait_for(job_url, headers, seconds=120, progress=None):
    """The finished job; ``progress`` (a list) collects the progress reported while it ran."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = httpx.get(job_url, headers=headers).json()
        if job["status"] in ("done", "failed"):
            return job
        if progress is not None and "progress" in job:
            progress.append(job["progress"])
        time.sleep(0.05)
    raise AssertionError("the documents job did not finish")


def test_documents_added_and_deleted_over_the_api_while_questions_are_answered(sample_index, tmp_path):
    folder = tmp_path / "served"
    shutil.copytree(sample_index.dir, folder)
    settings = load_settings(environ={}, index_dir=folder, api_keys=["k"])
    instance, base = serve_in_thread(
        create_app(settings, {"docs": KGRag(settings=settings)}, checkpointer=InMemorySaver())
    )
    headers = {"Authorization": "Bearer k"}
    try:

        def ask(q):
            reply = client(base, "k").chat.completions.create(model="docs", messages=[{"role": "user", "content": q}])
            return reply.choices[0].message.content

        record = {
            "id": "brotzeit",
            "title": "Brotzeit",
            "text": "Brotzeit is a bakery in Vessby founded by Mira Holt in 1998.",
        }
        marked_up = {  # an id with a slash, a title written in Markdown
            "id": "mills/halden",
            "title": "**Halden** [mill](https://evil.example)",
            "text": "Halden Mill is a watermill near Vessby built by Oskar Brenn in 1871.",
        }
        job = httpx.post(
            f"{base}/v1/indexes/docs/documents", json={"documents": [record, marked_up]}, headers=headers
        ).json()
        assert job["status"] in ("queued", "running")
        answers_during = [ask(QUESTION) for _ in range(3)]  # the index is rebuilt meanwhile
        assert all(a.startswith("Selva") for a in answers_during)
        assert _wait_for(f"{base}{job['status_url']}", headers)["status"] == "done"
        assert "Mira Holt" in ask("Who founded the bakery Brotzeit?")
        # a title is shown as its text in the Sources list, never rendered as Markdown
        assert "\\*\\*Halden\\*\\* \\[mill\\]\\(https://evil.example\\)" in ask("Who built Halden Mill?")
        removed = httpx.delete(f"{base}/v1/indexes/docs/documents/mills/halden", headers=headers)
        assert removed.status_code == 202 and removed.json()["document"] == "mills/halden"
        assert _wait_for(f"{base}{removed.json()['status_url']}", headers)["deleted"] == 1
        files = {"file": ("lake_vell.md", b"# Lake Vell\n\nLake Vell lies north of Hallin and feeds the Grey Sea.")}
        upload = httpx.post(f"{base}/v1/indexes/docs/documents", files=files, headers=headers).json()
        progress = []
        assert _wait_for(f"{base}{upload['status_url']}", headers, progress=progress)["added"] == 1
        assert progress and all(0 <= p["done"] <= p["total"] and p["step"] for p in progress), progress
        titles = [
            d["title"] for d in httpx.get(f"{base}/v1/indexes/docs/documents", headers=headers).json()["documents"]
        ]
        assert "Lake Vell" in titles and "Brotzeit" in titles
        gone = httpx.delete(f"{base}/v1/indexes/docs/documents/brotzeit", headers=headers).json()
        assert _wait_for(f"{base}{gone['status_url']}", headers)["status"] == "done"
        assert "Mira Holt" not in ask("Who founded the bakery Brotzeit?")
        bad = httpx.post(
            f"{base}/v1/indexes/docs/documents", json={"documents": [{"title": "no text"}]}, headers=headers
        )
        assert bad.status_code == 400
    finally:
        instance.should_exit = True


def test_open_mode_refuses_cross_site_writes_and_foreign_hosts(open_server):
    port = open_server.rsplit(":", 1)[1]
    documents = f"{open_server}/v1/indexes/demo/documents"
    before = httpx.get(documents).json()["documents"]
    record = json.dumps({"documents": [{"id": "evil", "text": "Evil Corp owns Tarnholm."}]})
    # a form a page of another site can send without asking: a text/plain body
    plain = httpx.post(documents, content=record, headers={"Content-Type": "text/plain"})
    assert plain.status_code == 415 and "application/json" in plain.json()["error"]["message"]
    cross_site = {"Origin": "https://evil.example", "Content-Type": "application/json"}
    assert httpx.post(documents, content=record, headers=cross_site).status_code == 403
    other_port = {"Origin": "http://localhost:3000", "Content-Type": "application/json"}
    assert httpx.post(documents, content=record, headers=other_port).status_code == 403
    rebound = httpx.get(f"{open_server}/v1/models", headers={"Host": f"evil.example:{port}"})
    assert rebound.status_code == 400 and "allowed_hosts" in rebound.json()["error"]["message"]
    assert httpx.get(documents).json()["documents"] == before  # nothing was indexed
    # the service's own names and pages, and names added by allowed_hosts, are served
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "kgrag.example", f"kgrag.example:{port}"):
        assert httpx.get(f"{open_server}/health", headers={"Host": host}).status_code == 200, host
    own_page = {"Origin": f"http://localhost:{port}"}
    asked = httpx.post(
        f"{open_server}/v1/ask?format=jsonl", json={"question": "Where was Ana Keldor born?"}, headers=own_page
    )
    assert asked.status_code == 200 and '"type": "answer"' in asked.text


def test_documents_are_listed_without_server_paths(server, sample_index):
    listed = httpx.get(f"{server}/v1/indexes/demo/documents", headers=KEY_ONE)
    assert listed.status_code == 200 and {"id", "title"} <= set(listed.json()["documents"][0])
    assert str(sample_index.dir.parent) not in listed.text and "examples/corpus" not in listed.text


DEEP = b'{"question": ' + b"[" * 9_000 + b"]" * 9_000 + b"}"  # under the 20 kB limit, past Python's recursion limit
SURROGATE = b'{"question": "Where was \\ud800 born?"}'
SURROGATE_CHAT = b'{"model": "demo", "stream": %s, "messages": [{"role": "user", "content": "Who \\ud800?"}]}'


@pytest.mark.parametrize(
    "path, body, message",
    [
        ("/v1/ask", DEEP, "nested too deeply"),
        ("/v1/ask", SURROGATE, "not valid Unicode"),
        ("/v1/chat/completions", SURROGATE_CHAT % b"true", "not valid Unicode"),
        ("/v1/chat/completions", SURROGATE_CHAT % b"false", "not valid Unicode"),
        (
            "/v1/chat/completions",
            b'{"model": "demo", "conversation_id": "abc\\n", "messages": [{"role": "user", "content": "x"}]}',
            "conversation id",
        ),
    ],
)
def test_bodies_that_broke_the_service_get_a_clear_400(server, path, body, message):
    reply = httpx.post(f"{server}{path}", content=body, headers={**KEY_ONE, "Content-Type": "application/json"})
    assert reply.status_code == 400 and message in reply.json()["error"]["message"]


def test_malformed_multipart_and_parameters_get_a_clear_400(server):
    broken = httpx.post(
        f"{server}/v1/indexes/demo/documents",
        content=b'--abc\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\nhello\r\n',
        headers={**KEY_ONE, "Content-Type": "multipart/form-data; boundary=xyz"},
    )
    assert broken.status_code == 400 and "malformed multipart" in broken.json()["error"]["message"]
    for x in ("nan", "inf"):
        expand = httpx.get(f"{server}/v1/indexes/demo/graph/expand?entity=Edda%20Morlund&x={x}", headers=KEY_ONE)
        assert expand.status_code == 400 and "'x'" in expand.json()["error"]["message"]
    assert httpx.get(f"{server}/v1/threads/abc%0A", headers=KEY_ONE).status_code == 400
    limit = httpx.get(f"{server}/v1/indexes/demo/graph?limit=abc", headers=KEY_ONE)
    assert limit.status_code == 400 and "'limit'" in limit.json()["error"]["message"]


@pytest.mark.parametrize(
    "knobs, message, library",
    [
        ({"alpha": 7}, "'alpha' (alpha_specific): Input should be less than or equal to 1", {"alpha_specific": 7}),
        ({"route": "nowhere"}, "'route' (route_policy): Input should be 'plan'", {"route_policy": "nowhere"}),
        ({"graph": "nope"}, "'graph' must be one of pankrag, propex", None),
    ],
)
def test_knobs_the_library_refuses_are_refused_with_the_same_reason(server, sample_index, knobs, message, library):
    reply = httpx.post(f"{server}/v1/ask", json={"question": "Where was Ana Keldor born?", **knobs}, headers=KEY_ONE)
    assert reply.status_code == 400 and message in reply.json()["error"]["message"]
    if library:
        knob = next(iter(library))
        with KGRag(sample_index.dir) as rag, pytest.raises(ConfigError, match=f"{knob}: {message.split('): ')[1]}"):
            rag.ask("Where was Ana Keldor born?", **library)


class Records(logging.Handler):
    """The log records of the loggers it is attached to."""

    def __init__(self, *names):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        for name in names:
            logging.getLogger(name).addHandler(self)

    def emit(self, record):
        self.records.append(record)


def test_a_timed_out_model_is_one_line_in_the_log_not_a_trace(sample_index, tmp_path):
    folder = tmp_path / "idx"
    shutil.copytree(sample_index.dir, folder)
    with FakeOpenAIServer(reply=lambda model, messages: Reply("too late", delay=3)) as endpoint:
        settings = load_settings(
            environ={},
            index_dir=folder,
            chat_model="tiny",
            chat_base_url=endpoint.base_url,
            chat_timeout=0.5,
            chat_max_retries=0,
        )
        instance, base = serve_in_thread(
            create_app(settings, {"demo": KGRag(settings=settings)}, checkpointer=InMemorySaver())
        )
        log = Records("uvicorn.error", "kgrag.server")
        try:
            reply = httpx.post(
                f"{base}/v1/chat/completions",
                timeout=30,
                json={"model": "demo", "messages": [{"role": "user", "content": QUESTION}]},
            )
        finally:
            instance.should_exit = True
            for name in ("uvicorn.error", "kgrag.server"):
                logging.getLogger(name).removeHandler(log)
    assert reply.status_code == 502 and "timed out" in reply.json()["error"]["message"]
    assert not [r for r in log.records if r.exc_info], "a traceback was logged"
    assert [r.getMessage() for r in log.records if "timed out" in r.getMessage()]


def test_a_turn_that_cannot_wait_for_the_previous_one_gets_409(open_server):
    url = f"{open_server}/v1/chat/completions"
    body = {"conversation_id": "c-busy", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    with httpx.stream("POST", url, json=body, timeout=60) as first:
        lines = first.iter_lines()
        next(lines)  # the first event: the first turn is under way until its stream ends
        second = {"conversation_id": "c-busy", "messages": [{"role": "user", "content": "Where was Ana Keldor born?"}]}
        busy = httpx.post(url, json=second, timeout=60)
        assert busy.status_code == 409
        assert "still answering an earlier question" in busy.json()["error"]["message"]
        assert "data: [DONE]" in list(lines)  # the first turn is not disturbed
    assert httpx.get(f"{open_server}/v1/threads/c-busy").json()["turn"] == 1


def test_a_client_that_leaves_mid_stream_ends_its_turn(server):
    body = {"model": "demo", "stream": True, "conversation_id": "c-left"}
    with httpx.stream(
        "POST",
        f"{server}/v1/chat/completions",
        headers=KEY_ONE,
        timeout=60,
        json={**body, "messages": [{"role": "user", "content": QUESTION}]},
    ) as r:
        next(r.iter_lines())  # the first event, then hang up
    started = time.monotonic()
    reply = httpx.post(
        f"{server}/v1/chat/completions",
        headers=KEY_ONE,
        timeout=60,
        json={
            "model": "demo",
            "conversation_id": "c-left",
            "messages": [{"role": "user", "content": "Where was Ana Keldor born?"}],
        },
    )
    assert reply.status_code == 200 and time.monotonic() - started < 15  # not after the 30 s a stuck turn would cost
