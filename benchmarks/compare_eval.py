"""Compare two evaluation runs question by question: are the answers and recalls the same?

    python benchmarks/compare_eval.py BEFORE_DIR AFTER_DIR

Each folder is a `kgrag evaluate --out` folder (one <system>.jsonl per system). A refactoring that must not change
behaviour passes when every system's questions have the same answer, EM, F1 and Recall@k in both runs; timings
may differ. Prints a table per system and each difference; exits 1 when any question differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COMPARED = ("answer", "em", "f1", "recall@1", "recall@2", "recall@5", "recall@10", "hop_recall@5")


def rows(path: Path) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, path.read_text().splitlines()) if row}


def compare(before: Path, after: Path) -> list[str]:
    differences = []
    systems = sorted({p.stem for p in before.glob("*.jsonl")} | {p.stem for p in after.glob("*.jsonl")})
    print("| system | questions | same | different |\n|---|---|---|---|")
    for system in systems:
        old, new = (
            rows(folder / f"{system}.jsonl") if (folder / f"{system}.jsonl").exists() else {}
            for folder in (before, after)
        )
        changed = []
        for qid in sorted(old.keys() | new.keys()):
            a, b = old.get(qid), new.get(qid)
            if a is None or b is None:
                changed.append(f"{system} {qid}: only in {'after' if a is None else 'before'}")
                continue
            fields = [f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in COMPARED if a.get(k) != b.get(k)]
            if fields:
                changed.append(f"{system} {qid}: " + "; ".join(fields))
        print(
            f"| {system} | {len(old.keys() | new.keys())} | {len(old.keys() | new.keys()) - len(changed)} "
            f"| {len(changed)} |"
        )
        differences += changed
    return differences


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    for folder in (args.before, args.after):
        if not list(folder.glob("*.jsonl")):
            print(f"{folder}: no <system>.jsonl files (a `kgrag evaluate --out` folder)", file=sys.stderr)
            return 2
    differences = compare(args.before, args.after)
    print("\n".join(differences) if differences else "\nevery question: the same answer and recalls")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
