"""What a refresh reuses from the previous generation, so that applying decisions costs a fraction of a rebuild.

Decisions change which names are one entity, not what the documents say: the name resolution of the extractions,
most entity vectors, most synonymy edges and most of the vector export stay as they were. A refresh that is not
forced takes them from the current generation when it was derived by this code, with the same settings and from
the same extractions (``Previous.of``); anything it cannot read is made again from the record. The current
generation is only read: it keeps serving until the next one is published, and a refresh killed meanwhile starts
again from it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from graph_store import generations
from graph_store.errors import IndexStoreError
from graph_store.graph import Resolution, updated_synonym_pairs
from graph_store.store import STORE_ERRORS, Community, Store
from graph_store.vectors import Exported


class Previous:
    """The current generation, as the base of the next one."""

    def __init__(self, generation: generations.Generation, same_extractions: bool):
        self.generation = generation
        self.same_extractions = same_extractions

    @classmethod
    def of(
        cls, current: generations.Generation | None, derivation: int, static_vectors: dict, recipe: dict, record: str
    ) -> Previous | None:
        """``current`` when it can be built on: derived by this code with the same static vectors and settings
        (``recipe``), and whole (its vector files' content too: they are memory-mapped, and a changed byte would be
        copied into the next export unnoticed); ``record``: the record's state without its decisions."""
        if (
            current is None
            or current.derivation != derivation
            or current.static_vectors != static_vectors
            or current.recipe != recipe
            or current.problems()
            or current.problems(full=True, only="vectors")
        ):
            return None
        return cls(current, bool(current.record_state) and current.record_state == record)

    @property
    def folder(self) -> Path:
        """Its folder: the previous export the next one builds on (VectorStore.export)."""
        return self.generation.dir

    def resolution(self) -> Resolution | None:
        """The name resolution it kept, when the extractions have not changed since."""
        path = self.generation.path("resolution.json")
        if not self.same_extractions or not path.exists():
            return None
        try:
            return Resolution.load(path)
        except (OSError, ValueError, KeyError, TypeError):  # damaged: resolved again from the record
            return None

    def communities(self, store: Store) -> list[tuple[Community, list[str]]]:
        """When only decisions changed, its communities that they do not touch, to be kept as they are: every
        level-0 community (with the communities under it) none of whose entities was removed or has a relation
        added, removed or reweighted since. Leiden runs again only on the other entities: the deliberate difference
        from a rebuild, which partitions every entity again (a change elsewhere can move the borders of an untouched
        community there). A change of documents partitions every entity again: a build equals a clean one."""
        if not self.same_extractions:
            return []
        try:
            snapshot = Store.open_snapshot(self.generation.path("snapshot.sqlite"))
            try:
                tree, before = snapshot.community_tree(), set(snapshot.relations())
            finally:
                snapshot.close()
        except (OSError, IndexStoreError, *STORE_ERRORS):
            return []
        touched = {e for r in before ^ set(store.relations()) for e in r[:2]}
        entities = set(store.entity_names())
        kept: set[str] = set()
        found = []
        for community, members in tree:  # coarsest first: a parent before its children
            whole = community.level == 0 and touched.isdisjoint(members) and entities.issuperset(members)
            if whole or community.parent_id in kept:
                kept.add(community.id)
                found.append((community, members))
        return found

    def synonyms(
        self, entities: tuple[list[str], np.ndarray], threshold: float, top_k: int
    ) -> list[tuple[str, str, float]] | None:
        """The synonymy edges of ``entities`` (sorted ids, their vectors) updated from its own; None when too many
        entities changed for an update to pay, or its files cannot be read."""
        try:
            with Exported(self.folder) as exported:
                before = (exported.ids("entities").tolist(), np.array(exported.matrix("entities")))
            snapshot = Store.open_snapshot(self.generation.path("snapshot.sqlite"))
            try:
                pairs = snapshot.synonyms()
            finally:
                snapshot.close()
        except (OSError, ValueError, KeyError, RuntimeError, zipfile.BadZipFile, IndexStoreError, *STORE_ERRORS):
            return None
        if before[1].shape[1:] != entities[1].shape[1:]:
            return None
        return updated_synonym_pairs(before, pairs, entities, threshold, top_k)
