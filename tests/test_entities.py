"""Entity resolution a person can review (graph_store/resolution.py, `kgrag entities`): merges proposed with their
evidence, automatic merges above the threshold and never across conflicts, decisions kept in the record through a
re-index and a repair, and retrieval that sees one entity under every name.

The sample corpus has three documents written for this: orrin_survey.md introduces "TMS" for the Tarnholm Maritime
Society, selva_regatta.md uses only "TMS" (and "Halvard"), tarnholm_maritime_society.md spells Tarnholm "Tarnholme".
"""

import json
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

from graph_store import communities as communities_module
from graph_store import graph
from graph_store.communities import hierarchical_leiden
from graph_store.documents import load_documents
from graph_store.errors import InputError
from graph_store.extraction import ChunkExtraction, ExtractedEntity, ExtractedRelation
from graph_store.graph import normalize_name
from graph_store.resolution import NameForm, candidates, merge_groups
from graph_store.settings import DEFAULT_AUTO_MERGE, load_settings
from graph_store.store import Decision
from graph_store.vectors import Exported
from kgrag.api import KGRag
from tests.conftest import EXAMPLES, ROOT

NEW_DOCUMENTS = ("orrin_survey.md", "selva_regatta.md", "tarnholm_maritime_society.md")
TMS = "Tarnholm Maritime Society"


def _small_corpus(folder):
    """The new documents and the two they refer to: a build takes seconds."""
    folder.mkdir()
    for name in (*NEW_DOCUMENTS, "tarnholm.md", "halvard_instruments.md", "edda_morlund.md", "oskar_brenn.md"):
        shutil.copy(EXAMPLES / name, folder / name)
    return folder


def _pairs(proposals):
    return {frozenset((p.a_name, p.b_name)): p for p in proposals}


def test_introduced_acronym_is_merged_above_the_threshold_and_proposed_below_it(make_index, tmp_path):
    docs = load_documents(_small_corpus(tmp_path / "corpus"))
    auto = make_index("auto")
    auto.add_documents(docs)
    entity_of = auto.store.aliases()
    assert entity_of["tms"] == entity_of["tarnholm maritime society"] == "tarnholm maritime society"
    how = {a.key: a.how for a in auto.store.aliases_of(["tarnholm maritime society"])}
    assert how["tms"].startswith("automatic") and "introduced" in how["tms"]
    # one node: the facts of both names hang off it, the passages of both names mention it
    mentioned_in = {c for _, c in auto.store.mentions_of(["tarnholm maritime society"])}
    titles = {auto.store.chunk_documents()[c][1] for c in mentioned_in}
    assert {"Selva Regatta", "Orrin Survey", TMS} <= titles

    manual = make_index("manual", entity_auto_merge=1.0)
    manual.add_documents(docs)
    assert manual.store.aliases()["tms"] == "tms"  # two entities
    proposals = _pairs(manual.store.proposals())
    tms = proposals[frozenset((TMS, "TMS"))]
    reasons, evidence = json.loads(tms.reasons), json.loads(tms.evidence)
    assert "acronym" in reasons and "a document introduces one form for the other" in reasons
    passages = [p["text"] for side in ("a", "b") for p in evidence[side]]
    assert any("Tarnholm Maritime Society (TMS)" in t for t in passages)
    assert any("The TMS organises it every August" in t for t in passages)
    variant = proposals[frozenset(("Tarnholm", "Tarnholme"))]  # a spelling variant: proposed, never automatic
    assert "spelling" in json.loads(variant.reasons) and auto.store.aliases()["tarnholme"] == "tarnholme"


class _Stub:
    """An extractor that writes what a model might: initials, an acronym of another type, two birth years."""

    name = "stub"
    uses_llm = False

    def extract(self, text: str, title: str) -> ChunkExtraction:
        if title == "Edda Morlund":
            entities = [ExtractedEntity(name="Edda Morlund", type="person"), ExtractedEntity(name="EM", type="org")]
            born = [ExtractedRelation(subject="Edda Morlund", predicate="born in", object="1889")]
        else:
            entities = [ExtractedEntity(name="E. Morlund", type="person")]
            born = [ExtractedRelation(subject="E. Morlund", predicate="born in", object="1901")]
        return ChunkExtraction(entities=entities, relations=born)


