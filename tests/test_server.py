import json

import httpx
import openai
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.server import create_app
from graph_store.settings import load_settings
from tests.helpers import serve_in_thread

QUESTION = "Which river flows through the city where the founder of Halvard Instruments was born?"


@pytest.fixture(scope="module")
def server(sample_resources):
    settings = load_settings(environ={}, api_keys=["key-one", "key-two"], max_question_chars=300,
                             max_request_bytes=20_000)
    app = create_app(settings, {"demo": sample_resources}, checkpointer=InMemorySaver())
    instance, base = serve_in_thread(app)
    yield base
    instance.should_exit = True


def client(base, key="key-two"):
    return openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=60)


def test_non_streamed_answer_through_the_openai_client(server):
    reply = client(server).chat.completions.create(model="demo", messages=[{"role": "user", "content": QUESTION}])
    assert "Selva" in reply.choices[0].message.content
    assert reply.model_extra["kgrag"]["citations"]
    raw = reply.choices[0].message.model_extra["reasoning_content"]
    assert raw.startswith("Plan (rule-based)") and "1:q1 answer: Edda Morlund" in raw


def test_streamed_steps_precede_the_answer(server):
    stream = client(server).chat.completions.create(model="demo:full", stream=True,
                                                    messages=[{"role": "user", "content": QUESTION}])
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
    assert "Selva" in "".join(t for k, t in order if k == "answer")


def test_follow_up_in_a_conversation_sees_the_first_turn(server):
    c = client(server)
    c.chat.completions.create(model="demo", messages=[{"role": "user", "content": "Who founded Halvard Instruments?"}],
                              extra_body={"conversation_id": "c-42"})
    c.chat.completions.create(model="demo", messages=[{"role": "user", "content": "Where was Edda Morlund born?"}],
                              extra_body={"conversation_id": "c-42"})
    thread = httpx.get(f"{server}/v1/threads/conv-c-42", headers={"Authorization": "Bearer key-one"}).json()
    assert [m["role"] for m in thread["messages"]] == ["human", "ai", "human", "ai"]
    assert thread["turn"] == 2 and "Tarnholm" in thread["answer"]
    assert {s["turn"] for s in thread["subquestions"]} == {1, 2}


def test_wrong_or_missing_key_gets_401(server):
    with pytest.raises(openai.AuthenticationError):
        client(server, key="nope").chat.completions.create(model="demo", messages=[{"role": "user", "content": "x"}])
    assert httpx.get(f"{server}/v1/models").status_code == 401
    assert httpx.get(f"{server}/health").status_code == 200


def test_oversized_input_gets_413(server):
    headers = {"Authorization": "Bearer key-one"}
    long_question = {"model": "demo", "messages": [{"role": "user", "content": "why " * 200}]}
    assert httpx.post(f"{server}/v1/chat/completions", json=long_question, headers=headers).status_code == 413
    huge = {"model": "demo", "messages": [{"role": "user", "content": "x"}], "pad": "y" * 50_000}
    assert httpx.post(f"{server}/v1/chat/completions", json=huge, headers=headers).status_code == 413


def test_bad_requests_are_clear_and_leak_nothing(server):
    headers = {"Authorization": "Bearer key-one"}
    unknown = httpx.post(f"{server}/v1/chat/completions", headers=headers,
                         json={"model": "../../etc", "messages": [{"role": "user", "content": "x"}]})
    assert unknown.status_code == 404 and "available: demo" in unknown.json()["error"]["message"]
    broken = httpx.post(f"{server}/v1/chat/completions", headers=headers, content=b"{not json")
    assert broken.status_code == 400 and "Traceback" not in broken.text


def test_native_ask_streams_json_lines(server):
    with httpx.stream("POST", f"{server}/v1/ask?format=jsonl", headers={"Authorization": "Bearer key-one"},
                      json={"question": QUESTION}, timeout=60) as response:
        events = [json.loads(line) for line in response.iter_lines() if line]
    assert events[0]["type"] == "step" and events[-1]["type"] == "answer" and "Selva" in events[-1]["answer"]


def test_a_disconnecting_client_does_not_break_the_service(server):
    headers = {"Authorization": "Bearer key-one"}
    with httpx.stream("POST", f"{server}/v1/chat/completions", headers=headers, timeout=60,
                      json={"model": "demo", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}) as r:
        next(r.iter_lines())  # read the first event, then hang up
    reply = client(server).chat.completions.create(model="demo", messages=[{"role": "user", "content": QUESTION}])
    assert "Selva" in reply.choices[0].message.content
