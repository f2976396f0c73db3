"""Rules about where code lives, checked on the source."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agent", "graph_store", "kgrag")
STORE = ROOT / "graph_store" / "store"  # the one place SQL is written (graph_store/store/base.py says why)
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE FROM|CREATE TABLE|PRAGMA|ATTACH)\b")
EXECUTE = {"execute", "executemany", "executescript"}


def sql_outside_the_store() -> list[str]:
    """file:line of every SQL string and every execute call in agent/, graph_store/ and kgrag/, except in the
    store package and in caches (the LLM response cache keeps its own SQLite file)."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.is_relative_to(STORE) or "cache" in path.stem:
                continue
            where = path.relative_to(ROOT)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
                    found.append(f"{where}:{node.lineno}: SQL in a string: {SQL.search(node.value).group()}")
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE:
                    found.append(f"{where}:{node.lineno}: .{node.func.attr}() call")
    return found


def test_no_sql_outside_the_store():
    found = sql_outside_the_store()
    assert not found, "SQL outside graph_store/store/ (add a store method instead):\n" + "\n".join(found)
