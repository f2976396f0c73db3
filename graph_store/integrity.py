"""``kgrag check`` and ``kgrag repair``: find damage in an index, rebuild what is derived, save what can be saved.

What survives what: the system of record (documents, chunks, extractions in index.sqlite) is the only
thing that cannot be rebuilt; the vectors, the derived tables and every generation's files are rebuilt from
it by ``repair``. A damaged record is never recreated silently: ``repair --salvage`` copies the rows that can
still be read into a new record (the damaged file stays beside it) and rebuilds from those.
"""

from __future__ import annotations

import time
from pathlib import Path

from graph_store import generations
from graph_store.errors import IndexStoreError, KGRagError
from graph_store.settings import Settings
from graph_store.store import DERIVATION_VERSION
from graph_store.store.sqlite import create_record, readable_rows, record_file_problems


def check_index(settings: Settings) -> list[str]:
    """Every problem found, one line each (empty when the index is intact)."""
    from graph_store.index import KnowledgeIndex
    from graph_store.manifest import read_manifest, require_index

    folder = Path(settings.index_dir)
    require_index(folder)
    try:
        read_manifest(folder)
    except IndexStoreError as exc:
        return [str(exc)]
    problems = record_file_problems(folder / "index.sqlite")
    if problems:
        counts = {t: len(rows) for t, rows in readable_rows(folder / "index.sqlite").items()}
        return problems + [
            f"readable: {', '.join(f'{n} {t}' for t, n in counts.items())}; "
            f"`kgrag repair --salvage --index-dir {folder}` rebuilds the index from them"
        ]
    try:
        current = generations.current(folder)
    except IndexStoreError as exc:
        current, problems = None, [str(exc)]
    if current is None and not problems:
        problems.append(f"{folder} has no complete derived state: `kgrag index --index-dir {folder}` builds it")
    if current is not None:
        problems += current.problems(full=True)
        if current.derivation != DERIVATION_VERSION:
            problems.append(f"the derived state was built by an older kgrag: `kgrag index --index-dir {folder}`")
    index = KnowledgeIndex(settings, progress=False, create=False)
    try:
        if current is not None and current.static_vectors != index.static_identity():
            problems.append(
                f"the derived state holds static vectors of an older recipe: `kgrag index --index-dir {folder}`"
            )
        problems += index.vector_problems()
        if current is not None and not problems and index.pending_changes(current):
            problems.append(
                "the record holds changes the derived state lacks (a build is running or was "
                f"interrupted): `kgrag index --index-dir {folder}` finishes it"
            )
    finally:
        index.close()
    if problems:
        problems.append(f"`kgrag repair --index-dir {folder}` rebuilds every derived file from the record")
    return problems


def repair_index(settings: Settings, salvage: bool = False, progress: bool = True) -> str:
    """Rebuild the derived state (and the vectors, if they are damaged); salvage a damaged record if asked."""
    from graph_store.index import KnowledgeIndex
    from graph_store.manifest import require_index

    folder = Path(settings.index_dir)
    require_index(folder)
    record = folder / "index.sqlite"
    lines = []
    damage = record_file_problems(record)
    if damage and not salvage:
        raise IndexStoreError(f"{damage[0]}; `kgrag repair --salvage` rebuilds the index from its readable rows")
    if damage:
        rows = readable_rows(record)
        aside = record.with_name(f"index.sqlite.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        record.rename(aside)
        for suffix in ("-wal", "-shm"):
            Path(f"{record}{suffix}").unlink(missing_ok=True)
        documents = {r[0] for r in rows["documents"]}
        chunks = [r for r in rows["chunks"] if r[1] in documents]
        kept = {r[0] for r in chunks}
        create_record(record, rows["documents"], chunks, [r for r in rows["extractions"] if r[0] in kept])
        lines.append(
            f"salvaged {len(documents)} documents and {len(chunks)} chunks into a new record; the damaged "
            f"file is {aside.name}. Documents lost with it must be indexed again from their sources."
        )
    try:
        index = KnowledgeIndex(settings, progress=progress, create=True)
    except KGRagError as exc:
        raise IndexStoreError(f"cannot repair {folder}: {exc}") from None
    try:
        if index.vector_problems():
            index.vectors.reset()
            lines.append("vector collections rebuilt")
        summary = index.refresh(force=True)
    finally:
        index.close()
    lines.append(summary.format())
    return "\n".join(lines)
