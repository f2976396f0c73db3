"""What an index's store does, as two interfaces: the record and the graph tables.

The *record* (``Record``) is the system of record: documents, their chunks, each chunk's extraction result,
a few meta values and the deletes not yet derived. It is the only state that cannot be rebuilt, and the part
that a backend shared by several machines (PostgreSQL, in a later change) would hold for all of them.

The *graph tables* (``GraphTables``) are derived from the record by a build: entities, mentions, facts and
their sources, relations, synonyms, communities with their members, and reports. A build rebuilds them,
then copies them with the documents and chunks into a generation's read-only snapshot; queries read that
snapshot through ``GraphReader`` (a subset of ``GraphTables``), never the tables being rebuilt.

Today one SQLite class (graph_store/store/sqlite.py) implements both on index.sqlite, and ``GraphReader`` on
a generation's snapshot.sqlite. A second backend implements ``Record`` (and ``GraphTables``, or leaves the
graph tables in a local SQLite file) with the same transaction boundaries: every write method here is one
transaction, so a build killed at any point re-runs to the same content. Methods take and return plain
values (tuples in the column order their docstrings give, dicts, the named tuples and dataclasses below);
no caller sees a connection, a cursor or SQL.
"""

from __future__ import annotations

from typing import Protocol


class Record(Protocol):
    """The system of record: documents, chunks, extractions, meta, pending deletes."""

    def source_state(self, derivation: int) -> str:
        """A hash of the derivation version and everything the graph tables are derived from."""

    def check(self, full: bool = False) -> list[str]:
        """Problems the backend finds in its own storage (empty when it is sound)."""

    def close(self) -> None:
        """Release the connection."""