def test_initials_are_proposed_and_conflicts_are_never_merged_automatically(make_index, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "edda.md").write_text("# Edda Morlund\n\nEdda Morlund (EM) was an engineer born in 1889.\n")
    (folder / "survey.md").write_text("# Survey\n\nThe survey was led by E. Morlund, born in 1901.\n")
    index = make_index(extractor=_Stub(), entity_auto_merge=0.0)
    index.add_documents(load_documents(folder))
    proposals = _pairs(index.store.proposals())
    initials = json.loads(proposals[frozenset(("E. Morlund", "Edda Morlund"))].reasons)
    assert "initials" in initials and "conflicting facts (born in: 1889, 1901)" in initials
    acronym = json.loads(proposals[frozenset(("EM", "Edda Morlund"))].reasons)
    assert "a document introduces one form for the other" in acronym and "conflicting types (org, person)" in acronym
    assert all(key == entity for key, entity in index.store.aliases().items())  # threshold 0: still no merge


def test_a_rejection_is_never_crossed_and_the_latest_verdict_on_a_pair_wins():
    forms = {k: NameForm(k) for k in ("a", "b", "c")}
    canonical, _ = merge_groups(forms, [("merge", "a", "b"), ("reject", "a", "c"), ("merge", "b", "c")], [], None)
    assert canonical["a"] == canonical["b"] != canonical["c"]
    canonical, _ = merge_groups(forms, [("merge", "a", "b"), ("reject", "a", "b")], [], None)
    assert canonical["a"] != canonical["b"]


# --- through the CLI, as a person reviews -------------------------------------------------------------------------


def _run(*args, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli", *map(str, args)],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=ROOT,
        env={**os.environ, "KGRAG_ENTITY_AUTO_MERGE": "1"},  # nothing merged without review
    )


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    """The sample corpus (a copy: one document is edited later) indexed with no automatic merge: the CLI tests review
    it in place; ``unreviewed`` is a copy of it as built. (All of it: in a smaller graph the TMS's passages lead to
    the full name's by PPR before any merge.)"""
    base = tmp_path_factory.mktemp("entities")
    corpus = base / "corpus"
    shutil.copytree(EXAMPLES, corpus)
    built = _run("index", corpus, "--index-dir", base / "idx", "--quiet")
    assert built.returncode == 0, built.stderr
    shutil.copytree(base / "idx", base / "unreviewed")
    return corpus, base / "idx"


@pytest.fixture
def unreviewed(reviewed, tmp_path):
    """A copy of the review corpus's index as built, before any decision: the test may write to it."""
    shutil.copytree(reviewed[1].parent / "unreviewed", tmp_path / "idx")
    return tmp_path / "idx"


def _answer(index_dir, question):
    out = _run("ask", question, "--index-dir", index_dir)
    assert out.returncode == 0, out.stderr
    return next(line for line in out.stdout.splitlines() if line.startswith("answer:"))


def _merged(index_dir):
    out = _run("entities", "list", "--json", "--index-dir", index_dir)
    assert out.returncode == 0, out.stderr
    return {e: sorted(a["name"] for a in v["aliases"]) for e, v in json.loads(out.stdout)["merged"].items()}


