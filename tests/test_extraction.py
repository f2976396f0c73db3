import pytest

from graph_store.extraction import (
    ExtractionParseError,
    LLMExtractor,
    OfflineExtractor,
    find_entity_mentions,
    parse_extraction,
)
from graph_store.llm import ChatClient
from tests.helpers import ScriptedChatModel

GOOD = (
    '{"entities": [{"name": "Edda Morlund", "type": "person", "description": "engineer"},'
    ' {"name": "Tarnholm", "type": "location"}],'
    ' "relations": [{"subject": "Edda Morlund", "predicate": "born in", "object": "Tarnholm", "strength": 9}]}'
)


def test_well_formed_output():
    result = parse_extraction(GOOD)
    assert [e.name for e in result.entities] == ["Edda Morlund", "Tarnholm"]
    assert result.relations[0].predicate == "born in" and result.relations[0].strength == 0.9


def test_fenced_output_with_chatter():
    result = parse_extraction(f"Sure! Here you go:\n```json\n{GOOD}\n```\nAnything else?")
    assert len(result.entities) == 2 and len(result.relations) == 1


def test_truncated_output_keeps_what_is_complete():
    truncated = GOOD[: GOOD.index('"relations"') + 40]
    result = parse_extraction(truncated)
    assert [e.name for e in result.entities] == ["Edda Morlund", "Tarnholm"]


def test_triples_as_lists_and_facts_key():
    result = parse_extraction('{"entities": ["A", "B"], "facts": [["A", "knows", "B"]]}')
    assert result.relations[0].subject == "A" and result.relations[0].object == "B"


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "I cannot help with that.",
        "[1, 2, 3]",
        '{"entities": [{"type": "x"}], "relations": [{"subject": "A"}]}',
    ],
)
def test_empty_or_non_json_output_is_an_error(raw):
    with pytest.raises(ExtractionParseError):
        parse_extraction(raw)


def test_empty_but_valid_extraction_is_fine():
    assert parse_extraction('{"entities": [], "relations": []}').entities == []


def test_llm_extractor_retries_once_with_a_corrective_message():
    model = ScriptedChatModel(script=["no json here", GOOD])
    result = LLMExtractor(ChatClient(model)).extract("Edda Morlund was born in Tarnholm.", "Edda Morlund")
    assert result.status == "ok" and len(result.entities) == 2
    assert len(model.calls) == 2 and "could not be used" in model.calls[1][-1].content


def test_llm_extractor_records_failure_after_one_retry():
    model = ScriptedChatModel(script=["garbage", "more garbage"])
    result = LLMExtractor(ChatClient(model)).extract("text", "title")
    assert result.status == "failed" and result.error.startswith("unusable reply: no JSON object")
    assert len(model.calls) == 2


def test_gleaning_adds_missed_items():
    more = '{"entities": [{"name": "Selva"}], "relations": [{"subject": "Selva", "predicate": "flows through", "object": "Tarnholm"}]}'
    model = ScriptedChatModel(script=[GOOD, more, '{"entities": [], "relations": []}'])
    text = "Edda Morlund was born in Tarnholm, a port city. The river Selva flows through Tarnholm."
    result = LLMExtractor(ChatClient(model), gleaning_rounds=2).extract(text, "Edda Morlund")
    assert {e.name for e in result.entities} == {"Edda Morlund", "Tarnholm", "Selva"}
    assert len(result.relations) == 2 and len(model.calls) == 3


def test_entities_the_chunk_does_not_name_are_dropped():
    # A small model copies the prompt's worked example: names absent from the chunk (and the relations
    # that need them) are not stored; a name the chunk writes in part (a surname) is kept.
    echo = (
        '{"entities": [{"name": "Comet Keldor-Vey"}, {"name": "Lindau", "type": "location"},'
        ' {"name": "Ana Keldor"}],'
        ' "relations": [{"subject": "Comet Keldor-Vey", "predicate": "seen from", "object": "Lindau"},'
        ' {"subject": "Ana Keldor", "predicate": "discovered", "object": "Comet Keldor-Vey"}]}'
    )
    model = ScriptedChatModel(script=[echo])
    result = LLMExtractor(ChatClient(model)).extract(
        "The comet Keldor-Vey was discovered by Keldor in 1931.", "Comet Keldor-Vey"
    )
    assert result.status == "ok"
    assert {e.name for e in result.entities} == {"Comet Keldor-Vey", "Ana Keldor"}
    assert [(r.subject, r.object) for r in result.relations] == [("Ana Keldor", "Comet Keldor-Vey")]


def test_offline_mentions_and_facts():
    mentions = [
        m[2]
        for m in find_entity_mentions(
            "In 1921 Edda Morlund founded Halvard Instruments at the University of Kessel in Vessby."
        )
    ]
    assert mentions == ["Edda Morlund", "Halvard Instruments", "University of Kessel", "Vessby"]
    result = OfflineExtractor().extract(
        "Edda Morlund was an engineer. She was born in Tarnholm and founded Halvard Instruments.", "Edda Morlund"
    )
    triples = {(r.subject, r.predicate, r.object) for r in result.relations}
    assert ("Edda Morlund", "she was born in", "Tarnholm") in triples
    assert ("Tarnholm", "and founded", "Halvard Instruments") in triples


def test_names_starting_with_a_capital_outside_ascii_are_found():
    names = [
        name for _, _, name in find_entity_mentions("He met Émile Varn and Øystein Holm in Åland. Łódź lies east.")
    ]
    assert names == ["Émile Varn", "Øystein Holm", "Åland", "Łódź"]
