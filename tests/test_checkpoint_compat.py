"""Conversations kept by kgrag 0.1 (before the records were typed and the run context moved to LangGraph's
runtime) still load: ``tests/data/checkpoints-0.1.sqlite.gz`` holds the demo question's thread ("old-demo"),
asked offline on the sample corpus by commit 69abf85."""

import gzip
import shutil

from graph_store.settings import load_settings
from kgrag import KGRag
from tests.conftest import ROOT

OLD = ROOT / "tests" / "data" / "checkpoints-0.1.sqlite.gz"


def test_a_conversation_kept_by_the_previous_version_loads_and_goes_on(sample_index, tmp_path):
    saved = tmp_path / "checkpoints.sqlite"
    with gzip.open(OLD) as packed, open(saved, "wb") as out:
        shutil.copyfileobj(packed, out)
    settings = load_settings(environ={}, index_dir=sample_index.dir, checkpointer=str(saved))
    with KGRag(settings=settings) as rag:
        state = rag.thread("old-demo")
        records = [state["subquestions"][sid] for sid in state["plan"]]
        assert [r["answer"] for r in records] == ["Edda Morlund", "Tarnholm", "Selva"]
        assert all(r["evidence"] and r["status"] == "answered" for r in records)
        assert state["short_answer"] == "Selva" and state["citations"][0]["n"] == 1
        follow_up = rag.ask("And where was she born?", thread="old-demo")
    assert follow_up.short_answer == "Tarnholm"
    assert follow_up.subquestions[0].id.startswith("2:")  # the second turn of the old conversation