def test_review_accept_reject_undo_survive_reindex_and_repair(reviewed, tmp_path):
    corpus, index_dir = reviewed
    listed = _run("entities", "review", "--index-dir", index_dir)  # stdin and stdout are not a terminal: JSON out
    assert listed.returncode == 0, listed.stderr
    proposals = {frozenset((p["a"], p["b"])): p for p in json.loads(listed.stdout)["proposals"]}
    assert frozenset((TMS, "TMS")) in proposals and frozenset(("Tarnholm", "Tarnholm Opera House")) in proposals
    assert "1903" not in _answer(
        index_dir, "When was the TMS founded?"
    )  # two entities: the year is in the full name's passage only
    decisions = [
        {"verdict": "accept", "a": "TMS", "b": TMS, "why": "the survey says so"},
        {"verdict": "reject", "a": "Tarnholm", "b": "Tarnholm Opera House"},
    ]
    applied = _run("entities", "review", "--index-dir", index_dir, stdin=json.dumps(decisions))
    assert applied.returncode == 0, applied.stderr
    assert [d["verdict"] for d in json.loads(applied.stdout)["decisions"]] == ["merge", "reject"]
    assert _merged(index_dir) == {"tarnholm maritime society": ["TMS", TMS]}
    assert "1903" in _answer(index_dir, "When was the TMS founded?")

    (corpus / "selva_regatta.md").write_text((corpus / "selva_regatta.md").read_text() + "\nThe TMS keeps the cup.\n")
    assert _run("index", corpus, "--index-dir", index_dir, "--quiet").returncode == 0  # a changed document
    repaired = _run("repair", "--index-dir", index_dir, "--quiet")
    assert repaired.returncode == 0, repaired.stderr
    assert _merged(index_dir) == {"tarnholm maritime society": ["TMS", TMS]}
    again = json.loads(_run("entities", "review", "--index-dir", index_dir).stdout)["proposals"]
    assert {frozenset((p["a"], p["b"])) for p in again}.isdisjoint({frozenset(("Tarnholm", "Tarnholm Opera House"))})

    graphml = tmp_path / "graph.graphml"
    assert _run("export", "--graphml", graphml, "--index-dir", index_dir).returncode == 0
    assert "TMS; Tarnholm Maritime Society" in graphml.read_text()  # the aliases travel with the graph

    assert _run("entities", "undo", "--index-dir", index_dir).returncode == 0  # the rejection
    undone = _run("entities", "undo", "--index-dir", index_dir)  # the merge
    assert undone.returncode == 0 and "undone: decision 1 (merge 'TMS'" in undone.stdout
    assert _merged(index_dir) == {}
    history = json.loads(_run("entities", "decisions", "--json", "--index-dir", index_dir).stdout)["decisions"]
    assert [(d["verdict"], d["why"], d["undone"] is not None) for d in history] == [
        ("merge", "the survey says so", True),
        ("reject", "", True),
    ]


def test_merge_and_split_by_name_through_the_cli(reviewed):
    _, index_dir = reviewed
    merged = _run("entities", "merge", "Halvard", "Halvard Instruments", "--index-dir", index_dir)
    assert merged.returncode == 0, merged.stderr
    assert _merged(index_dir)["halvard instruments"] == ["Halvard", "Halvard Instruments"]
    again = _run("entities", "merge", "Halvard", "Halvard Instruments", "--index-dir", index_dir)
    assert again.returncode == 2 and "already one entity" in again.stderr and "Traceback" not in again.stderr
    unknown = _run("entities", "merge", "Halvard", "Nobody Atall", "--index-dir", index_dir)
    assert unknown.returncode == 2 and "no entity named 'Nobody Atall'" in unknown.stderr
    split = _run("entities", "split", "Halvard", "--index-dir", index_dir)
    assert split.returncode == 0, split.stderr
    assert "halvard instruments" not in _merged(index_dir)
    history = json.loads(_run("entities", "decisions", "--json", "--index-dir", index_dir).stdout)["decisions"]
    assert [d["verdict"] for d in history if d["undone"] is None][-2:] == ["merge", "reject"]


def test_decisions_are_part_of_the_record(make_index, tmp_path):
    index = make_index(entity_auto_merge=1.0)
    index.add_documents(load_documents(_small_corpus(tmp_path / "corpus")))
    before = index.source_state()
    (decision,), summary = index.decide([Decision("merge", "Halvard", "Halvard Instruments", "me", "same firm")])
    assert summary.refreshed and index.source_state() != before  # a decision changes what is derived
    assert decision.id and index.store.aliases()["halvard"] == "halvard instruments"
    with pytest.raises(Exception, match="no decision 99 in force"):
        index.undo_decision(99)


# --- decisions applied on the previous generation (graph_store/reuse.py) ------------------------------------------

DECISIONS = [
    Decision("merge", "TMS", TMS, "me", "the survey says so"),
    Decision("merge", "Halvard", "Halvard Instruments", "me", "same firm"),
    Decision("reject", "Tarnholm", "Tarnholm Opera House", "me", "a town and a building"),
]
# Every collection gets an HNSW graph to extend. Facts are embedded by the model: a decision upserts new ones to Chroma.
INCREMENTAL = {"entity_auto_merge": 1.0, "ann_min_vectors": 1}
QUESTION = "Who founded the TMS?"


def _built(make_index, tmp_path):
    index = make_index(**INCREMENTAL)
    index.add_documents(load_documents(_small_corpus(tmp_path / "corpus")))
    return index


def _ask(index_dir, question=QUESTION):
    answer = KGRag(settings=load_settings(environ={}, index_dir=index_dir, **INCREMENTAL)).ask(question)
    return str(answer), [(c.title, c.text) for c in answer.sources()[0]]


COMMUNITIES = ("communities", "community_members", "reports")  # redone only where touched: compared apart


