"""The vector export as memory-mapped files (graph_store/vectors.py): what a build writes and a reader maps, `kgrag
check` over them, a generation from before them (one vectors.npz) still answering, and an export built on it."""

import json
from pathlib import Path

import faiss
import numpy as np

from graph_store import generations
from graph_store.integrity import check_index
from graph_store.retrieval import Retrievers
from graph_store.vectors import COLLECTIONS, Exported, exported_files
from tests.test_entities import DECISIONS, _assert_equals_a_full_rebuild, _built

QUESTIONS = [
    "Where was the founder of Halvard Instruments born?",
    "Which river flows through the city where the founder of Halvard Instruments was born?",
    "Who founded Halvard Instruments?",
]


def _mapped(path: Path) -> bool:
    """Whether this process has ``path`` memory-mapped."""
    return any(line.endswith(f" {path}") for line in Path("/proc/self/maps").read_text().splitlines())


def _answers(retrievers: Retrievers) -> list:
    return [
        (
            [e.id for e in retrievers.dense(q)],
            [e.id for e in retrievers.ppr(q).evidence],
            [e.id for e in retrievers.local(q)],
            retrievers.search("facts", retrievers.embed(q), 5),
        )
        for q in QUESTIONS
    ]


def test_a_build_exports_vectors_and_graphs_that_readers_memory_map(make_index, sample_docs):
    index = make_index("mapped", ann_min_vectors=1)  # every collection gets an HNSW graph
    index.add_documents(sample_docs[:8])
    generation = index.generation()
    assert not generation.path("vectors.npz").exists()
    for name in COLLECTIONS:
        for file in exported_files(name)[:3]:  # ids, vectors, graph: sealed with the generation
            assert file in generation.files
    retrievers = Retrievers(index)
    for name in COLLECTIONS:
        assert isinstance(retrievers.matrices[name][1], np.memmap)
        assert _mapped(generation.path(exported_files(name)[2]))  # the faiss graph's own vectors too
    vector = retrievers.embed(QUESTIONS[0])
    exact = np.argsort(-(retrievers.matrices["chunks"][1] @ vector), kind="stable")[:5].tolist()
    assert [row for row, _ in retrievers.hnsw["chunks"].search(vector, 5)] == exact  # (a small graph: exact)
    assert check_index(index.settings) == []
    damaged = generation.path(exported_files("facts")[1])
    data = bytearray(damaged.read_bytes())
    data[-8:] = b"\x00" * 8  # one vector changed, the size kept: only the checksum tells
    damaged.write_bytes(bytes(data))
    assert any(exported_files("facts")[1] in p for p in check_index(index.settings))


def _to_npz(folder: Path) -> None:
    """Make ``folder`` a generation from before the .npy files: every collection in one vectors.npz."""
    arrays: dict = {}
    with Exported(folder) as exported:
        for name in COLLECTIONS:
            arrays[f"{name}_ids"], arrays[f"{name}_vectors"] = (
                np.array(exported.ids(name)),
                np.array(exported.matrix(name)),
            )
            if exported.has_graph(name):
                arrays[f"{name}_hnsw"] = faiss.serialize_index(exported.graph(name, mapped=False))
                if exported.graph_rows(name) is not None:
                    arrays[f"{name}_hnsw_rows"] = np.array(exported.graph_rows(name))
    np.savez(folder / "vectors.npz", **arrays)
    meta = json.loads((folder / "generation.json").read_text())
    for name in COLLECTIONS:
        for file in exported_files(name):
            if (folder / file).exists():
                (folder / file).unlink()
                del meta["files"][file]
    path = folder / "vectors.npz"
    meta["files"]["vectors.npz"] = {"bytes": path.stat().st_size, "sha256": generations._sha256(path)}
    (folder / "generation.json").write_text(json.dumps(meta))


def test_a_generation_from_before_the_npy_files_still_answers(make_index, sample_docs):
    index = make_index("old", ann_min_vectors=1)
    index.add_documents(sample_docs[:8])
    now = _answers(Retrievers(index))
    _to_npz(index.generation().dir)
    before = Retrievers(index)
    assert not isinstance(before.matrices["chunks"][1], np.memmap) and set(before.hnsw) == set(COLLECTIONS)
    assert _answers(before) == now
    assert check_index(index.settings) == []
    assert index.stats()["vectors"] == {name: len(before.matrices[name][0]) for name in COLLECTIONS}


def test_decisions_applied_on_a_generation_from_before_the_npy_files_equal_a_full_rebuild(make_index, tmp_path):
    """The next export takes the model's vectors from the old vectors.npz and extends its HNSW graphs."""
    index = _built(make_index, tmp_path)
    _to_npz(index.generation().dir)
    index.decide(DECISIONS)
    generation = index.generation()
    assert not generation.path("vectors.npz").exists()
    with Exported(generation.dir) as exported:
        assert (exported.graph_rows("entities") == -1).sum() == 2  # extended: "tms" and "halvard" dead nodes
    _assert_equals_a_full_rebuild(index, make_index, tmp_path)
