"""Where a build's per-chunk work runs: in this process (engine=local) or on Ray actor pools (engine=ray).

An engine only maps: chunks to extractions (``map_extract``), blocks of texts to vectors (``embed``), results in
the order asked. What is done with each result is the same for every engine and lives in one place: the index
(graph_store/index.py) commits extraction rows to the record in batches, the vector store (graph_store/vectors.py)
upserts vector blocks to Chroma. So the record stays the one place of truth: a killed driver or worker loses no
committed batch, and the next run maps only what is not committed.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from graph_store.errors import ConfigError
from graph_store.settings import Settings
from graph_store.vectors import embed_here

Pending = Sequence[tuple[str, str, str]]  # chunks to extract: (chunk id, text, title)


class Engine(Protocol):
    name: str

    def map_extract(self, extractor: Any, pending: Pending) -> Generator[tuple[str, Any]]:
        """(chunk id, ChunkExtraction) for each pending chunk, in order; closing the iterator stops the work."""
        ...

    def embed(self, embedder: Any, blocks: Sequence[list[str]]) -> Iterator[np.ndarray]:
        """The vectors of each block of texts, block by block, in order."""
        ...

    def close(self) -> None:
        """Release what the build held (Ray: its actors, and a Ray instance it started); called after each build."""
        ...


class LocalEngine:
    """This process: a thread pool over the extractor (max_concurrency calls with a model; one thread offline, the
    regexes hold the GIL), the embedder's own sessions (one per core)."""

    name = "local"

    def __init__(self, settings: Settings):
        self.settings = settings

    def map_extract(self, extractor: Any, pending: Pending) -> Generator[tuple[str, Any]]:
        pool = ThreadPoolExecutor(max_workers=self.settings.max_concurrency if extractor.uses_llm else 1)
        try:
            yield from pool.map(lambda row: (row[0], extractor.extract(row[1], row[2])), pending)
        finally:  # stopped early (an endpoint down, an interrupt): no chunk not yet started is extracted
            pool.shutdown(wait=True, cancel_futures=True)

    def embed(self, embedder: Any, blocks: Sequence[list[str]]) -> Iterator[np.ndarray]:
        return embed_here(embedder, blocks)

    def close(self) -> None:
        pass


def make_engine(settings: Settings) -> Engine:
    """The engine the settings ask for; engine=ray without Ray installed is a ConfigError naming the extra (Ray is
    imported now, started or joined on first use)."""
    if settings.engine == "local":
        return LocalEngine(settings)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # Ray would report its usage over the internet
    if not settings.ray_address:  # Ray's own switch (read when it is imported): a local instance on the loopback only
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        from graph_store.ray_engine import RayEngine
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "ray":
            raise
        raise ConfigError("engine=ray needs Ray, which is not installed: pip install 'kgrag[ray]'") from None
    return RayEngine(settings)