def _assert_equals_a_full_rebuild(index, make_index, tmp_path):
    """The index equals a copy of it whose derived state is rebuilt from the record: tables, graph, vectors,
    answers. Communities are compared by ``_assert_touched_communities_redone``."""
    shutil.copytree(index.dir, tmp_path / "full")
    full = make_index("full", **INCREMENTAL)
    full.refresh(force=True)
    tables, expected_tables = index.store.content_dump(), full.store.content_dump()
    for table in COMMUNITIES:
        tables.pop(table), expected_tables.pop(table)
    assert tables == expected_tables  # entities, aliases, facts, relations, synonyms, proposals, ...
    graph, expected = index.graph(), full.graph()
    assert (graph.entity_ids, graph.chunk_ids) == (expected.entity_ids, expected.chunk_ids)
    assert (graph.adjacency != expected.adjacency).nnz == 0
    with Exported(index.generation().dir) as got, Exported(full.generation().dir) as want:
        for name in ("chunks", "entities", "facts"):
            assert got.ids(name).tolist() == want.ids(name).tolist()
            # (Chroma returns the model's vectors rounded in the last bit: a build's export, made from the vectors as
            # embedded, differs so from a rebuild's, read back from Chroma, with or without decisions.)
            assert np.allclose(got.matrix(name), want.matrix(name), rtol=0, atol=1e-7)
    assert _ask(index.dir) == _ask(full.dir)


def _assert_touched_communities_redone(before, index, partitioned=None):
    """The communities of ``before`` (the community tree and the relations) with no entity whose relations changed
    are kept with their reports, the others are redone (``partitioned``: the entities Leiden was given); each level
    still puts an entity in one community at most."""
    before, relations = before
    touched_entities = {e for r in relations ^ set(index.store.relations()) for e in r[:2]}
    tree = index.store.community_tree()
    ids = {c.id for c, _ in tree}
    untouched = [c.id for c, members in before if c.level == 0 and not touched_entities & set(members)]
    touched = [c.id for c, members in before if c.level == 0 and touched_entities & set(members)]
    assert untouched and touched and set(untouched) <= ids
    if partitioned is not None:
        members = {c.id: set(m) for c, m in before}
        present = set(index.store.entity_names())
        assert all(members[c] & present <= partitioned for c in touched)
        assert all(partitioned.isdisjoint(members[c]) for c in untouched)
    assert {r[0] for r in index.store.rows("SELECT community_id FROM reports")} == ids
    for level in {c.level for c, _ in tree}:
        members = [m for c, ms in tree if c.level == level for m in ms]
        assert len(members) == len(set(members))


def test_decisions_applied_on_the_previous_generation_equal_a_full_rebuild(make_index, tmp_path, monkeypatch):
    index = _built(make_index, tmp_path)
    communities = index.store.community_tree(), set(index.store.relations())
    # Applying decisions resolves no name again and compares no pair of entity vectors that did not change.
    for name in ("resolve_names", "synonym_pairs"):
        monkeypatch.setattr(graph, name, lambda *a, **k: pytest.fail("a name resolution or all-pairs synonymy"))
    partitioned: set[str] = set()

    def leiden(graph, *args, vertices=None):  # (the graph's vertices are the entities in id order)
        ids = [e.id for e in index.store.entities()]
        partitioned.update(ids[v] for v in (range(len(ids)) if vertices is None else vertices))
        return hierarchical_leiden(graph, *args, vertices=vertices)

    monkeypatch.setattr(communities_module, "hierarchical_leiden", leiden)
    _, summary = index.decide(DECISIONS)
    monkeypatch.undo()
    assert index.store.aliases()["tms"] == "tarnholm maritime society"
    with Exported(index.generation().dir) as exported:  # the HNSW graphs were extended
        assert (exported.graph_rows("entities") == -1).sum() == 2  # "tms" and "halvard": dead nodes
        assert exported.graph_rows("chunks").tolist() == list(range(len(exported.ids("chunks"))))
    _assert_touched_communities_redone(communities, index, partitioned)
    _assert_equals_a_full_rebuild(index, make_index, tmp_path)


