"""engine=ray: a build's map steps on Ray actor pools (graph_store/engine.py says what an engine does).

Extraction runs on a pool of ``ray_workers`` actors, each holding one extractor (with a model, each runs
max_concurrency calls at once); embedding on a pool of actors each holding one embedder (the int8 MiniLM on one
single-threaded session). The driver sends them work in calls of a few chunks or a few hundred texts, IN_FLIGHT
calls queued per actor so none waits for the driver, and takes the results in order; it alone writes the record
and Chroma. Ray core actors rather than a Ray Data pipeline: the same pools with a second less of start-up
(benchmarks/RESULTS.md, "Indexing on Ray").

An actor that dies (its machine lost, ``ray.kill``) is restarted and its calls run again, up to RESTARTS times;
they have no side effect, so running one twice changes nothing. Only this module imports Ray.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from functools import partial
from typing import Any

import numpy as np
import ray

from graph_store.errors import UnavailableError
from graph_store.settings import Settings

EXTRACT_CALL = 16  # chunks per call to an extraction actor (offline: milliseconds each, so several per call)
EMBED_CALL = 256  # texts per call to an embedding actor (they come sorted by length: little padding)
IN_FLIGHT = 2  # calls queued per actor
RESTARTS = 3  # times a dead actor is started again (and its calls retried) before the build fails


class ExtractWorker:
    def __init__(self, make: Callable[[], Any], concurrency: int):
        self.extractor = make()
        self.pool = ThreadPoolExecutor(concurrency)

    def extract(self, rows: list[tuple[str, str, str]]) -> list:
        return list(self.pool.map(lambda row: self.extractor.extract(row[1], row[2]), rows))


class EmbedWorker:
    def __init__(self, make: Callable[[], Any]):
        self.embedder = make()

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)


def _portable_embedder(embedder: Any, settings: Settings) -> Callable[[], Any]:
    """How an actor makes the same embedder: the offline model is loaded there on one session (one actor per core),
    an endpoint's client made from the settings; another embedder object is shipped as it is (it must pickle)."""
    from graph_store.embeddings import MiniLMEmbedder, OpenAIEmbedder

    if isinstance(embedder, MiniLMEmbedder):
        return partial(MiniLMEmbedder, embedder.batch_tokens, embedder.max_batch, 1, embedder.cache)
    if isinstance(embedder, OpenAIEmbedder):
        return partial(OpenAIEmbedder, settings)
    return partial(_same, embedder)


def _portable_extractor(extractor: Any, settings: Settings) -> Callable[[], Any]:
    """How an actor makes the same extractor: a model's from the settings (its own client, the same response cache
    file), another one shipped as it is."""
    from graph_store.extraction import LLMExtractor

    if isinstance(extractor, LLMExtractor):
        return partial(_model_extractor, settings)
    return partial(_same, extractor)


def _same(thing: Any) -> Any:
    return thing


def _model_extractor(settings: Settings) -> Any:
    from graph_store.extraction import LLMExtractor
    from graph_store.llm import make_chat_client

    return LLMExtractor(make_chat_client(settings), settings.gleaning_rounds)


def _in_order(actors: list, call: Callable[[Any, Any], Any], items: Iterable) -> Iterator:
    """``call(actor, item)`` (an ObjectRef) for every item, IN_FLIGHT per actor at most; the results in order. An
    actor gets its next item when its oldest call is taken."""
    items = iter(items)
    queue: deque = deque()

    def submit(actor) -> None:
        for item in items:
            queue.append((actor, call(actor, item)))
            return

    for actor in actors * IN_FLIGHT:
        submit(actor)
    try:
        while queue:
            actor, ref = queue[0]
            try:
                result = ray.get(ref)
            except ray.exceptions.RayActorError as exc:  # restarted RESTARTS times, or lost with its node
                raise UnavailableError(
                    f"a Ray worker of the build died and could not be restarted ({exc.__class__.__name__}); what "
                    "was committed is kept: run `kgrag index` again to continue"
                ) from None
            queue.popleft()
            submit(actor)
            yield result
    finally:
        for _, ref in queue:  # stopped early: the calls not taken are not run
            with suppress(Exception):  # (a call already finished, an actor already gone)
                ray.cancel(ref)


