import pytest
from langchain_core.messages import HumanMessage

from graph_store.errors import ConfigError, ModelError
from graph_store.llm import ChatClient, LLMCache, json_in_reply, make_chat_client
from graph_store.settings import load_settings
from tests.helpers import FakeOpenAIServer, ScriptedChatModel


def test_cache_hit_does_not_call_the_model(tmp_path):
    model = ScriptedChatModel(script=["first answer"], cache=LLMCache(tmp_path / "c.sqlite"))
    client = ChatClient(model)
    question = [HumanMessage("What is 2+2?")]
    assert client.invoke(question).content == "first answer"
    assert client.invoke(question).content == "first answer"  # script is empty: must be a hit
    assert len(model.calls) == 1
    assert client.usage.calls == 1 and client.usage.cache_hits == 1
    assert client.usage.input_tokens > 0


def test_cache_survives_a_new_process_and_keys_on_parameters(tmp_path):
    path = tmp_path / "c.sqlite"
    ChatClient(ScriptedChatModel(script=["cached"], cache=LLMCache(path))).invoke([HumanMessage("q")])
    again = ScriptedChatModel(script=[], cache=LLMCache(path))
    assert ChatClient(again).invoke([HumanMessage("q")]).content == "cached"
    assert again.calls == []
    other_question = ScriptedChatModel(script=["fresh"], cache=LLMCache(path))
    assert ChatClient(other_question).invoke([HumanMessage("another q")]).content == "fresh"


def test_offline_when_no_chat_model():
    assert make_chat_client(load_settings(environ={})) is None


def test_missing_key_is_a_clear_error(tmp_path):
    settings = load_settings(environ={}, chat_model="gpt-4o-mini", index_dir=tmp_path)
    with pytest.raises(ConfigError, match="needs an API key"):
        make_chat_client(settings)


def _client(server_url, tmp_path, model="tiny", retries=0):
    settings = load_settings(
        environ={},
        chat_model=model,
        chat_base_url=server_url,
        chat_max_retries=retries,
        chat_timeout=5,
        index_dir=tmp_path,
    )
    return make_chat_client(settings)


def test_chat_factory_against_local_openai_compatible_server(tmp_path):
    with FakeOpenAIServer(reply=lambda model, msgs: f"echo {msgs[-1]['content']}") as server:
        client = _client(server.base_url, tmp_path)
        assert client.invoke([HumanMessage("hello")]).content == "echo hello"
        assert client.invoke([HumanMessage("second")]).content == "echo second"
        assert client.invoke([HumanMessage("hello")]).content == "echo hello"  # cached
        assert len(server.requests) == 2
        assert client.usage.calls == 2 and client.usage.output_tokens == 4


def test_transient_errors_are_retried(tmp_path):
    with FakeOpenAIServer(fail_first=1) as server:
        client = _client(server.base_url, tmp_path, retries=2)
        assert client.invoke([HumanMessage("hi")]).content == "pong"
        assert len(server.requests) == 2


def test_unknown_model_is_a_clear_error(tmp_path):
    with FakeOpenAIServer(models=("tiny",)) as server:
        client = _client(server.base_url, tmp_path, model="no-such-model")
        with pytest.raises(ModelError, match="does not know model 'no-such-model'"):
            client.invoke([HumanMessage("hi")])


def test_refused_connection_is_a_clear_error(tmp_path):
    server = FakeOpenAIServer()
    with server:
        url = server.base_url
    # The server is stopped: its port now refuses connections.
    client = _client(url, tmp_path, retries=1)
    with pytest.raises(ModelError, match="cannot reach the chat endpoint"):
        client.invoke([HumanMessage("hi")])


def test_rejected_key_is_a_clear_error(tmp_path):
    with FakeOpenAIServer(api_key="right") as server:
        settings = load_settings(
            environ={},
            chat_model="tiny",
            chat_base_url=server.base_url,
            chat_api_key="wrong",
            chat_max_retries=0,
            index_dir=tmp_path,
        )
        with pytest.raises(ModelError, match="rejected the API key"):
            make_chat_client(settings).invoke([HumanMessage("hi")])