KILL_AT = {  # where the process applying the decisions kills itself (after: once the function has returned)
    "graph tables rewritten": "graph_store.graph:store_synonyms",
    # The new facts are in Chroma but in no generation: the next run reads them back from Chroma.
    "right after a Chroma upsert": "after chromadb.api.models.Collection:Collection.upsert",
    "next generation half written": "graph_store.store.sqlite:Store.write_snapshot",
}
_KILLED_DECIDE = """
import importlib, os, signal, sys
from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings
from graph_store.store import Decision

after, _, point = sys.argv[2].rpartition(" ")
module, _, attribute = point.partition(":")
owner = importlib.import_module(module)
*path, name = attribute.split(".")
for part in path:
    owner = getattr(owner, part)
original = getattr(owner, name)

def killed(*a, **k):
    if after:
        original(*a, **k)
    os.kill(os.getpid(), signal.SIGKILL)

setattr(owner, name, killed)
index = KnowledgeIndex(load_settings(environ={}, index_dir=sys.argv[1], **%r), progress=False)
index.decide([Decision(*d) for d in %r])
"""


@pytest.mark.parametrize("point", list(KILL_AT))
def test_a_kill_while_decisions_are_applied_leaves_the_last_generation_and_the_next_run_finishes(
    point, make_index, tmp_path
):
    index = _built(make_index, tmp_path)
    before, generation, communities = _ask(index.dir), index.generation().number, index.store.community_tree()
    communities = communities, set(index.store.relations())
    index.close()
    script = _KILLED_DECIDE % (INCREMENTAL, [(d.verdict, d.a, d.b, d.who, d.why) for d in DECISIONS])
    killed = subprocess.run(
        [sys.executable, "-c", script, str(index.dir), KILL_AT[point]],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    reopened = make_index(**INCREMENTAL)
    assert reopened.generation().number == generation and reopened.pending_changes(reopened.generation())
    assert _ask(reopened.dir) == before  # the last complete generation answers
    assert reopened.refresh().refreshed  # what `kgrag index` without a path does
    assert reopened.generation().number == generation + 1 and not reopened.pending_changes(reopened.generation())
    _assert_touched_communities_redone(communities, reopened)
    _assert_equals_a_full_rebuild(reopened, make_index, tmp_path)


# --- what an automatic merge may do: the wrong merges read on the benchmark corpora, in miniature -----------------


def _automatic_groups(documents: dict[str, tuple[str, list[str]]]) -> list[set[str]]:
    """The groups of more than one name merged automatically (default threshold) over one-passage documents:
    document id -> (text, the names extracted from it)."""
    forms: dict[str, NameForm] = {}
    for doc, (_, names) in documents.items():
        for name in names:
            form = forms.setdefault(normalize_name(name), NameForm(normalize_name(name)))
            form.names[name] += 1
            form.chunks.add(doc)
    passages = {doc: (doc, doc, text) for doc, (text, _) in documents.items()}
    canonical, _ = merge_groups(forms, [], candidates(forms, passages, None), DEFAULT_AUTO_MERGE)
    groups: dict[str, set[str]] = {}
    for key, head in canonical.items():
        groups.setdefault(head, set()).add(key)
    return [g for g in groups.values() if len(g) > 1]


def test_an_introduced_short_form_is_merged_automatically():
    assert _automatic_groups(
        {
            "a": (
                "Corvane Robotics (Corvane) makes arms. The Tarnholm Maritime Society (TMS) sails.",
                ["Corvane Robotics", "Corvane", "Tarnholm Maritime Society", "TMS"],
            )
        }
    ) == [{"corvane robotics", "corvane"}, {"tarnholm maritime society", "tms"}]


def test_automatic_merges_never_chain():
    groups = _automatic_groups(
        {
            "a": ("The European Union (EU) has 27 members.", ["European Union", "EU"]),
            "b": (
                "The European Union Association Agreement (European Union) was signed.",
                ["European Union Association Agreement", "European Union"],
            ),
        }
    )
    assert len(groups) == 1 and len(groups[0]) == 2  # one of the two introductions, never EU in the Agreement


@pytest.mark.parametrize(
    "text, names",
    [
        # ambiguous: "Houston" is the start of two longer names of the document
        (
            "Top seed Houston Rockets Season MVP James Harden (Houston). The Houston Rockets won.",
            ["Houston Rockets Season MVP James Harden", "Houston", "Houston Rockets"],
        ),
        ("James Todd Smith (Smith) is a rapper.", ["James Todd Smith", "Smith"]),  # a surname
        ("The Executive Council of Abu Dhabi (Abu Dhabi) met.", ["Executive Council of Abu Dhabi", "Abu Dhabi"]),
        (
            "Deathstalker and the Warriors from Hell (Deathstalker) is a film.",
            ["Deathstalker and the Warriors from Hell", "Deathstalker"],
        ),  # cut at a function word
        ("Prince Birabongse (Prince) raced. He was a prince of Siam.", ["Prince Birabongse", "Prince"]),  # a word
        ("Corvane Robotics, known as Corvane Labs, makes arms.", ["Corvane Robotics", "Corvane"]),  # not the alias
    ],
)
def test_what_an_introduction_does_not_prove_is_left_to_review(text, names):
    assert _automatic_groups({"a": (text, names)}) == []


# --- the interrupt-based review flow (agent/entity_review.py), as Studio drives it -------------------------------


def _short_answer(index, question):
    from agent.context import Context
    from agent.graph import build_pankrag_graph
    from agent.resources import Resources

    context = Context(resources=Resources(index, None, None))  # the index's newest generation
    return build_pankrag_graph().invoke({"question": question}, context=context)["short_answer"]


def test_a_person_reviews_proposals_in_the_interrupt_flow_across_a_restart(
    make_index, unreviewed, tmp_path, monkeypatch
):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    from agent.context import ReviewContext
    from agent.graph import build_entity_review_graph

    index = make_index(unreviewed.name, entity_auto_merge=1.0)  # nothing merged without review
    assert (
        _short_answer(index, "When was the TMS founded?") != "1903"
    )  # two entities: the year is in the full name's passage only
    calls = []
    decide = index.decide
    monkeypatch.setattr(index, "decide", lambda decisions: calls.append(decisions) or decide(decisions))
    brask = frozenset(("Brask Optics", "Brask Optics of Ludvik"))
    wanted = {frozenset((TMS, "TMS")): "merge", brask: {"verdict": "Reject", "why": "a firm and its branch"}}
    context, thread = ReviewContext(index=index), {"configurable": {"thread_id": "review"}}

    def step(resume):
        """One run of the flow from a fresh checkpointer connection, as a restarted server makes: its interrupt."""
        with SqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as saver:
            graph = build_entity_review_graph(saver)
            graph.invoke(resume, thread, context=context)
            state = graph.get_state(thread)
            return state.tasks[0].interrupts[0].value if state.next else state.values

    asked = step({"who": "ana", "limit": 3})  # the best three: TMS, Brask and one to skip
    assert asked["proposal"].startswith("1 of ") and asked["problem"] is None
    assert {"a", "b", "score", "why", "types", "evidence"} <= asked.keys() and asked["evidence"]["a"]
    again = step(Command(resume=42))  # not a verdict: the same proposal, asked again with the reason
    assert (again["a"], again["b"]) == (asked["a"], asked["b"]) and '"merge", "reject" or "skip"' in again["problem"]
    seen = []
    while "proposal" in asked:
        seen.append(frozenset((asked["a"], asked["b"])))
        asked = step(Command(resume=wanted.get(seen[-1], "skip")))
    assert set(wanted) <= set(seen) and len(seen) == 3
    assert len(calls) == 1 and len(calls[0]) == 2  # every decision in one rebuild; skips are not decisions
    assert sorted((d["verdict"], d["who"], d["why"]) for d in asked["decisions"]) == [
        ("merge", "ana", "review"),
        ("reject", "ana", "a firm and its branch"),
    ]
    assert all(d["id"] for d in asked["decisions"]) and "1 merged, 1 rejected, 1 skipped" in asked["summary"]
    assert index.store.aliases()["tms"] == index.store.aliases()["tarnholm maritime society"]
    assert brask not in {frozenset((p.a_name, p.b_name)) for p in index.store.proposals()}  # rejected: settled
    assert _short_answer(index, "When was the TMS founded?") == "1903"

    thread = {"configurable": {"thread_id": "late"}}  # a pair merged by someone else while it waits for a verdict
    graph = build_entity_review_graph(InMemorySaver())
    pair = graph.invoke({"limit": 1}, thread, context=context)["__interrupt__"][0].value
    decide([Decision("merge", pair["a"], pair["b"])])
    late = graph.invoke(Command(resume="merge"), thread, context=context)
    assert late["decisions"] == [] and "nothing recorded" in late["summary"] and "already one entity" in late["summary"]
    none = graph.invoke({"min_score": 2}, {"configurable": {"thread_id": "none"}}, context=context)
    assert none["summary"] == "no open proposal to review scoring 2 or more"
    with pytest.raises(InputError, match="a limit of 1 or more"):
        graph.invoke({"limit": -1}, {"configurable": {"thread_id": "bad"}}, context=context)
