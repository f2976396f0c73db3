"""Derived states as generations: what readers answer from, switched in atomically when complete.

A generation is a folder ``g<n>/`` of the generations folder (``derived/`` in the index directory, or the
``generations_dir`` setting: a folder every machine mounts) holding everything a query reads:
``snapshot.sqlite`` (the record's tables without the extraction payloads, read-only; written and opened by
graph_store/store/), ``graph.*.npy`` + ``graph.json`` (the matrix PPR walks, memory-mapped by readers; a
generation from before them has ``graph.npz``) and ``vectors.<collection>.*`` (each collection's ids, vectors
and, for a large one, its faiss HNSW graph, memory-mapped by readers: graph_store/vectors.py; a generation from
before them has ``vectors.npz``), plus ``generation.json`` with the source state it was derived from, the static
vectors it holds, the index's manifest (so that a process serving from shared generations needs no index
directory) and the size and sha256 of each file. ``CURRENT`` names the complete one; a writer builds the next
generation beside it and replaces CURRENT in one rename, so a reader never sees a half-built state and queries
go on while an index is updated; a reader opening CURRENT after the rename moves to the new one.

In a shared ``generations_dir``, a replaced generation is kept ``generation_grace_seconds`` after it was
replaced, then removed by a later publish: a process on another machine may still answer from it (its files
memory-mapped; a shared mount keeps no deleted file readable for another machine, as a local disk does for the
processes that hold it open). In the index directory, replaced generations are removed at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from graph_store.errors import IndexStoreError
from graph_store.settings import Settings

# The graph (graph_store/graph.py, save_csr): the adjacency's CSR arrays and each node's out-weight (its row sum,
# what PPR divides by), as .npy files that readers memory-map.
CSR_FILES = ("graph.indptr.npy", "graph.indices.npy", "graph.weights.npy", "graph.out_weight.npy")
# snapshot.sqlite: Store.write_snapshot. Every generation has these; publish seals them with every other file the
# build wrote: the vectors (vectors.<collection>.*: graph_store/vectors.py, exported_files) and the name resolution
# of the record's extractions (resolution.json: graph.Resolution), which a refresh applying only decisions reuses.
FILES = ("snapshot.sqlite", *CSR_FILES, "graph.json")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Generation:
    dir: Path
    number: int
    source_state: str
    derivation: int  # the code version that derived it (graph_store.store.DERIVATION_VERSION)
    files: dict[str, dict]  # name -> {"bytes", "sha256"}
    static_vectors: dict[str, dict] = field(default_factory=dict)  # collection -> static embedder identity
    record_state: str = ""  # the record's source state without the decisions (Store.source_state)
    recipe: dict = field(default_factory=dict)  # the settings it was derived with (KnowledgeIndex._recipe)
    manifest: dict = field(default_factory=dict)  # the index's manifest.json as it was published

    def path(self, name: str) -> Path:
        return self.dir / name

    def problems(self, full: bool = False, only: str = "") -> list[str]:
        """What is wrong with its files (those whose name starts with ``only``): missing or resized (always), changed
        content (``full``: hashes)."""
        found = []
        for name, info in self.files.items():
            if not name.startswith(only):
                continue
            path = self.path(name)
            if not path.exists():
                found.append(f"{path} is missing")
            elif path.stat().st_size != info["bytes"]:
                found.append(f"{path} has {path.stat().st_size:,} bytes, {info['bytes']:,} were written")
            elif full and _sha256(path) != info["sha256"]:
                found.append(f"{path} was changed after it was written (checksum differs)")
        return found


def _repair(settings: Settings) -> str:
    where = " on the machine that builds the index" if settings.generations_dir else ""
    return f"run `kgrag repair --index-dir {settings.index_dir}`{where}"


def current(settings: Settings) -> Generation | None:
    """The complete generation readers use, or None when the index has none yet."""
    root = settings.generations_path
    pointer = root / "CURRENT"
    if not pointer.exists():
        return None
    name = pointer.read_text().strip()
    folder = root / name
    try:
        meta = json.loads((folder / "generation.json").read_text())
        return Generation(
            folder,
            int(meta["number"]),
            str(meta["source_state"]),
            int(meta["derivation"]),
            dict(meta["files"]),
            dict(meta.get("static_vectors", {})),
            str(meta.get("record_state", "")),
            dict(meta.get("recipe", {})),
            dict(meta.get("manifest", {})),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexStoreError(
            f"{folder}: the derived state is damaged ({exc.__class__.__name__}); {_repair(settings)}"
        ) from None


def start(settings: Settings) -> Path:
    """A fresh folder for the next generation (leftovers of an interrupted build are removed first)."""
    root = settings.generations_path
    root.mkdir(parents=settings.generations_dir is not None, exist_ok=True)
    for stray in root.glob("*.tmp"):
        shutil.rmtree(stray, ignore_errors=True)
    folder = root / f"{time.time_ns()}.tmp"
    folder.mkdir()
    return folder


def publish(
    settings: Settings,
    folder: Path,
    source_state: str,
    derivation: int,
    static_vectors: dict[str, dict] | None = None,
    record_state: str = "",
    recipe: dict | None = None,
    manifest: dict | None = None,
) -> Generation:
    """Seal a built folder (checksums), make it CURRENT atomically, and remove the generations replaced before (in
    a shared generations_dir: more than ``generation_grace_seconds`` ago)."""
    root = settings.generations_path
    missing = [name for name in FILES if not (folder / name).exists()]
    if missing:
        raise IndexStoreError(f"{folder}: the build wrote no {', '.join(missing)}")
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != "generation.json")
    files = {name: {"bytes": (folder / name).stat().st_size, "sha256": _sha256(folder / name)} for name in names}
    number = max(_numbered(root), default=0) + 1  # never a number a reader may still hold
    (folder / "generation.json").write_text(
        json.dumps(
            {
                "number": number,
                "source_state": source_state,
                "derivation": derivation,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "published": time.time(),
                "static_vectors": static_vectors or {},
                "record_state": record_state,
                "recipe": recipe or {},
                "manifest": manifest or {},
                "files": files,
            },
            indent=2,
        )
    )
    final = root / f"g{number:06d}"
    for name in (*files, "generation.json"):
        _fsync(folder / name)
    folder.rename(final)
    pointer = root / "CURRENT.tmp"
    pointer.write_text(final.name)
    _fsync(pointer)
    os.replace(pointer, root / "CURRENT")  # the switch: readers opening after this see the new state
    _fsync(root)  # the rename itself made durable
    # In the index directory only this machine's processes read, and they keep the files they hold open.
    _remove_replaced(root, final, settings.generation_grace_seconds if settings.generations_dir else 0.0)
    return Generation(
        final, number, source_state, derivation, files, static_vectors or {}, record_state, recipe or {}, manifest or {}
    )


def _numbered(root: Path) -> dict[int, Path]:
    """The generation folders of ``root`` by number."""
    found = {}
    for path in root.iterdir():
        if path.is_dir() and path.name[:1] == "g" and path.name[1:].isdigit():
            found[int(path.name[1:])] = path
    return found


def _published(folder: Path) -> float:
    """When ``folder`` became CURRENT (a generation from before the field: its generation.json's time)."""
    try:
        meta = folder / "generation.json"
        return float(json.loads(meta.read_text()).get("published", meta.stat().st_mtime))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0


def _remove_replaced(root: Path, final: Path, grace: float) -> None:
    """Remove every generation replaced more than ``grace`` seconds ago (replaced when the next one was published),
    and any other folder (an interrupted build's, one left by a repair). Files a process on this machine has open
    stay readable until it closes them."""
    numbered = _numbered(root)
    for path in root.iterdir():
        if path.is_dir() and path != final and path not in numbered.values():
            shutil.rmtree(path, ignore_errors=True)
    deadline = time.time() - grace
    numbers = sorted(numbered)
    for older, newer in zip(numbers, numbers[1:]):
        if numbered[older] != final and _published(numbered[newer]) <= deadline:
            shutil.rmtree(numbered[older], ignore_errors=True)


def _fsync(path: Path) -> None:
    """Flush a file's content, or a folder's entries, to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
