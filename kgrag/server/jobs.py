"""Documents jobs: each index has one writer that runs its jobs one after another, in the background.

Jobs live in memory, in the service process. The interface (``submit``, ``get``, ``close``) is all the routers
use, so a store that outlives the process can take its place.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from graph_store.errors import KGRagError
from kgrag.api import KGRag
from kgrag.server.deps import public_error

log = logging.getLogger("kgrag.server")


@dataclass
class Job:
    """A documents request, run in the background by the index's single writer."""

    id: str
    index: str
    owner: str
    action: str  # add | delete
    status: str = "queued"  # queued | running | done | failed
    detail: dict = field(default_factory=dict)
    created: float = field(default_factory=time.time)
    finished: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)  # done or failed


class Writers:
    """One writer thread per index: documents jobs to an index run one after another, never interleaved,
    while queries go on answering from the last complete state."""

    def __init__(self):
        self._jobs: dict[str, Job] = {}
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._lock = threading.Lock()

    def submit(self, job: Job, work: Callable[[], dict]) -> Job:
        """Queue ``work`` on the job's index; what it returns is added to the job's detail when it is done."""
        with self._lock:
            self._jobs[job.id] = job
            pool = self._pools.setdefault(job.index, ThreadPoolExecutor(max_workers=1, thread_name_prefix=job.index))

        def run() -> None:
            job.status = "running"
            try:
                job.detail.update(work())
                job.status = "done"
            except Exception as exc:  # noqa: BLE001 - the job's status says why; the trace goes to the log
                if not isinstance(exc, KGRagError):
                    log.exception("documents job %s failed", job.id)
                job.status, job.detail["error"] = "failed", public_error(exc)
            finally:
                job.finished.set()

        pool.submit(run)
        return job

    def get(self, job_id: str) -> Job | None:
        """The job of that id, or None."""
        return self._jobs.get(job_id)

    def close(self) -> None:
        """Wait for the running jobs; queued ones are dropped."""
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)


def insert_work(job: Job, rag: KGRag, records: list[dict]) -> Callable[[], dict]:
    """The work of a job that adds ``records`` to ``rag``: its progress in ``job.detail`` while it runs, then
    the counts."""

    def progress(step: str, done: int, total: int) -> None:
        job.detail["progress"] = {"step": step, "done": done, "total": total}

    def work() -> dict:
        summary = rag.insert(records, progress=progress)
        job.detail.pop("progress", None)
        return {
            "added": summary.added,
            "replaced": summary.replaced,
            "unchanged": summary.unchanged,
            "failed_chunks": summary.stats.get("failed_chunks", 0),
            "notices": summary.notices,
        }

    return work