def test_openai_embeddings_against_local_server(tmp_path):
    from graph_store.embeddings import make_embedder

    with FakeOpenAIServer(models=("emb",)) as server:
        settings = load_settings(
            environ={},
            embedding_provider="openai",
            embedding_model="emb",
            embedding_base_url=server.base_url,
            chat_max_retries=0,
        )
        vectors = make_embedder(settings).embed(["a", "abc"])
        assert vectors.shape == (2, 3)
        assert abs(float((vectors[1] ** 2).sum()) - 1.0) < 1e-5


@pytest.mark.parametrize(
    "raw, expected",
    [
        ('```json\n{"answer": "Ludvik", "evidence": [1]}\n```', {"answer": "Ludvik", "evidence": [1]}),
        ('answer: {"answer": "Vessby", "evidence": [1, 2]}', {"answer": "Vessby", "evidence": [1, 2]}),
        # Qwen2.5-Coder-0.5B on llama.cpp's server, copying the prompt's 'Answer: {...}' line without the braces
        (
            'answer: Selva, "evidence": [1, 2], "confidence": "medium", "alternatives": []',
            {"answer": "Selva", "evidence": [1, 2], "confidence": "medium", "alternatives": []},
        ),
        ('"answer": "Selva", "evidence": [1]', {"answer": "Selva", "evidence": [1]}),
        ("I cannot help with that.", None),
        ("Note: the evidence does not say, sorry.", None),
    ],
)
def test_json_in_reply(raw, expected):
    assert json_in_reply(raw) == expected


def test_a_sub_answer_without_braces_is_the_model_answer(tmp_path):
    """Through the scripted OpenAI-compatible server: the real 0.5B model's reply is used, not rejected."""
    from types import SimpleNamespace

    from agent.subquestion import _llm_candidates

    reply = 'answer: Selva, "evidence": [1, 2], "confidence": "medium", "alternatives": []'
    with FakeOpenAIServer(reply=lambda model, msgs: reply) as server:
        chat = _client(server.base_url, tmp_path)
        res = SimpleNamespace(chat=chat, model_for=lambda task: chat)
        record = {
            "queries": [{"text": "Which river flows through Tarnholm?", "assumes": None}],
            "evidence": [
                {"id": "c1", "text": "The river Selva flows through Tarnholm."},
                {"id": "c2", "text": "Tarnholm is a port city on the Grey Sea."},
            ],
        }
        candidates = _llm_candidates(res, record, [], {})
    assert [c["answer"] for c in candidates] == ["Selva"]
    assert candidates[0]["cited"] == ["c1", "c2"] and candidates[0]["confidence"] == 0.6


def test_an_answer_copied_from_the_prompts_example_is_rejected():
    from agent.validation import copied_example

    # the real 0.5B's final answer to the demo question, over evidence about Edda Morlund and Tarnholm
    assert (
        copied_example(
            "Halvard Instruments was born in Lindau [1][2].",
            "final_answer",
            "Edda Morlund founded Halvard Instruments. She was born in Tarnholm.",
        )
        == "it names Lindau from the prompt's example, not from the evidence"
    )
    assert copied_example("Lindau [1].", "final_answer", "Mira was born in Lindau.") is None  # the corpus says it
    assert copied_example("Selva [1].", "final_answer", "The Selva flows through Tarnholm.") is None


def test_a_sub_answer_copied_from_the_prompts_example_falls_back(tmp_path):
    from types import SimpleNamespace

    from agent.subquestion import _llm_candidates

    reply = '{"answer": "Ilse Varn", "evidence": [1], "confidence": "high", "alternatives": []}'
    with FakeOpenAIServer(reply=lambda model, msgs: reply) as server:
        chat = _client(server.base_url, tmp_path)
        res = SimpleNamespace(chat=chat, model_for=lambda task: chat)
        record = {
            "queries": [{"text": "Who designed the Tarnholm Opera House?", "assumes": None}],
            "evidence": [{"id": "c1", "text": "The Tarnholm Opera House was designed by Oskar Brenn."}],
        }
        with pytest.raises(ValueError, match="names Ilse Varn from the prompt's example"):
            _llm_candidates(res, record, [], {})


def test_the_final_answers_fallback_is_a_step():
    from agent.events import describe_event

    event = {
        "event": "final_answer",
        "answer": "Selva [1]",
        "confidence": 0.6,
        "citations": [1],
        "notes": {"final_answer": "model answer rejected (it names Lindau); extractive answer shown"},
    }
    assert describe_event(event) == "  fallback: model answer rejected (it names Lindau); extractive answer shown\n"
    assert describe_event({**event, "notes": {}}) is None
