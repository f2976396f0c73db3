"""``kgrag check`` and ``kgrag repair``: find damage in an index, rebuild what is derived, save what can be saved.

What survives what: the system of record (documents, chunks, extractions in index.sqlite) is the only
thing that cannot be rebuilt; the vectors, the derived tables, every generation's files and manifest.json (the
record keeps a copy) are rebuilt from it by ``repair``. Every row of the record carries a digest, so damage that
SQLite's own check cannot see (a changed byte of text, text that is not UTF-8, an edit) is found too. A damaged
record is never recreated silently: ``repair --salvage`` copies the rows proven whole into a new record (the
damaged file stays beside it), lists every document it could not recover whole, and remembers them until they are
indexed again. A record that merely cannot be read (permission denied, a full disk) is said so and left alone.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from graph_store import generations
from graph_store.errors import IndexStoreError, KGRagError, UnavailableError, unavailable
from graph_store.settings import Settings
from graph_store.store import DERIVATION_VERSION, STORE_ERRORS, Store
from graph_store.store.sqlite import RecordContent, create_record, read_record, record_file_problems

LISTED = 5  # documents named one per line; the rest are counted


def check_index(settings: Settings) -> list[str]:
    """Every problem found, one line each (empty when the index is intact)."""
    folder = Path(settings.index_dir)
    try:
        content, problems = _postgres_record(settings) if settings.record else _record(folder)
        if problems:
            return problems
        problems = _manifest_problems(folder, content) or _derived_problems(folder, settings)
    except UnavailableError as exc:
        return [str(exc)]
    if content.damaged_reports:
        problems.append(f"{content.damaged_reports} community reports in the record do not match their digests")
    if not content.digests:
        problems.append(
            f"the record was made by an older kgrag and keeps no digests: `kgrag index --index-dir {folder}`"
        )
    if problems:
        problems.append(f"`kgrag repair --index-dir {folder}` rebuilds every derived file from the record")
    return problems + _lost_lines(content, folder)


def _record(folder: Path) -> tuple[RecordContent, list[str]]:
    """The record's content proven whole, and its damage (with what a salvage would keep), if any."""
    from graph_store.manifest import require_index

    record = folder / "index.sqlite"
    if not record.exists():
        require_index(folder)
    problems = record_file_problems(record)
    content = read_record(record) if record.exists() else RecordContent()
    damage = problems + [
        f"document {title or '(title unreadable)'!r} ({doc_id}) is not whole in the record: its row, a chunk or its "
        "text does not match its digest"
        for doc_id, title in list(content.lost.items())[:LISTED]
    ]
    if len(content.lost) > LISTED:
        damage.append(f"and {len(content.lost) - LISTED} more documents not whole")
    if content.damaged_extractions:
        damage.append(f"{content.damaged_extractions} extraction results do not match their digests")
    if damage:
        damage.append(
            f"whole: {content.counts()}; `kgrag repair --salvage --index-dir {folder}` rebuilds the index from them "
            "and lists the documents to index again"
        )
    return content, damage


def _postgres_record(settings: Settings) -> tuple[RecordContent, list[str]]:
    """A record in PostgreSQL: what its rows' digests say (the database checks its own pages), and the meta values a
    check and a repair read. kgrag does not salvage it: the database's backups do."""
    from graph_store.index import LOST_DOCUMENTS, MANIFEST_COPY
    from graph_store.store.postgres import PostgresRecord

    record = PostgresRecord(settings.record or "")
    try:
        problems = record.check(full=True)
        meta = [(key, value) for key in (MANIFEST_COPY, LOST_DOCUMENTS) if (value := record.get_meta(key)) is not None]
    finally:
        record.close()
    if problems:
        problems.append(
            f"restore the record from a backup of its database ({record.where}): kgrag salvages index.sqlite only"
        )
    return RecordContent(meta=meta), problems


def _manifest_problems(folder: Path, content: RecordContent) -> list[str]:
    from graph_store.manifest import read_manifest

    try:
        read_manifest(folder)
    except IndexStoreError as exc:
        if _manifest_copy(content) is None:
            return [str(exc)]
        return [f"{exc}; `kgrag repair --index-dir {folder}` rebuilds it from the copy in the record"]
    return []


def _derived_problems(folder: Path, settings: Settings) -> list[str]:
    """What is wrong with the current generation and the vectors, given a sound record and manifest."""
    from graph_store.index import KnowledgeIndex

    problems: list[str] = []
    try:
        current = generations.current(settings)
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
        problems += _vector_problems(index)
        if current is not None and not problems and index.pending_changes(current):
            problems.append(
                "the record holds changes the derived state lacks (a build is running or was "
                f"interrupted): `kgrag index --index-dir {folder}` finishes it"
            )
    finally:
        index.close()
    return problems


def _vector_problems(index) -> list[str]:
    try:
        return index.vector_problems()
    except KGRagError:
        raise
    except Exception as exc:  # noqa: BLE001 - Chroma's own errors: what it says is the problem
        problem = unavailable(index.dir / "chroma", exc, "open the vectors in")
        if problem is not None:
            raise problem from None
        return [f"the vector store cannot be read ({exc.__class__.__name__}: {exc})"]


def _lost_lines(content: RecordContent, folder: Path) -> list[str]:
    lost = _lost_marks(content)
    if not lost:
        return []
    lines = [f"lost by a salvage, not indexed again: {label}" for label in list(lost.values())[:LISTED]]
    if len(lost) > LISTED:
        lines.append(f"and {len(lost) - LISTED} more documents lost by a salvage")
    return lines + [
        f"`kgrag index PATH --index-dir {folder}` adds them again from their sources; `kgrag delete ID` forgets one"
    ]


