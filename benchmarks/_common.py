"""Helpers shared by benchmark scripts: data location, timing, result files."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from anywhere: import the project and tests.helpers
DEFAULT_DATA = ROOT.parent / "shared" / "data"
OUT_DIR = Path(__file__).resolve().parent / "out"


def data_dir(arg: str | None = None) -> Path | None:
    """The benchmark data folder, or None (callers skip cleanly) when it is absent."""
    path = Path(arg or os.environ.get("KGRAG_BENCH_DATA", DEFAULT_DATA))
    return path if path.is_dir() else None


def skip(reason: str) -> None:
    print(f"SKIPPED: {reason}")
    sys.exit(0)


def machine() -> str:
    return f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python {platform.python_version()}"


def median(values: list[float]) -> float:
    return statistics.median(values)


def peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_result(name: str, result: dict) -> Path:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": name, "machine": machine(), "date": time.strftime("%Y-%m-%d"), **result}
    path = OUT_DIR / f"{name}.json"
    path.write_text(json.dumps(result, indent=2))
    return path


def print_table(rows: list[dict], columns: list[str]) -> None:
    widths = {c: max(len(c), *(len(f"{r.get(c, '')}") for r in rows)) for c in columns}
    print(" | ".join(c.ljust(widths[c]) for c in columns))
    print("-+-".join("-" * widths[c] for c in columns))
    for r in rows:
        print(" | ".join(f"{r.get(c, '')}".ljust(widths[c]) for c in columns))


def bundled_graph_embedder(perturb_seed: str | None = None):
    """The MiniLM embedder on the bundled model's own float graph: the embedder before the int8 graph.

    With ``perturb_seed``, every vector also gets a fixed random perturbation per text of the int8 graph's
    size (cosine 0.998 to the unperturbed vector): a change that carries no information, to see how far a
    benchmark moves for any change of that size.
    """
    import hashlib

    import numpy as np

    from graph_store.embeddings import BundledGraph, MiniLMEmbedder

    class Bundled(MiniLMEmbedder):
        def _load(self):
            if not self._sessions:
                self._sessions = [BundledGraph() for _ in range(self.workers)]
            return self._sessions

        def embed(self, texts):
            rows = super().embed(texts)
            if perturb_seed is None:
                return rows
            for row, text in zip(rows, texts):
                digest = hashlib.sha256(f"{perturb_seed}:{text}".encode()).digest()
                noise = np.random.default_rng(int.from_bytes(digest[:8], "little")).standard_normal(len(row))
                row += (noise * 0.063 / np.sqrt(len(row))).astype(np.float32)  # |noise| 0.063: cosine 0.998
            return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    return Bundled()


def dev_halves(items: list, key: Callable[[Any], str]) -> list[tuple[str, list]]:
    """A dev set's two halves by sorted question id (issue 24: the first is developed on, the second held out)."""
    ordered = sorted(items, key=key)
    middle = len(ordered) // 2
    return [("first", ordered[:middle]), ("second", ordered[middle:])]
