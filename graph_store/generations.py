"""Derived states as generations: what readers answer from, switched in atomically when complete.

A generation is a folder ``derived/<n>/`` holding everything a query reads: ``snapshot.sqlite`` (the
record's tables without the extraction payloads, read-only; written and opened by graph_store/store/),
``graph.*.npy`` + ``graph.json`` (the matrix PPR walks, memory-mapped by readers; a generation from before
them has ``graph.npz``) and ``vectors.npz`` (every collection's vectors), plus ``generation.json`` with the
source state it was derived from, the static vectors its vectors.npz holds, and the size and sha256 of each
file. ``derived/CURRENT`` names the complete one; a writer builds the next generation beside it and replaces
CURRENT in one rename, so a reader never sees a half-built state and queries go on while an index is updated.
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

# The graph (graph_store/graph.py, save_csr): the adjacency's CSR arrays and each node's out-weight (its row sum,
# what PPR divides by), as .npy files that readers memory-map.
CSR_FILES = ("graph.indptr.npy", "graph.indices.npy", "graph.weights.npy", "graph.out_weight.npy")
# snapshot.sqlite: Store.write_snapshot
FILES = ("snapshot.sqlite", *CSR_FILES, "graph.json", "vectors.npz")
# Kept when present: the name resolution of the record's extractions (graph.Resolution), which a refresh applying
# only decisions reuses instead of resolving every name again.
OPTIONAL_FILES = ("resolution.json",)


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

    def path(self, name: str) -> Path:
        return self.dir / name

    def problems(self, full: bool = False) -> list[str]:
        """What is wrong with its files: missing or resized (always), changed content (``full``: hashes)."""
        found = []
        for name, info in self.files.items():
            path = self.path(name)
            if not path.exists():
                found.append(f"{path} is missing")
            elif path.stat().st_size != info["bytes"]:
                found.append(f"{path} has {path.stat().st_size:,} bytes, {info['bytes']:,} were written")
            elif full and _sha256(path) != info["sha256"]:
                found.append(f"{path} was changed after it was written (checksum differs)")
        return found


def derived_dir(index_dir: Path) -> Path:
    return index_dir / "derived"


def current(index_dir: Path) -> Generation | None:
    """The complete generation readers use, or None when the index has none yet."""
    pointer = derived_dir(index_dir) / "CURRENT"
    if not pointer.exists():
        return None
    name = pointer.read_text().strip()
    folder = derived_dir(index_dir) / name
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
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexStoreError(
            f"{folder}: the derived state is damaged ({exc.__class__.__name__}); "
            f"run `kgrag repair --index-dir {index_dir}`"
        ) from None


def start(index_dir: Path) -> Path:
    """A fresh folder for the next generation (leftovers of an interrupted build are removed first)."""
    root = derived_dir(index_dir)
    root.mkdir(exist_ok=True)
    for stray in root.glob("*.tmp"):
        shutil.rmtree(stray, ignore_errors=True)
    folder = root / f"{time.time_ns()}.tmp"
    folder.mkdir()
    return folder


def publish(
    index_dir: Path,
    folder: Path,
    source_state: str,
    derivation: int,
    static_vectors: dict[str, dict] | None = None,
    record_state: str = "",
    recipe: dict | None = None,
) -> Generation:
    """Seal a built folder (checksums), make it CURRENT atomically, and remove the older generations."""
    root = derived_dir(index_dir)
    try:
        previous = current(index_dir)
    except IndexStoreError:  # a damaged pointer or generation: this one replaces it
        previous = None
    number = (previous.number + 1) if previous else 1
    names = FILES + tuple(name for name in OPTIONAL_FILES if (folder / name).exists())
    files = {name: {"bytes": (folder / name).stat().st_size, "sha256": _sha256(folder / name)} for name in names}
    (folder / "generation.json").write_text(
        json.dumps(
            {
                "number": number,
                "source_state": source_state,
                "derivation": derivation,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "static_vectors": static_vectors or {},
                "record_state": record_state,
                "recipe": recipe or {},
                "files": files,
            },
            indent=2,
        )
    )
    final = root / f"g{number:06d}"
    if final.exists():
        shutil.rmtree(final)
    for name in (*files, "generation.json"):
        _fsync(folder / name)
    folder.rename(final)
    pointer = root / "CURRENT.tmp"
    pointer.write_text(final.name)
    _fsync(pointer)
    os.replace(pointer, root / "CURRENT")  # the switch: readers opening after this see the new state
    for old in root.iterdir():
        if old.is_dir() and old != final:  # open files of running readers stay readable until closed
            shutil.rmtree(old, ignore_errors=True)
    return Generation(final, number, source_state, derivation, files, static_vectors or {}, record_state, recipe or {})


def _fsync(path: Path) -> None:
    with path.open("rb") as fh:
        os.fsync(fh.fileno())