class RayEngine:
    name = "ray"

    def __init__(self, settings: Settings):
        self.settings = settings
        self._started = False  # this engine started Ray (and shuts it down)
        self._pools: dict[str, list] = {}  # "extract" / "embed" -> its actors, while they live

    def _connect(self) -> tuple[int, float]:
        """Ray joined (or a local instance started); the actors per pool and the CPUs each asks for."""
        if not ray.is_initialized():
            ray.init(
                address=self.settings.ray_address,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,  # the workers' own output (progress bars) is not the build's
            )
            self._started = True
        cpus = float(ray.cluster_resources().get("CPU", 1))
        workers = self.settings.ray_workers or max(1, int(cpus))
        # Asked workers beyond the CPUs share them, rather than wait forever for a CPU no one frees.
        return workers, min(1.0, cpus / workers)

    def actors(self, pool: str) -> list:
        """The live actors of a pool ("extract" or "embed"): tests kill one."""
        return list(self._pools.get(pool, []))

    def map_extract(self, extractor: Any, pending: Sequence[tuple[str, str, str]]) -> Iterator[tuple[str, Any]]:
        workers, cpus = self._connect()
        make = _portable_extractor(extractor, self.settings)
        concurrency = self.settings.max_concurrency if extractor.uses_llm else 1
        # With a model the actors wait on the endpoint: they take no CPU from the embedding actors beside them.
        remote = ray.remote(
            max_restarts=RESTARTS, max_task_retries=RESTARTS, num_cpus=0 if extractor.uses_llm else cpus
        )
        actors = [remote(ExtractWorker).remote(make, concurrency) for _ in range(workers)]
        self._pools["extract"] = actors
        calls = [list(pending[s : s + EXTRACT_CALL]) for s in range(0, len(pending), EXTRACT_CALL)]
        try:
            results = _in_order(actors, lambda actor, rows: actor.extract.remote(rows), calls)
            for rows, extractions in zip(calls, results):
                yield from zip((row[0] for row in rows), extractions)
        finally:
            self._release("extract")

    def embed(self, embedder: Any, blocks: Sequence[list[str]]) -> Iterator[np.ndarray]:
        if not blocks:  # nothing to embed: no actor started
            return
        if "embed" not in self._pools:  # one pool for every collection of the build (loading the model takes a second)
            workers, cpus = self._connect()
            remote = ray.remote(max_restarts=RESTARTS, max_task_retries=RESTARTS, num_cpus=cpus)
            make = _portable_embedder(embedder, self.settings)
            self._pools["embed"] = [remote(EmbedWorker).remote(make) for _ in range(workers)]
        actors = self._pools["embed"]
        total = sum(len(texts) for texts in blocks)
        # Small builds are spread over every actor too.
        size = max(1, min(EMBED_CALL, math.ceil(total / (IN_FLIGHT * len(actors)))))
        parts = (texts[s : s + size] for texts in blocks for s in range(0, len(texts), size))
        results = _in_order(actors, lambda actor, texts: actor.embed.remote(texts), parts)
        for texts in blocks:
            got = [next(results) for _ in range(0, len(texts), size)]
            yield np.vstack(got) if got else embedder.embed([])

    def _release(self, pool: str) -> None:
        for actor in self._pools.pop(pool, []):
            ray.kill(actor)

    def close(self) -> None:
        """The actors killed, and a Ray instance started for the build stopped (the next build starts again)."""
        for pool in list(self._pools):
            self._release(pool)
        if self._started:
            ray.shutdown()
            self._started = False
