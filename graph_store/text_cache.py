"""A least-recently-used cache of values computed from texts, shared by the query-time caches: the reader's spaCy
parses (agent/offline/parsing.py) and the embedder's vectors (embeddings.RememberingEmbedder)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")


class TextCache(Generic[V]):
    """The values of the ``size`` texts used most recently (thread-safe). ``get_all`` computes the others in one
    call of ``make``, outside the lock, each distinct text once."""

    def __init__(self, size: int):
        self.size = size
        self._kept: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_all(self, texts: Sequence[str], make: Callable[[list[str]], Iterable[V]]) -> list[V]:
        """The value of each of ``texts``, in order; ``make(texts)`` gives the values of texts not kept, in order."""
        with self._lock:
            found = {t: self._kept[t] for t in texts if t in self._kept}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, make(missing), strict=True))
        with self._lock:
            for text in dict.fromkeys(texts):  # all of them are the most recently used now
                self._kept[text] = found[text]
                self._kept.move_to_end(text)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return [found[t] for t in texts]
