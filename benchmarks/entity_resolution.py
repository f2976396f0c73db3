"""Entity resolution on the benchmark corpora: proposals, automatic merges, and the cost of the step.

    .venv/bin/python benchmarks/entity_resolution.py [--data DIR] [--sample 50]

For MuSiQue (offline extraction, and the recorded GPT-3.5 extraction), HotpotQA and 2Wiki: the record is written
(documents, chunks, extractions; no vectors), then the graph tables are derived with the default auto-merge
threshold, timed. Prints the number of entities, proposals and automatic merges, and writes up to --sample
automatic merges with the words that introduce them to benchmarks/out/entity_merges_sample.txt, to be checked by
reading them. Vector similarity is left out of the scores here (no embedder): it is 5% of a score.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _common import OUT_DIR, data_dir, print_table, skip, write_result

from graph_store.documents import Document, chunk_document, content_hash
from graph_store.extraction import OfflineExtractor, dump_extraction
from graph_store.graph import derive_graph_tables
from graph_store.settings import DEFAULT_AUTO_MERGE
from graph_store.store import ChunkRow, DocumentRow, ExtractionRow, Store
from kgrag.evaluation.datasets import RecordedExtractor, hotpotqa, musique


def _corpora(folder: Path) -> dict[str, tuple[list[Document], object]]:
    wiki = json.loads((folder / "2wikimultihopqa_corpus.json").read_text())
    return {
        "musique (offline)": (musique(folder)[0], OfflineExtractor()),
        "musique (recorded gpt-3.5)": (
            musique(folder)[0],
            RecordedExtractor(folder / "musique_corpus_openie_gpt35.json"),
        ),
        "hotpotqa (offline)": (hotpotqa(folder)[0], OfflineExtractor()),
        "2wiki (offline)": ([Document(text=p["text"], title=p["title"]) for p in wiki], OfflineExtractor()),
    }


def _record(store: Store, docs: list[Document], extractor) -> None:
    rows = []
    for doc in {d.id: d for d in docs}.values():
        chunks = chunk_document(doc, 240, 40)
        rows.append(
            (
                DocumentRow(doc.id, doc.title, doc.source, content_hash(doc.title + doc.text)),
                [ChunkRow(c.id, c.doc_id, c.index, c.text, c.n_tokens) for c in chunks],
            )
        )
    store.add_documents(rows)
    extractions = []
    for chunk_id, text, title in store.chunks_to_extract():
        payload = dump_extraction(extractor.extract(text, title))
        extractions.append(ExtractionRow(chunk_id, extractor.name, "ok", None, payload, content_hash(payload)))
    store.save_extractions(extractions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data")
    parser.add_argument("--sample", type=int, default=50)
    args = parser.parse_args()
    folder = data_dir(args.data)
    if folder is None:
        skip("no benchmark data folder (../shared/data)")
    rows, sample = [], []
    for name, (docs, extractor) in _corpora(folder).items():
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "index.sqlite")
            _record(store, docs, extractor)
            start = time.perf_counter()
            proposals = derive_graph_tables(store, DEFAULT_AUTO_MERGE)
            seconds = time.perf_counter() - start
            merged = [a for a in store.rows("SELECT key, entity_id, name, how FROM aliases") if a[0] != a[1]]
            names = store.entity_names()
            sample += [
                {"corpus": name, "short": form, "long": names[entity], "how": how} for _, entity, form, how in merged
            ]
            rows.append(
                {
                    "corpus": name,
                    "documents": len(docs),
                    "entities": store.count("entities"),
                    "proposals": len(proposals),
                    "auto-merged names": len(merged),
                    "derive s": round(seconds, 1),
                }
            )
            store.close()
    print_table(rows, list(rows[0]))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    picked = sample[:: max(1, len(sample) // args.sample)][: args.sample]
    lines = [f"{s['corpus']}: {s['short']!r} -> {s['long']!r}\n    {s['how']}" for s in picked]
    (OUT_DIR / "entity_merges_sample.txt").write_text("\n".join(lines) + "\n")
    write_result("entity_resolution", {"rows": rows, "auto_merges": len(sample), "sampled": len(picked)})


if __name__ == "__main__":
    main()
