"""EM / F1 / R@5 of an evaluation run on the two halves of a dev set, split by question id (sorted ids: the
first 25 are the half developed on, the last 25 the held-out half; issue 24).

    .venv/bin/python benchmarks/dev_halves.py EVAL_DIR [EVAL_DIR ...]

EVAL_DIR: the --out of `kgrag evaluate` (one <system>.jsonl per system).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from _common import dev_halves


def main() -> None:
    for folder in map(Path, sys.argv[1:]):
        print(f"{folder}:")
        print("| system | half | questions | EM | F1 | R@5 |\n|---|---|---|---|---|---|")
        for path in sorted(folder.glob("*.jsonl")):
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            for name, half in dev_halves(rows, key=lambda r: r["id"]):
                em, f1 = (100 * statistics.mean(r[k] for r in half) for k in ("em", "f1"))
                recall = 100 * statistics.mean(r["recall@5"] for r in half)
                print(f"| {path.stem} | {name} | {len(half)} | {em:.1f} | {f1:.1f} | {recall:.1f} |")


if __name__ == "__main__":
    main()