def _lost_marks(content: RecordContent) -> dict[str, str]:
    from graph_store.index import LOST_DOCUMENTS

    try:
        marks = json.loads(dict(content.meta).get(LOST_DOCUMENTS) or "{}")
    except ValueError:
        return {}
    return marks if isinstance(marks, dict) else {}


def _manifest_copy(content: RecordContent) -> dict | None:
    from graph_store.index import MANIFEST_COPY

    try:
        manifest = json.loads(dict(content.meta).get(MANIFEST_COPY) or "null")
    except ValueError:
        return None
    return manifest if isinstance(manifest, dict) and "embedder" in manifest else None


def repair_index(settings: Settings, salvage: bool = False, progress: bool = True) -> str:
    """Rebuild the derived state (and the vectors, if they are damaged, and manifest.json from the record's copy);
    salvage a damaged record if asked. A record that cannot be read is refused, never salvaged."""
    from graph_store.index import KnowledgeIndex

    folder = Path(settings.index_dir)
    # UnavailableError (permission, disk full, a server not reached): nothing is touched
    content, damage = _postgres_record(settings) if settings.record else _record(folder)
    lines = _restore_manifest(folder, content)
    if damage and settings.record:
        raise IndexStoreError(f"{damage[0]}; {damage[-1]}")
    if damage and not salvage:
        raise IndexStoreError(f"{damage[0]}; `kgrag repair --salvage` rebuilds the index from its whole rows")
    if damage:
        lines += _salvage(settings, content)
    try:
        index = KnowledgeIndex(settings, progress=progress, create=True)
    except UnavailableError:
        raise
    except KGRagError as exc:
        raise IndexStoreError(f"cannot repair {folder}: {exc}") from None
    try:
        if content.damaged_reports and not damage:
            index.store.replace_communities([])  # and with them every report: they are written again
            lines.append(f"{content.damaged_reports} damaged community reports written again")
        if index.vector_problems():
            index.vectors.reset()
            lines.append("vector collections rebuilt")
        summary = index.refresh(force=True)
    finally:
        index.close()
    lines.append(summary.format())
    return "\n".join(lines)


def _restore_manifest(folder: Path, content: RecordContent) -> list[str]:
    """manifest.json written again from the record's copy when it is missing or damaged."""
    from graph_store.manifest import read_manifest

    try:
        read_manifest(folder)
        return []
    except IndexStoreError as exc:
        copy = _manifest_copy(content)
        if copy is None:
            raise IndexStoreError(f"{exc}; the record keeps no copy of it (made by an older kgrag)") from None
    tmp = folder / "manifest.json.tmp"
    tmp.write_text(json.dumps(copy, indent=2))
    tmp.replace(folder / "manifest.json")
    return ["manifest.json rebuilt from the copy in the record"]


def _salvage(settings: Settings, content: RecordContent) -> list[str]:
    """Move the damaged record aside and write a new one from its whole rows; the documents left out are listed
    and remembered (``kgrag check`` names them until they are indexed again)."""
    from graph_store.index import LOST_DOCUMENTS

    record = Path(settings.index_dir) / "index.sqlite"
    lost = _left_out(settings, content)
    marks = {**_lost_marks(content), **lost}
    content.meta = [r for r in content.meta if r[0] != LOST_DOCUMENTS] + [(LOST_DOCUMENTS, json.dumps(marks))]
    aside = record.with_name(f"index.sqlite.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    if record.exists():
        record.rename(aside)
    for suffix in ("-wal", "-shm"):
        Path(f"{record}{suffix}").unlink(missing_ok=True)
    create_record(record, content)
    lines = [
        f"salvaged {len(content.documents)} documents and {len(content.chunks)} chunks into a new record"
        + (f"; the damaged file is {aside.name}" if aside.exists() else "")
    ]
    if content.damaged_extractions:
        lines.append(f"{content.damaged_extractions} damaged extraction results are made again")
    if lost:
        lines.append(
            f"{len(lost)} documents could not be recovered whole and were left out; index them again from their "
            f"sources (`kgrag index PATH --index-dir {settings.index_dir}`; `kgrag check` lists them until then):"
        )
        lines += [f"  {label}" for label in lost.values()]
    return lines


def _left_out(settings: Settings, content: RecordContent) -> dict[str, str]:
    """id -> "title (source) [id]" of the documents a salvage leaves out: not whole in the record, or in the last
    build and gone from the record (a delete not finished yet excepted)."""
    built = _built_documents(settings)
    kept = {d[0] for d in content.documents}
    left = {doc_id: built.get(doc_id, (title or "(title unreadable)", "")) for doc_id, title in content.lost.items()}
    for doc_id, title_source in built.items():
        if doc_id not in kept and doc_id not in content.pending_deletes:
            left.setdefault(doc_id, title_source)
    return {
        doc_id: f"{title}" + (f" ({source})" if source else "") + f" [id {doc_id}]"
        for doc_id, (title, source) in left.items()
    }


def _built_documents(settings: Settings) -> dict[str, tuple[str, str]]:
    """id -> (title, source) of the documents in the current generation's snapshot (empty when it cannot be read)."""
    try:
        current = generations.current(settings)
        if current is None or current.problems(full=True):
            return {}
        snapshot = Store.open_snapshot(current.path("snapshot.sqlite"))
        try:
            return {doc_id: (title, source) for doc_id, title, source in snapshot.documents()}
        finally:
            snapshot.close()
    except (IndexStoreError, OSError, *STORE_ERRORS):
        return {}
