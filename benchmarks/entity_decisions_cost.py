"""The cost of applying 100 review decisions to the 2Wiki index against a rebuild (issue 26).

    .venv/bin/python benchmarks/entity_decisions_cost.py [--data DIR] [--decisions 100] [--from DIR]

Builds the 2Wiki corpus with the offline extractor in a fresh folder (benchmarks/out/indexes/2wiki-decisions), or
with --from copies an index folder built so before (the first build takes 16 minutes; the copy is left as it was), then
forces a rebuild of the derived state from the record (`refresh(force=True)`: no extraction, every table, vector,
community and report made or checked again), then accepts the best --decisions open merge proposals in one `decide`
(what `kgrag entities review` does with a JSON list of verdicts). Prints the seconds of each, with their steps.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from _common import OUT_DIR, data_dir, print_table, skip, write_result

from graph_store.documents import Document
from graph_store.embeddings import MiniLMEmbedder
from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings
from graph_store.store import Decision


def _timed(name: str, run) -> dict:
    start = time.perf_counter()
    summary = run()
    seconds = time.perf_counter() - start
    steps = "; ".join(f"{k} {v:.1f}" for k, v in summary.step_seconds.items())
    print(f"[{name}] {seconds:.1f} s ({steps}); load average {os.getloadavg()[0]:.1f}", flush=True)
    return {"run": name, "seconds": round(seconds, 1), "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data")
    parser.add_argument("--decisions", type=int, default=100)
    parser.add_argument("--from", dest="source", help="an index folder of the 2Wiki corpus to copy instead of a build")
    args = parser.parse_args()
    path = OUT_DIR / "indexes" / "2wiki-decisions"
    if args.source and Path(args.source).resolve() == path.resolve():
        sys.exit("--from must be another folder: this one is replaced")
    shutil.rmtree(path, ignore_errors=True)
    if args.source:
        shutil.copytree(args.source, path)
        index = KnowledgeIndex(load_settings(environ={}, index_dir=path), embedder=MiniLMEmbedder())
        documents = index.store.count("documents")
        rows = []
    else:
        folder = data_dir(args.data)
        if folder is None:
            skip("no benchmark data folder (../shared/data)")
        wiki = json.loads((folder / "2wikimultihopqa_corpus.json").read_text())
        docs = [Document(text=p["text"], title=p["title"]) for p in wiki]
        documents = len(docs)
        index = KnowledgeIndex(load_settings(environ={}, index_dir=path), embedder=MiniLMEmbedder())
        rows = [_timed("first build", lambda: index.add_documents(docs))]
    # The rebuild first: an index copied from an older kgrag has a generation the decisions cannot build on.
    rows.append(_timed("rebuild of the derived state", lambda: index.refresh(force=True)))
    proposals = sorted(index.store.proposals(), key=lambda p: -p.score)[: args.decisions]
    decisions = [Decision("merge", p.a_name, p.b_name, "benchmark", "entity_decisions_cost") for p in proposals]
    rows.append(_timed(f"{len(decisions)} decisions", lambda: index.decide(decisions)[1]))
    print_table(rows, ["run", "seconds", "steps"])
    write_result("entity_decisions_cost", {"documents": documents, "decisions": len(decisions), "rows": rows})


if __name__ == "__main__":
    main()
