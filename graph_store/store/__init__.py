"""The index's store: the system of record and the tables derived from it, behind one interface.

``base`` says what a store does; ``sqlite`` is the SQLite store every index uses (index.sqlite, and each
generation's read-only snapshot.sqlite); ``postgres`` keeps the record in PostgreSQL instead (setting ``record``;
imported only then: psycopg is optional). SQL is written in this package only.
"""

from pathlib import Path

from graph_store.store.base import (
    UNFINISHED,
    Alias,
    ChunkRow,
    Community,
    Decision,
    DocumentRow,
    Entity,
    ExtractionRow,
    Fact,
    GraphReader,
    GraphTables,
    Job,
    Proposal,
    Record,
    Relation,
    Report,
)
from graph_store.store.sqlite import CONTENT_TABLES, DERIVED_TABLES, RECORD_TABLES, SCHEMA, Store, damaged_record
from graph_store.store.sqlite import ERRORS as STORE_ERRORS  # what reading a damaged store raises


def open_store(record: str | None, path: Path, read_only: bool = False) -> Store:
    """An index's store, as the ``record`` setting says: the record in index.sqlite at ``path`` (unset), or in the
    PostgreSQL database at ``record`` with the graph tables at ``path``. ``read_only``: for readers (nothing
    written to ``path``)."""
    if record:
        from graph_store.store.postgres import open_shared_record

        return open_shared_record(record, path, read_only)
    return Store.open_read_only(path) if read_only else Store(path)


def record_location(url: str | None) -> str:
    """Where an index's record lives, as its manifest names it: index.sqlite, or the PostgreSQL server and database
    (no credentials: the manifest can be shown)."""
    if not url:
        return "index.sqlite"
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


SCHEMA_VERSION = 1
# Bump when what is derived from the record changes (graph tables, the generation's files):
# an index derived by an older version is refreshed by the next `kgrag index`.
# 4: static vectors (entities and reports by default) computed at export, synonymy in their space.
# 5: entity resolution: merged entities with their aliases, proposed merges.
# Read as graph_store.store.DERIVATION_VERSION when used (tests set it to play an upgrade).
DERIVATION_VERSION = 5

__all__ = [
    "Alias",
    "CONTENT_TABLES",
    "ChunkRow",
    "Community",
    "DERIVATION_VERSION",
    "DERIVED_TABLES",
    "Decision",
    "DocumentRow",
    "Entity",
    "ExtractionRow",
    "Fact",
    "GraphReader",
    "GraphTables",
    "Job",
    "RECORD_TABLES",
    "Proposal",
    "Record",
    "Relation",
    "Report",
    "SCHEMA",
    "SCHEMA_VERSION",
    "STORE_ERRORS",
    "Store",
    "UNFINISHED",
    "damaged_record",
    "open_store",
    "record_location",
]
