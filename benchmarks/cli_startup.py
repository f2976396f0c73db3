"""How fast the CLI and the graph module start: `kgrag --help`, `kgrag config`, the time from `kgrag ask` to its
printed plan on the demo index, and importing the module LangGraph Server loads (kgrag/studio.py).

    .venv/bin/python benchmarks/cli_startup.py [--runs 5] [--index-dir .kgrag/demo-index]

Medians of --runs runs. Targets (issue 15, 2 cores): --help <= 0.3 s, config <= 0.5 s, first plan <= 2 s. A new conversation's plan
is shown before LangGraph loads (offline); a follow-up's is planned from the thread and waits for it.
The demo index is built first if it is missing (`make demo` builds the same).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT, median, print_table, write_result

KGRAG = [sys.executable, "-m", "kgrag.cli"]
QUESTION = "Which river flows through the city where the founder of Halvard Instruments was born?"


def _env() -> dict:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}, "PYTHONPATH": str(ROOT)}


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def first_plan(index_dir: Path, *extra: str, question: str = QUESTION) -> float:
    """Seconds from starting `kgrag ask` to its first printed plan line."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*KGRAG, "ask", question, "--index-dir", str(index_dir), *extra],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    for line in proc.stdout:
        if line.startswith("Plan ("):
            seconds = time.perf_counter() - start
            break
    else:
        raise RuntimeError("ask printed no plan")
    proc.stdout.read()
    proc.wait()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--index-dir", default=str(ROOT / ".kgrag" / "demo-index"))
    args = parser.parse_args()
    index_dir = Path(args.index_dir)
    if not (index_dir / "manifest.json").exists():
        subprocess.run(
            [*KGRAG, "index", str(ROOT / "examples" / "corpus"), "--index-dir", str(index_dir), "--quiet"],
            cwd=ROOT,
            env=_env(),
            check=True,
        )
    asked = subprocess.run(
        [*KGRAG, "ask", QUESTION, "--index-dir", str(index_dir)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    thread = asked.split("\nthread: ", 1)[1].split()[0]
    python = [sys.executable, "-c"]
    measures = {
        "kgrag --help": lambda: timed([*KGRAG, "--help"]),
        "kgrag config": lambda: timed([*KGRAG, "config"]),
        "kgrag ask: first plan printed": lambda: first_plan(index_dir),
        # a follow-up is planned from the thread's checkpoint, so its plan waits for LangGraph to load
        "kgrag ask --thread (follow-up): first plan": lambda: first_plan(
            index_dir, "--thread", thread, question="And when was he born?"
        ),
        "import kgrag.studio (LangGraph Server)": lambda: timed([*python, "import kgrag.studio"]),
        "python itself": lambda: timed([*python, "pass"]),
    }
    rows = []
    for name, measure in measures.items():
        measure()  # warm the file cache
        runs = [measure() for _ in range(args.runs)]
        rows.append(
            {
                "measure": name,
                "median_s": round(median(runs), 3),
                "min_s": round(min(runs), 3),
                "max_s": round(max(runs), 3),
            }
        )
    print_table(rows, ["measure", "median_s", "min_s", "max_s"])
    print(f"wrote {write_result('cli_startup', {'runs': args.runs, 'rows': rows})}")


if __name__ == "__main__":
    main()
