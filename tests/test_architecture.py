"""The architecture, checked from the code: imports run one way (doors -> agent -> graph_store -> prompts) with
no cycle between files, SQL only in the store, no function above the complexity limit but the listed ones."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["kgrag", "agent", "graph_store", "prompts"]  # each may import itself and the ones after it


def _modules() -> dict[str, Path]:
    found = {}
    for package in LAYERS:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in the file, not only at the top; not the imports made
    for the type checker only)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        found: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or _type_checking_only(node, parents):
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:  # relative: from the importing package
                    package = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                    base = ".".join(package + ([base] if base else []))
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            found.update(t for t in targets if t in modules and t != name)
        graph[name] = found
    return graph


def test_imports_run_one_way_doors_agent_graph_store_prompts():
    wrong = []
    for module, targets in imports().items():
        layer = LAYERS.index(module.split(".")[0])
        wrong += [f"{module} imports {t}" for t in targets if LAYERS.index(t.split(".")[0]) < layer]
    assert not wrong, "imports against the layers (kgrag -> agent -> graph_store -> prompts):\n" + "\n".join(wrong)


def test_no_import_cycle_between_files():
    graph = imports()
    cycles, state, path = [], {}, []

    def visit(module: str) -> None:
        state[module] = "open"
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(" -> ".join(path[path.index(target) :] + [target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_index_loads_no_model_library_and_no_plotting():
    """`kgrag stats`, `kgrag entities` and an offline build import the index: LangChain's chat models (~1 s) load
    only where a model is called, and igraph's drawing (matplotlib, ~0.7 s) never."""
    code = "import sys, graph_store.index, graph_store.communities; print(sorted(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "'graph_store.communities'" in loaded
    assert "'langchain_core.language_models'" not in loaded and "'matplotlib'" not in loaded


# Functions allowed above the complexity limit, each with its reason.
COMPLEX = {
    "agent.offline.reader.combine": "one branch per operation (compare, choose, both, same, yes_no)",
}
MAX_COMPLEXITY = 25


def test_no_function_above_the_complexity_limit_outside_the_documented_list():
    from radon.complexity import cc_visit

    found = {}
    for module, path in _modules().items():
        for block in cc_visit(path.read_text(encoding="utf-8")):
            name = f"{module}.{block.classname + '.' if getattr(block, 'classname', None) else ''}{block.name}"
            if block.complexity > MAX_COMPLEXITY:
                found[name] = block.complexity
    over = {name: c for name, c in found.items() if name not in COMPLEX}
    assert not over, f"functions above {MAX_COMPLEXITY} in cyclomatic complexity: {over}"
    stale = sorted(set(COMPLEX) - set(found))
    assert not stale, f"no longer above the limit, take them off the list: {stale}"


STORE = ROOT / "graph_store" / "store"  # the one place SQL is written (graph_store/store/base.py says why)
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE FROM|CREATE TABLE|PRAGMA|ATTACH)\b")
EXECUTE = {"execute", "executemany", "executescript"}


def sql_outside_the_store() -> list[str]:
    """file:line of every SQL string and every execute call in agent/, graph_store/ and kgrag/, except in the
    store package and in caches (the LLM response cache keeps its own SQLite file)."""
    found = []
    for package in ("agent", "graph_store", "kgrag"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.is_relative_to(STORE) or "cache" in path.stem:
                continue
            where = path.relative_to(ROOT)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and (match := SQL.search(node.value)):
                    found.append(f"{where}:{node.lineno}: SQL in a string: {match.group()}")
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE:
                    found.append(f"{where}:{node.lineno}: .{node.func.attr}() call")
    return found


def test_no_sql_outside_the_store():
    found = sql_outside_the_store()
    assert not found, "SQL outside graph_store/store/ (add a store method instead):\n" + "\n".join(found)
