"""engine=ray: a build's map steps on Ray actor pools (graph_store/engine.py says what an engine does).

A build runs on one pool of ``ray_workers`` actors (default: one per CPU), started at its first map step and killed
when it ends: each holds one extractor (with a model, max_concurrency calls at once) and one embedder (the int8
MiniLM on one single-threaded session). One pool, not one per step: starting an actor (a process importing kgrag,
loading the model) costs seconds on a busy machine. The driver sends the actors work in calls of a few chunks or a
few hundred texts, IN_FLIGHT calls queued per actor so none waits for the driver, and takes the results in order;
it alone writes the record and Chroma. Ray core actors rather than a Ray Data pipeline: the same work with less
start-up (benchmarks/RESULTS.md, "Indexing on Ray").

An actor that dies (its machine lost, ``ray.kill``) is restarted and its calls run again, up to RESTARTS times;
they have no side effect, so running one twice changes nothing. Only this module imports Ray.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from functools import partial
from typing import Any

import numpy as np
import ray

from graph_store.errors import ConfigError, UnavailableError
from graph_store.settings import Settings

EXTRACT_CALL = 16  # chunks per call to an extraction actor (offline: milliseconds each, so several per call)
EMBED_CALL = 256  # texts per call to an embedding actor (they come sorted by length: little padding)
IN_FLIGHT = 2  # calls queued per actor
RESTARTS = 3  # times a dead actor is started again (and its calls retried) before the build fails


class Worker:
    """One per CPU, for the whole build: extracts chunks and embeds texts with what each call says how to make, made
    on the first call (a restarted actor makes them again). Its calls run in two groups, so that the chunk vectors
    are embedded while a model answers extraction calls: extraction (max_concurrency model calls at once, through
    one thread pool) and embedding (one call at a time: one single-threaded session per CPU)."""

    def __init__(self):
        self._made: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _get(self, kind: str, make: Callable[[], Any]) -> Any:
        with self._lock:
            if kind not in self._made:
                self._made[kind] = make()
            return self._made[kind]

    @ray.method(concurrency_group="extract")
    def extract(self, make: Callable[[], Any], concurrency: int, rows: list[tuple[str, str, str]]) -> list:
        extractor, pool = self._get("extractor", lambda: (make(), ThreadPoolExecutor(concurrency)))
        return list(pool.map(lambda row: extractor.extract(row[1], row[2]), rows))

    @ray.method(concurrency_group="embed")
    def embed(self, make: Callable[[], Any], texts: list[str]) -> np.ndarray:
        return self._get("embedder", make).embed(texts)


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

    chat = make_chat_client(settings)
    if chat is None:  # (the driver made a model's extractor from the same settings)
        raise ConfigError("extraction with a model needs chat_model")
    return LLMExtractor(chat, settings.gleaning_rounds)


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
        self._workers: list = []  # the build's actors, while they live
        # With a model the chunk vectors are embedded (in a thread of the driver) while the chunks are extracted.
        self._lock = threading.Lock()

    def _pool(self) -> list:
        """The build's actors, started on first use (Ray joined, or a local instance started, first)."""
        with self._lock:
            if not self._workers:
                self._workers = self._start()
            return self._workers

    def _start(self) -> list:
        """Ray joined (or a local instance started), and the build's actors started."""
        if not ray.is_initialized():
            address = self.settings.ray_address
            try:
                ray.init(
                    address=address,
                    include_dashboard=False,
                    logging_level=logging.WARNING,
                    log_to_driver=False,  # the workers' own output (progress bars) is not the build's
                )
            except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError...
                where = f"join the Ray cluster at {address}" if address else "start a local Ray instance"
                reason = (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
                raise UnavailableError(f"cannot {where} (ray_address): {reason}") from None
            self._started = True
        cpus = float(ray.cluster_resources().get("CPU", 1))
        workers = self.settings.ray_workers or max(1, int(cpus))
        options: dict[str, Any] = {  # (a dict: Ray's type stubs do not know concurrency_groups)
            "max_restarts": RESTARTS,
            "max_task_retries": RESTARTS,
            # Asked workers beyond the CPUs share them, rather than wait forever for a CPU no one frees.
            "num_cpus": min(1.0, cpus / workers),
            "concurrency_groups": {"extract": IN_FLIGHT, "embed": 1},
        }
        remote = ray.remote(**options)
        return [remote(Worker).remote() for _ in range(workers)]

    def actors(self) -> list:
        """The build's live actors (tests kill one)."""
        return list(self._workers)

    def map_extract(self, extractor: Any, pending: Sequence[tuple[str, str, str]]) -> Generator[tuple[str, Any]]:
        workers = self._pool()
        make = _portable_extractor(extractor, self.settings)
        concurrency = self.settings.max_concurrency if extractor.uses_llm else 1
        calls = [list(pending[s : s + EXTRACT_CALL]) for s in range(0, len(pending), EXTRACT_CALL)]
        results = _in_order(workers, lambda actor, rows: actor.extract.remote(make, concurrency, rows), calls)
        for rows, extractions in zip(calls, results):
            yield from zip((row[0] for row in rows), extractions)

    def embed(self, embedder: Any, blocks: Sequence[list[str]]) -> Iterator[np.ndarray]:
        if not blocks:  # nothing to embed: no actor started
            return
        workers = self._pool()
        make = _portable_embedder(embedder, self.settings)
        total = sum(len(texts) for texts in blocks)
        # Small builds are spread over every actor too.
        size = max(1, min(EMBED_CALL, math.ceil(total / (IN_FLIGHT * len(workers)))))
        parts = (texts[s : s + size] for texts in blocks for s in range(0, len(texts), size))
        results = _in_order(workers, lambda actor, texts: actor.embed.remote(make, texts), parts)
        for texts in blocks:
            got = [next(results) for _ in range(0, len(texts), size)]
            yield np.vstack(got) if got else embedder.embed([])

    def close(self) -> None:
        """The actors killed, and a Ray instance started for the build stopped (the next build starts again)."""
        with self._lock:
            for actor in self._workers:
                ray.kill(actor)
            self._workers = []
        if self._started:
            ray.shutdown()
            self._started = False
